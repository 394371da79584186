"""A small, deterministic YAML writer for the records: block mappings and lists, strings
quoted (as JSON, which YAML reads) unless plainly safe."""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@:+-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "~"}


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    plain = _PLAIN.match(text) and text.lower() not in _RESERVED and not _numeric(text)
    return text if plain else json.dumps(text, ensure_ascii=False)


def dump(value: dict[str, Any]) -> str:
    return "".join(line + "\n" for line in _mapping(value, 0))


def _mapping(value: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for key, item in value.items():
        if isinstance(item, dict) and item:
            lines += [f"{pad}{key}:", *_mapping(item, indent + 2)]
        elif isinstance(item, list | tuple) and item:
            lines += [f"{pad}{key}:", *_sequence(list(item), indent + 2)]
        else:
            empty = "{}" if isinstance(item, dict) else "[]" if isinstance(item, list | tuple) else scalar(item)
            lines.append(f"{pad}{key}: {empty}")
    return lines


def _sequence(items: list[Any], indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for item in items:
        if isinstance(item, dict) and item:
            nested = _mapping(item, indent + 2)
            lines += [f"{pad}- {nested[0].lstrip()}", *nested[1:]]
        else:
            lines.append(f"{pad}- {scalar(item)}")
    return lines


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
