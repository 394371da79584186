"""A Struct's JSON Schema as an MCP tool's input schema: an object at the root (msgspec puts a
``$ref`` there), the definitions it refers to kept beside it."""

from __future__ import annotations

from typing import Any

import msgspec


def input_schema(struct: type[msgspec.Struct], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``optional``: fields the tool fills in when left out (``check``'s agent: the caller)."""
    schema = msgspec.json.schema(struct)
    definitions: dict[str, Any] = schema.get("$defs", {})
    root = dict(definitions.pop(struct.__name__))
    if optional and "required" in root:
        root["required"] = [name for name in root["required"] if name not in optional]
    return root | ({"$defs": definitions} if definitions else {})
