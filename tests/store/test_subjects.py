"""Ids as subject tokens and KV keys: every id has a token of its own, and gets it back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from athenaeum.services.jetstream.subjects import escape, unescape

PLAIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@given(st.text())
def test_an_id_comes_back_from_its_token(name: str) -> None:
    assert unescape(escape(name)) == name


@given(st.text(), st.sampled_from("~="))
def test_a_token_keeps_plain_characters_and_writes_every_other_byte_as_the_marker_and_its_hex(
        name: str, marker: str) -> None:
    expected = "".join(chr(b) if chr(b) in PLAIN else f"{marker}{b:02X}" for b in name.encode()) or marker
    assert escape(name, marker) == expected


@given(st.text(alphabet=PLAIN, min_size=1))
def test_a_plain_id_is_its_own_token(name: str) -> None:
    assert escape(name) == name == escape(name, "=")
