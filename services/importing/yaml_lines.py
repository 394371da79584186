"""YAML as the original tools' hand-written files hold it, read with the line of every key and
item, so a finding can name its line. Times stay text: the rules parse them, and say so when
they cannot."""

from __future__ import annotations

import re
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
    """What a cheaper reading does not take: the rows alone, anything but a map of rows; the
    events, a merge key, a set, an anchor, a tag, a second document, which PyYAML's own composer
    and constructor build instead."""


# The events alone need no constructor nor resolver: libyaml's bare parser is half the cost of a loader to make.
_Events = getattr(yaml, "CParser", _Loader)


def located(text: str) -> Located:
    lines: dict[Path, int] = {}
    try:
        for read in (_from_rows, _from_events):  # the cheaper first: each raises _Unusual for what it does not take
            try:
                return Located(read(text, lines), lines)
            except _Unusual:
                lines.clear()
        return Located(_constructed(text, lines), lines)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise Unparsable(f"not YAML: {getattr(error, 'problem', None) or error}",
                         mark.line + 1 if mark is not None else None) from None


# Each line of a document in the block layout the original tools write: ``key: value``, ``key:``
# (a map or a list below it, else null), ``- value`` or blank; a value a plain word or phrase,
# or quoted on its line with no escape. In ASCII, with no comment, tab, nor other line break.
# (Possessive: a line that is none of these is given up at once, not tried every other way.)
_ROWS = re.compile(r"""
    ^(\ *)
    (?: ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}) :(?=\ |$) | (-)(?=\ ) )
    (?: \ +(?:
        ( (?:[A-Za-z0-9_./~(+]|-(?=[A-Za-z0-9._])) (?:[ -"$-9;-~]++|:(?=[!-"$-9;-~]))*+ )
      | ( '(?:[ -&(-~]|'')*+' )
      | ( "[ !\#-\[\]-~]*+" )
    ))? \ *$
    | ^\ *$
""", re.VERBOSE | re.MULTILINE)
_BARE = object()  # the value of a key with nothing after it: a map or a list below, else null
Row = tuple[int, str, Any, int]  # indent, key ("": a list's item), value (or _BARE), line


def _from_rows(text: str, lines: dict[Path, int]) -> Any:
    """The value of ``text`` and the lines under it, when each of its lines is one of
    ``_ROWS`` and they make a map at the first column, of maps, lists and scalars: built as
    the events build it, with no event nor mark made for each scalar. Raises ``_Unusual`` for
    anything else, a key written twice too: the events say what is wrong, and where."""
    found = _ROWS.findall(text)
    if len(found) != text.count("\n") + 1:
        raise _Unusual  # a line that is no row
    rows: list[Row] = []
    for line, (indent, key, dash, plain, single, double) in enumerate(found, 1):
        if plain:
            value = _plain(plain.rstrip(" "))
        elif single:
            value = single[1:-1].replace("''", "'")
        elif double:
            value = double[1:-1]
        elif key:
            value = _BARE
        elif dash:
            raise _Unusual  # an item below its dash
        else:
            continue  # blank
        rows.append((len(indent), key, value, line))
    if not rows or rows[0][0] or not rows[0][1]:
        raise _Unusual
    value, end = _rows_map(rows, 0, (), lines)
    if end < len(rows):
        raise _Unusual
    return value


def _rows_map(rows: list[Row], index: int, path: Path, lines: dict[Path, int]) -> tuple[dict[Any, Any], int]:
    """The map whose first key is ``rows[index]``, and the index of the row after it."""
    indent, count = rows[index][0], len(rows)
    mapping: dict[Any, Any] = {}
    while index < count:
        row_indent, key, value, line = rows[index]
        if row_indent != indent:
            if row_indent > indent:
                raise _Unusual  # a scalar's next line, or a map or list not where its key says
            break
        at = (*path, key)
        if not key or at in lines:
            raise _Unusual  # an item among keys, or a key written twice
        lines[at] = line
        index += 1
        if value is _BARE:
            # Below it, a map or list further in, or a list at the key's own column.
            if index < count and ((below := rows[index])[0] > indent or below[0] == indent and not below[1]):
                value, index = (_rows_map if below[1] else _rows_list)(rows, index, at, lines)
            else:
                value = None
        mapping[_plain(key)] = value
    return mapping, index


def _rows_list(rows: list[Row], index: int, path: Path, lines: dict[Path, int]) -> tuple[list[Any], int]:
    """The list whose first item is ``rows[index]``, and the index of the row after it."""
    indent, count = rows[index][0], len(rows)
    items: list[Any] = []
    while index < count:
        row_indent, key, value, line = rows[index]
        if row_indent != indent or key:
            if row_indent > indent:
                raise _Unusual
            break
        lines[(*path, len(items))] = line
        items.append(value)
        index += 1
    return items, index


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
