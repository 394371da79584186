"""YAML as the original tools' hand-written files hold it, read with the line of every key and
item, so a finding can name its line. Times stay text: the rules parse them, and say so when
they cannot."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import yaml

Path = tuple[str | int, ...]

STR, MAP, SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"

# libyaml's parser where the wheel has it (ten times the pure-Python one's speed), with the same marks.
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """SafeLoader without the implicit timestamp: ``2026-05-15T10:00:00Z`` stays a string."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        # A plain scalar's tag depends on its text alone, and the same keys and words recur
        # from file to file: remembered, instead of matched against every resolver each time.
        if kind is yaml.ScalarNode and implicit[0] and not self.yaml_path_resolvers:
            return _plain_tag(value)
        return super().resolve(kind, value, implicit)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@lru_cache(maxsize=8192)
def _plain_tag(value: str) -> str:
    resolvers = _Loader.yaml_implicit_resolvers
    for tag, pattern in resolvers.get(value[:1], []) + resolvers.get(None, []):
        if pattern.match(value):
            return tag
    return STR


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


class _Unusual(Exception):
    """A node the plain reading does not take (a merge key, a set, a node inside itself):
    PyYAML's own constructor builds the document instead."""


def located(text: str) -> Located:
    loader = _Loader(text)
    lines: dict[Path, int] = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return Located(None, lines)
        try:
            value = _read(node, (), lines, loader, set())
        except _Unusual:
            lines.clear()
            value = loader.construct_document(node)
            _walk(node, (), lines, set())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise Unparsable(f"not YAML: {getattr(error, 'problem', None) or error}",
                         mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
    return Located(value, lines)


def _read(node: yaml.Node, path: Path, lines: dict[Path, int], loader: yaml.BaseLoader, open_nodes: set[int]) -> Any:
    """The value of ``node`` as PyYAML's safe constructor builds it, and the lines under it, in
    one walk: most of what the original tools wrote is maps, lists and text, which need none
    of the constructor's bookkeeping; any other scalar is still built by the constructor."""
    kind = type(node)
    if kind is yaml.ScalarNode:
        return node.value if node.tag == STR else loader.construct_object(node, deep=True)
    if id(node) in open_nodes:
        raise _Unusual
    open_nodes.add(id(node))
    if kind is yaml.MappingNode and node.tag == MAP:
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode or key_node.tag not in _PLAIN_KEYS:
                raise _Unusual
            key = key_node.value if key_node.tag == STR else loader.construct_object(key_node, deep=True)
            lines[(*path, key_node.value)] = key_node.start_mark.line + 1
            mapping[key] = _read(value_node, (*path, key_node.value), lines, loader, open_nodes)
        value: Any = mapping
    elif kind is yaml.SequenceNode and node.tag == SEQ:
        value = []
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            value.append(_read(item, (*path, index), lines, loader, open_nodes))
    else:
        raise _Unusual
    open_nodes.discard(id(node))
    return value


# Key tags whose constructed key is the key as written or a plain scalar value (a merge key
# ``<<`` or a value key ``=`` change the mapping around them: the constructor handles those).
_PLAIN_KEYS = frozenset({STR, "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                         "tag:yaml.org,2002:null"})


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int], open_nodes: set[int]) -> None:
    """The lines alone, for a document the constructor built; a node inside itself is walked once."""
    if id(node) in open_nodes:
        return
    open_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                lines[(*path, key.value)] = key.start_mark.line + 1
                _walk(value, (*path, key.value), lines, open_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _walk(item, (*path, index), lines, open_nodes)
    open_nodes.discard(id(node))
