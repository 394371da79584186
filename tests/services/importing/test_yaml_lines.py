"""YAML read with its lines: the value is what PyYAML's safe loader builds (times kept as
text), whichever way it is built, and every key and item has its line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from athenaeum.services.importing import yaml_lines
from athenaeum.services.importing.yaml_lines import Path, Unparsable, located


class _TimesAsText(yaml.SafeLoader):
    """The reference: PyYAML's own pure-Python safe loader, without the implicit timestamp."""


_TimesAsText.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

DOCUMENTS = [
    "agent: bob\ndecision: SIGN\ntimestamp: 2026-05-15T10:00:00Z\n",
    "n: 3\nratio: 0.5\nok: yes\nnone: ~\nempty:\nquoted: '12'\nlist: [a, 1, 2.5, null, true]\n",
    "rolespace:\n  target: {N: 3.0, C: 3.0, R: 3.0}\nparticipants:\n  - alice\n  - bob\n",
    "1: one\n2.5: float key\ntrue: bool key\n~: null key\n",
    "base: &base {a: 1, b: 2}\nderived:\n  <<: *base\n  b: 3\n",  # a merge key: the constructor's
    "shared: &x [1, 2]\nagain: *x\n",
    "set: !!set {a, b}\nomap: !!omap [{a: 1}, {b: 2}]\n",
    "bytes: !!binary aGVsbG8=\nwhen: !!timestamp 2026-05-15T10:00:00Z\n",
    "- [nested, [deeper, {k: v}]]\n- text: |\n    a block\n    of lines\n",
    "just text\n",
    "",
    "# only a comment\n",
]


def reference(text: str) -> tuple[Any, dict[Path, int]]:
    loader = _TimesAsText(text)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    lines: dict[Path, int] = {}

    def walk(node: yaml.Node, path: Path) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, item in node.value:
                lines[(*path, key.value)] = key.start_mark.line + 1
                walk(item, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines[(*path, index)] = item.start_mark.line + 1
                walk(item, (*path, index))

    if node is not None:
        walk(node, ())
    return value, lines


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_value_and_the_lines_are_the_safe_loaders(text: str) -> None:
    value, lines = reference(text)
    found = located(text)
    assert found.value == value and type(found.value) is type(value)
    assert found.lines == lines


def test_times_stay_text_and_lines_count_from_one() -> None:
    found = located("agent: bob\nvotes:\n  - at: 2026-05-15T10:00:00Z\n")
    assert found.value["votes"][0]["at"] == "2026-05-15T10:00:00Z"
    assert found.line("votes", 0, "at") == 3 and found.line("agent") == 1


def test_a_node_inside_itself_is_read_as_the_constructor_reads_it() -> None:
    found = located("loop: &a [1, *a]\n")
    assert found.value["loop"][1] is found.value["loop"]
    assert found.lines == {("loop",): 1, ("loop", 0): 1, ("loop", 1): 1}


@pytest.mark.parametrize("text, line", [("a: [1\n", 2), ("? [a, b]\n: unhashable\n", 1), ("tag: !custom x\n", 1)])
def test_what_the_safe_loader_refuses_is_unparsable_at_its_line(text: str, line: int) -> None:
    with pytest.raises(Unparsable) as refused:
        located(text)
    assert refused.value.line == line


def test_aliases_that_expand_past_what_a_record_holds_are_unparsable() -> None:
    # An acceptance tester's "billion laughs": nine lines of nine aliases each took 3 GB, then the import.
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 9)}]\n" for n in range(8))
    with pytest.raises(Unparsable, match="aliases expand to more than 100,000 values"):
        located(bomb)
    assert located("a: &a [1, 2]\nb: *a\n").value == {"a": [1, 2], "b": [1, 2]}  # an alias or two reads as ever


def test_a_key_written_twice_in_one_map_is_unparsable_at_its_second_line() -> None:
    # An acceptance tester's: `status: rejected` then `status: open` was read as open, without a word.
    for text in ("topic: adr-7\nstatus: rejected\nstatus: open\n", "base: &b {x: 1}\nstatus: rejected\nstatus: open\n"):
        with pytest.raises(Unparsable, match="'status' is written twice") as refused:
            located(text)
        assert refused.value.line == 3


# The rows reader: a document each of whose lines is a row (``key: value``, ``key:``, ``- item``)
# is read without libyaml's events; anything else is handed on. Either way, what is read is
# what the events read, and what the safe loader builds.

# Each drawn four times in five from the first list, which rows may hold, else from the second.
KEYS = (["a", "b", "n", "N", "ref", "1", "01", "1.5", "true", "on", "No", "null", "a.b", "a-b", "_x", "k" * 128],
        ["two words", "<<", "=", "?", "-x", "é", "a\tb", "k" * 129, "'a'"])
WORDS = (["alice", "SIGN", "yes", "no", "Off", "~", "null", "Null", "", "1", "-1", "+1", "0o7", "010", "0x1F", "1_000",
          "0b101", "1.5", ".5", "-.5", "1.", "1e3", "1.0e+3", ".inf", "-.Inf", ".nan", "190:20:30", "2026-05-15",
          "2026-05-15T10:00:00Z", "a b", "a  b ", "it's", 'say "hi"', "a:b", "a#b", "http://x.y/z?q=1&r", "(x)",
          "001-bob.md", "contributed | 2026-05-15 | rev: v1", "'", "''", "x'", "/p", "~x", "a,b", "a\\b"],
         ["a: b", "a:", "a #b", "-", "- x", "--- x", "---", "...", "?x", "? x", ":x", "&a", "*a", "!t", "!!str 1", "|",
          ">", "[a, 1]", "{a: 1}", "@x", "`x", "%x", "<<", "=", "é", "\ufeff", "x\ty", '"', "\r"])
NASTY = ["#", " # c", "\t", ":", ": ", "-", " ", "  ", "'", '"', "\\", "&a ", "*a", "!", "|", "\ufeff", "\r",
         "\x85", "\u2028", "é", "\x00", "\udcff", "---", "...", "<<: *a", "{", "[", "?"]


def _pick(draw: st.DrawFn, lists: tuple[list[str], list[str]]) -> str:
    return draw(st.sampled_from(lists[draw(st.integers(0, 4)) == 0]))


def _scalar(draw: st.DrawFn) -> str:
    word = _pick(draw, WORDS)
    style = draw(st.sampled_from(["plain", "plain", "single", "double"]))
    if style == "single":
        return "'" + word.replace("'", "''") + "'"
    return f'"{word}"' if style == "double" else word


@st.composite
def _block(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> list[str]:
    """The lines of a map at ``indent``: its keys drawn from a few, and in one map in five let come twice."""
    lines, keys = [], set()
    margin, trailing, twice = " " * indent, st.sampled_from(["", "", " ", "  "]), draw(st.integers(0, 4)) == 0
    for _ in range(draw(st.integers(1, 4))):
        key = _pick(draw, KEYS)
        if key in keys and not twice:
            key += str(len(keys))
        keys.add(key)
        below = draw(st.sampled_from(["scalar", "scalar", "nothing", "map", "list", "list at the key"]))
        if depth == 2 and below in ("map", "list", "list at the key"):
            below = "scalar"
        if below == "scalar":
            lines.append(f"{margin}{key}: {_scalar(draw)}{draw(trailing)}")
            continue
        lines.append(f"{margin}{key}:{draw(trailing)}")
        step = draw(st.integers(1, 3))
        if below == "map":
            lines += draw(_block(indent + step, depth + 1))
        elif below != "nothing":
            item_margin = margin + " " * (step if below == "list" else 0)
            lines += [f"{item_margin}- {_scalar(draw)}{draw(trailing)}" for _ in range(draw(st.integers(1, 3)))]
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "  "])))
    return lines


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A map of rows, now and then with one line spoilt (a character put in, moved in or out)."""
    lines = draw(_block())
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        at = draw(st.integers(0, len(lines) - 1))
        line = lines[at]
        spoilt = draw(st.sampled_from(["insert", "indent", "dedent"]))
        if spoilt == "insert":
            column = draw(st.integers(0, len(line)))
            lines[at] = line[:column] + draw(st.sampled_from(NASTY)) + line[column:]
        elif spoilt == "indent":
            lines[at] = " " + line
        else:
            lines[at] = line.removeprefix(" ")
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", "\n  \n"]))


def typed(value: Any) -> Any:
    """``value`` with the type of every scalar in it (1, 1.0 and True are equal in Python)."""
    if isinstance(value, dict):
        return [(typed(key), typed(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [typed(item) for item in value]
    return type(value).__name__, repr(value)


def outcome(read: Callable[[str], Any], text: str) -> tuple[Any, ...]:
    try:
        found = read(text)
    except Exception as error:  # noqa: BLE001  what each reader says is compared, whatever it is
        return type(error).__name__, str(error), getattr(error, "line", None)
    return typed(found.value), found.lines


@settings(max_examples=1500, derandomize=True, deadline=None, database=None)
@given(documents())
def test_a_document_of_rows_reads_as_the_events_and_the_safe_loader_read_it(text: str) -> None:
    lines: dict[Path, int] = {}
    try:
        value = yaml_lines._from_rows(text, lines)
    except yaml_lines._Unusual:
        return
    events_lines: dict[Path, int] = {}
    assert typed(value) == typed(yaml_lines._from_events(text, events_lines)) and lines == events_lines
    assert (typed(value), lines) == (typed(reference(text)[0]), reference(text)[1])


@settings(max_examples=1500, derandomize=True, deadline=None, database=None)
@given(documents())
def test_what_located_says_of_a_document_is_what_it_said_before_rows_were_read(text: str) -> None:
    with mock.patch.object(yaml_lines, "_from_rows", side_effect=yaml_lines._Unusual):
        before = outcome(located, text)
    assert outcome(located, text) == before


@pytest.mark.parametrize("text", [
    "n: 2\ntype: contribution\nauthor: alice\nts: '2026-05-11T09:00:00Z'\ndeclared_axis: R\nlast_eval:\n"
    "  ref: 001-bob.md\n  v:\n    N: 0.1\n    C: 0.1\n    R: 0.1\n",
    "slug: thread-1\nstatus: open\nparticipants:\n- alice\n- bob\nrolespace:\n  target:\n    N: 3.0\n",
    'rev: v1\nlifecycle: working\nconsensus:\n  alice: "contributed | 2026-05-15 | rev: v1"',
    "topic: adr-1\nroster:\n  - alice\n  - 'bob'\nexpires_at: 2099-01-01T00:00:00Z\nnote:\n\nmode: standard\n",
])
def test_what_the_original_tools_write_is_read_as_rows(text: str) -> None:
    lines: dict[Path, int] = {}
    value = yaml_lines._from_rows(text, lines)
    assert (typed(value), lines) == (typed(reference(text)[0]), reference(text)[1])


@pytest.mark.parametrize("text", [
    "topic: adr-7\nstatus: rejected\nstatus: open\n",  # a key twice: the events say where
    "\ufeffa: 1\n",  # a BOM
    "a: &x 1\nb: *x\n",  # an anchor and its alias
    "a: 1 # said\n", "# said\na: 1\n",  # comments
    "a:\tb\n", "a: caf\u00e9\n", "a: 1\r\nb: 2\r\n", "a: 1\u2028b: 2\n",  # a tab, non-ASCII, other line breaks
    "a: x\n  y\n",  # a plain scalar on two lines
    "  a: 1\n", "- a\n- b\n", "a\n", "",  # no map at the first column
    "a: 1\n b: 2\n", "a:\n  b: 1\n c: 2\n", "a:\n  - x\n  b: 1\n",  # indents that are no map's
])
def test_what_is_not_rows_alone_is_handed_on(text: str) -> None:
    with pytest.raises(yaml_lines._Unusual):
        yaml_lines._from_rows(text, {})


def test_a_key_twice_among_rows_is_unparsable_at_its_second_line() -> None:
    with pytest.raises(Unparsable, match="'b' is written twice") as refused:
        located("a:\n  b: 1\n  c: 2\n  b: 3\n")
    assert refused.value.line == 4
