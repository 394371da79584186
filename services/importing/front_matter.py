"""Markdown with YAML front matter (``---`` ... ``---``), as the wiki's files are written: the
front matter read with its lines counted from the file's first, and the body after it."""

from __future__ import annotations

from typing import NamedTuple

from athenaeum.services.importing.yaml_lines import Located, located

FENCE = "---"
BOM = "\ufeff"


class Document(NamedTuple):
    front: Located  # lines are the file's
    body: str


def split(text: str) -> Document | None:
    """The document; None when the file opens with no front matter. Raises ``Unparsable``."""
    lines = text.split("\n")
    if lines[0].lstrip(BOM).strip() != FENCE:  # (a BOM some editors write first is no character of it)
        return None
    for end, line in enumerate(lines):
        if end and line.strip() == FENCE:
            break
    else:
        return None
    front = located("\n".join(lines[1:end]))
    shifted = {path: line + 1 for path, line in front.lines.items()}  # the opening fence is line 1
    return Document(Located(front.value, shifted), "\n".join(lines[end + 1:]).lstrip("\n"))
