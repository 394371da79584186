"""What the CLI prints for people: rows as an aligned table on a terminal (``rich``, which keeps
to ``NO_COLOR``), tab-separated lines when piped (for ``cut`` and ``awk``, as ``gh`` does),
and a record's fields one to a line, lists one item to a line."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table


# What an agent writes (an objection, a page, a reason) may hold control characters: on a
# terminal, an escape sequence would be the terminal's to obey (hide a line, rewrite a status,
# set the clipboard), so they are shown escaped, as repr shows them; a tab and a newline stay.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code not in (0x09, 0x0A)}


def shown(text: str, stream: TextIO | None = None) -> str:
    """``text`` as written to ``stream`` (standard output by default): on a terminal its control
    characters escaped; piped or redirected, exactly as it is."""
    return text.translate(_CONTROLS) if (stream or sys.stdout).isatty() else text


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[_cell(value) for value in row] for row in rows]
    if not sys.stdout.isatty():
        for row in cells:
            print("\t".join(row))
        return
    shown = Table(*columns, box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    for row in cells:
        shown.add_row(*row)
    Console(markup=False).print(shown)  # a title holding [link=...] is text, not a hyperlink to draw


def record(document: dict[str, Any], indent: int = 0) -> None:
    """A record's fields, aligned; a list one item to a line, a mapping nested."""
    width = max((len(key) for key in document), default=0)
    pad = " " * indent
    for key, value in document.items():
        if isinstance(value, dict) and value:
            print(f"{pad}{key}:")
            record(value, indent + 2)
        elif isinstance(value, list) and value:
            print(f"{pad}{key}:")
            for item in value:
                if isinstance(item, dict):
                    print(f"{pad}  - " + ", ".join(f"{k}={_cell(v)}" for k, v in item.items()))
                else:
                    print(f"{pad}  - {_cell(item)}")
        else:
            print(f"{pad}{key:<{width}}  {_cell(value)}")


def _cell(value: Any) -> str:
    if value is None or value == [] or value == {}:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return " ".join(f"{key}={_cell(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(_cell(item) for item in value)
    return shown(str(value))
