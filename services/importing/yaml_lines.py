"""YAML as the original tools' hand-written files hold it, read with the line of every key and
item, so a finding can name its line. Times stay text: the rules parse them, and say so when
they cannot."""

from __future__ import annotations

from typing import Any, NamedTuple

import yaml

Path = tuple[str | int, ...]


# libyaml's parser where the wheel has it (ten times the pure-Python one's speed), with the same marks.
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """SafeLoader without the implicit timestamp: ``2026-05-15T10:00:00Z`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class Unparsable(ValueError):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class Located(NamedTuple):
    value: Any
    lines: dict[Path, int]  # 1-based line of each mapping key and sequence item, by path

    def line(self, *path: str | int) -> int | None:
        """The line of ``path``, else of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return 1


def located(text: str) -> Located:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise Unparsable(f"not YAML: {getattr(error, 'problem', None) or error}",
                         mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
    lines: dict[Path, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return Located(value, lines)


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                lines[(*path, key.value)] = key.start_mark.line + 1
                _walk(value, (*path, key.value), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _walk(item, (*path, index), lines)
