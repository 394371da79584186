"""For each thing ``check`` says waits on an agent, the command that acts on it, ready to run
(or to fill in where only the agent can say: its evaluation, its reasons)."""

from __future__ import annotations

import shlex
from typing import Any

_COMMANDS = {
    ("ratification", "vote"): "ratify vote {id} --sha256 {sha256} --sign",
    ("ratification", "decide"): "ratify decide {id} --decision accept-split",
    ("ratification", "split"): "ratify split {id} --atom A1 --into 'SECTION::ANCHOR::OBJECTION'",
    ("quorum", "vote"): "quorum ack {id}",
    ("quorum", "tiebreak"): "quorum tiebreak {id} --decision accept",
    ("thread", "contribute"): "thread contribute {id} --eval N,C,R --body '...'",
    ("thread", "recognize"): "thread recognize {id}",
    ("page", "review"): "page read {id} --session S1",
    ("page", "resolve"): "page resolve {id} --agent AGENT --decision '...' --thread SLUG",
    ("page", "approve"): "page approve {id} --level canonical",
}


_VERB_GROUPS = {"ratification": "ratify"}  # where a kind's CLI verbs are, when not under its own name


class _Quoted(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return f"<{key}>"  # not known here: the reader fills it in


def command_for(item: dict[str, Any], agent: str) -> str:
    """The command line that acts on ``item`` as ``agent``."""
    template = _COMMANDS.get((item["kind"], item["action"]))
    if template is None:
        return f"athenaeum {_VERB_GROUPS.get(item['kind'], item['kind'])} show {shlex.quote(item['id'])}"
    quoted = _Quoted({key: shlex.quote(str(value)) for key, value in item.items() if value is not None})
    return f"athenaeum {template.format_map(quoted)} --as {agent}"
