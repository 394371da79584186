"""YAML read with its lines: the value is what PyYAML's safe loader builds (times kept as
text), whichever way it is built, and every key and item has its line."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

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
