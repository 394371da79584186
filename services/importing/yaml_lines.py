"""YAML as the original tools' hand-written files hold it, read with the line of every key and
item, so a finding can name its line. Times stay text: the rules parse them, and say so when
they cannot."""

from __future__ import annotations

from functools import lru_cache
from collections.abc import Callable
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
    """What the plain reading does not take (a merge key, a set, an anchor, a tag, a second
    document): PyYAML's own composer and constructor build the document instead."""


# The events alone need no constructor nor resolver: libyaml's bare parser is half the cost of a loader to make.
_Events = getattr(yaml, "CParser", _Loader)


def located(text: str) -> Located:
    lines: dict[Path, int] = {}
    try:
        try:
            value = _from_events(text, lines)
        except _Unusual:
            lines.clear()
            value = _constructed(text, lines)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise Unparsable(f"not YAML: {getattr(error, 'problem', None) or error}",
                         mark.line + 1 if mark is not None else None) from None
    return Located(value, lines)


def _from_events(text: str, lines: dict[Path, int]) -> Any:
    """The value of the single document ``text`` holds, as PyYAML's safe constructor builds it,
    and the lines under it, read from the parser's events as they come: most of what the
    original tools wrote is maps, lists and plain scalars, which need no node built for them,
    nor the constructor's bookkeeping. Raises ``_Unusual`` for anything else."""
    parser = _Events(text)
    try:
        next_event = parser.get_event
        next_event()  # the stream's start
        if type(started := next_event()) is yaml.StreamEndEvent:
            return None
        assert type(started) is yaml.DocumentStartEvent
        value = _value(next_event(), next_event, (), lines)
        next_event()  # the document's end
        if type(next_event()) is not yaml.StreamEndEvent:
            raise _Unusual  # a second document: the composer says what is wrong
        return value
    finally:
        parser.dispose()


def _value(event: yaml.Event, next_event: Callable[[], yaml.Event], path: Path, lines: dict[Path, int]) -> Any:
    kind = type(event)
    if kind is _SCALAR:
        return _scalar(event)
    if event.anchor is not None or kind is yaml.AliasEvent:
        raise _Unusual
    if kind is yaml.MappingStartEvent and event.tag in _UNTAGGED_MAP:
        mapping: dict[Any, Any] = {}
        while type(key := next_event()) is _SCALAR:  # a key that is no scalar is the composer's to refuse
            at = (*path, key.value)
            if at in lines:
                raise _twice(key)
            lines[at] = key.start_mark.line + 1
            mapping[_scalar(key)] = _value(next_event(), next_event, at, lines)
        if type(key) is not yaml.MappingEndEvent:
            raise _Unusual
        return mapping
    if kind is yaml.SequenceStartEvent and event.tag in _UNTAGGED_SEQ:
        sequence: list[Any] = []
        while type(item := next_event()) is not yaml.SequenceEndEvent:
            at = (*path, len(sequence))
            lines[at] = item.start_mark.line + 1
            sequence.append(_value(item, next_event, at, lines))
        return sequence
    raise _Unusual


def _twice(key: yaml.ScalarEvent | yaml.ScalarNode) -> Unparsable:
    """YAML has a map hold each key once; PyYAML takes the last of two silently, as JSON's readers refuse them."""
    return Unparsable(f"the key {key.value!r} is written twice in one map", key.start_mark.line + 1)


def _scalar(event: yaml.ScalarEvent) -> Any:
    """A scalar's value, with its tag as the composer resolves it: a text, or a constant."""
    tag = event.tag
    if event.anchor is not None:
        raise _Unusual
    if tag is None or tag == "!":
        return _plain(event.value) if event.implicit[0] else event.value
    if tag == STR:
        return event.value
    return _constant(tag, event.value)


@lru_cache(maxsize=8192)
def _plain(value: str) -> Any:
    """A plain scalar's value: the same keys and words recur from file to file, and each is
    immutable, so each text is resolved and built once."""
    tag = _plain_tag(value)
    return value if tag == STR else _constant(tag, value)


def _constant(tag: str, value: str) -> Any:
    """A null, bool, int or float as the safe constructor builds it."""
    if tag not in _CONSTANTS:
        raise _Unusual
    return _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, value))


def _constructed(text: str, lines: dict[Path, int]) -> Any:
    """The document as PyYAML's own composer and constructor build it, and its lines."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _once_each(node)  # before: the constructor merges a ``<<`` key's mapping into its node
        value = loader.construct_document(node)
        _walk(node, lines)  # after: the constructor merges a ``<<`` key's mapping into its node
        return value
    finally:
        loader.dispose()


MAX_VALUES = 100_000  # in one document, its aliases expanded
MERGE = "tag:yaml.org,2002:merge"
_CONSTANTS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                        "tag:yaml.org,2002:float"})
# (A merge key ``<<`` or a value key ``=`` changes the mapping around it, a timestamp or binary
# is no constant: the constructor builds those.)
_UNTAGGED_MAP = frozenset({None, "!", MAP})
_UNTAGGED_SEQ = frozenset({None, "!", SEQ})
_SCALAR = yaml.ScalarEvent
_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _once_each(root: yaml.Node) -> None:
    """Raises ``Unparsable`` where a map writes a key twice (each node looked at once)."""
    seen: set[int] = set()
    waiting = [root]
    while waiting:
        node = waiting.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != MERGE:
                    if key.value in keys:
                        raise _twice(key)
                    keys.add(key.value)
                waiting += (key, value)
        elif isinstance(node, yaml.SequenceNode):
            waiting += node.value


def _walk(root: yaml.Node, lines: dict[Path, int]) -> None:
    """The lines alone, for a document the constructor built; a node inside itself is walked
    once. Raises ``Unparsable`` past ``MAX_VALUES`` values: aliases may say far more than they
    write (a "billion laughs" is nine lines of nine aliases each, 9^9 values)."""
    visited = 0

    def walk(node: yaml.Node, path: Path, open_nodes: set[int]) -> None:
        nonlocal visited
        visited += 1
        if visited > MAX_VALUES:
            raise Unparsable(f"its aliases expand to more than {MAX_VALUES:,} values", node.start_mark.line + 1)
        if id(node) in open_nodes:
            return
        open_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    lines[(*path, key.value)] = key.start_mark.line + 1
                    walk(value, (*path, key.value), open_nodes)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines[(*path, index)] = item.start_mark.line + 1
                walk(item, (*path, index), open_nodes)
        open_nodes.discard(id(node))

    walk(root, (), set())
