"""YAML as the original ratification tools write it, by formatting strings, read as they meant
it where YAML alone reads it otherwise. A text field whose plain scalar YAML resolves to a
constant is the text written: fleet-ratify's ``objection: no`` is the word, not false, and a
topic ``2026`` is a slug, not a number. And the few values those tools write on a line of
their own that YAML cannot take plain (``: `` inside) are read quoted, only on the lines those
tools write them, and only when the file as written is no YAML."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

import yaml

from athenaeum.aggregates.rules import Invalid
from athenaeum.services.importing.findings import Findings
from athenaeum.services.importing.yaml_lines import Located, Path, Unparsable, located

TextFields = frozenset[tuple[str, ...]]  # each field's keys, list positions left out: ("roster",) is every item

# dancer's ``init --mode ratify`` leaves the sha for the initiator to compute and write in.
SHA_PLACEHOLDER = "<run: shasum -a 256 artifact.md>"
UNFILLED_SHA = re.compile(rf"(?m)^(artifact_sha256: )({re.escape(SHA_PLACEHOLDER)})$")
# fleet-ratify's ``vote <topic> dissent --reason R`` writes R as given, under its one atom.
FLEET_RATIFY_OBJECTION = re.compile(r'(?m)^(      anchor: "entire document"\n    objection: )(.+)$')

_Composer = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ABSENT = object()


def mapping(text: str, name: str, findings: Findings, fields: TextFields = frozenset(),
            unquoted: re.Pattern[str] | None = None) -> Located | None:
    """The YAML mapping file ``name`` holds, read as written (see ``located_as_written``);
    None when it holds none, which is a finding."""
    try:
        found = located_as_written(text, fields, unquoted)
    except Unparsable as error:
        findings.add(Invalid.code, name, error.line, str(error))
        return None
    if not isinstance(found.value, dict):
        findings.add(Invalid.code, name, 1, "not a YAML mapping")
        return None
    return found


def located_as_written(text: str, fields: TextFields, unquoted: re.Pattern[str] | None = None) -> Located:
    """``text`` read as ``located`` reads it (raising ``Unparsable`` as it does), with the
    values at ``fields`` read as text, and the values ``unquoted`` matches read quoted when
    the file as written is no YAML."""
    try:
        found = located(text)
    except Unparsable as error:
        requoted, count = unquoted.subn(_quoted, text) if unquoted is not None else (text, 0)
        if not count:
            raise
        try:
            found, text = located(requoted), requoted
        except Unparsable:
            raise error from None
    stray = [path for path in found.lines if _keys(path) in fields and _constant(_at(found.value, path))]
    if stray:  # rare: composed only then
        root = yaml.compose(text, Loader=_Composer)
        for path in stray:
            node = _node(root, path)
            if isinstance(node, yaml.ScalarNode) and node.value:  # (an empty one says no text at all)
                _set(found.value, path, node.value)
    return found


def one_of(value: Any, choices: type[Enum]) -> bool:
    """Whether ``value`` names one of ``choices`` (a list or a map where one is written names none)."""
    return isinstance(value, str) and value in {choice.value for choice in choices}


def _quoted(match: re.Match[str]) -> str:
    return match[1] + "'" + match[2].replace("'", "''") + "'"  # YAML's single quotes: each ' doubled


def _keys(path: Path) -> tuple[str, ...]:
    return tuple(part for part in path if isinstance(part, str))


def _constant(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float)


def _at(value: Any, path: Path) -> Any:
    for part in path:
        if isinstance(value, dict) and part in value or isinstance(value, list) and isinstance(part, int):
            value = value[part]
        else:
            return _ABSENT
    return value


def _set(value: Any, path: Path, text: str) -> None:
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = text


def _node(node: yaml.Node, path: Path) -> yaml.Node | None:
    for part in path:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
        if node is None:
            return None
    return node
