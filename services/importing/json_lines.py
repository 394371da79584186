"""JSON as the original tools write it, read with the line of every key and item (as
``yaml_lines`` reads YAML), so a finding can name its line; a key given twice is refused, as
PROTOCOLS.md refuses it in any JSON object."""

from __future__ import annotations

import json
from json.decoder import scanstring
from typing import Any

from athenaeum.services.importing.yaml_lines import Located, Path, Unparsable

_WHITESPACE = " \t\n\r"
_scalar = json.JSONDecoder()


def located(text: str) -> Located:
    lines: dict[Path, int] = {}
    reader = _Reader(text, lines)
    try:
        value = reader.value(reader.skip(0), ())
        if reader.skip(reader.end) != len(text):
            raise reader.error("extra data after the document", reader.skip(reader.end))
    except json.JSONDecodeError as error:
        raise Unparsable(f"not JSON: {error.msg}", error.lineno) from None
    except RecursionError:
        raise Unparsable("not JSON this reader follows: nested too deep", None) from None
    return Located(value, lines)


class _Reader:
    def __init__(self, text: str, lines: dict[Path, int]) -> None:
        self.text, self.lines, self.end = text, lines, 0

    def error(self, message: str, at: int) -> json.JSONDecodeError:
        return json.JSONDecodeError(message, self.text, at)

    def skip(self, at: int) -> int:
        while at < len(self.text) and self.text[at] in _WHITESPACE:
            at += 1
        return at

    def line(self, at: int) -> int:
        return self.text.count("\n", 0, at) + 1

    def expect(self, at: int, mark: str) -> int:
        at = self.skip(at)
        if not self.text.startswith(mark, at):
            raise self.error(f"expecting {mark!r}", at)
        return at + 1

    def value(self, at: int, path: Path) -> Any:
        """The value at ``at``; ``self.end`` is where it ends."""
        opening = self.text[at:at + 1]
        if opening == "{":
            return self._object(at + 1, path)
        if opening == "[":
            return self._array(at + 1, path)
        value, self.end = _scalar.raw_decode(self.text, at)
        return self.text_at(value, at) if isinstance(value, str) else value

    def text_at(self, text: str, at: int) -> str:
        """``text``, unless an escape in it made a lone surrogate (``"\\ud800"``): JSON's grammar
        lets one through, but it is no character, and no UTF-8 (nor the ledger) holds it."""
        try:
            text.encode()
        except UnicodeEncodeError:
            raise self.error("a \\u escape names half of a surrogate pair alone, which is no character", at) from None
        return text

    def _object(self, at: int, path: Path) -> dict[str, Any]:
        found: dict[str, Any] = {}
        at = self.skip(at)
        if self.text.startswith("}", at):
            self.end = at + 1
            return found
        while True:
            at = self.expect(at, '"')
            key, at = scanstring(self.text, at)
            key = self.text_at(key, at)
            if key in found:
                raise self.error(f"key {key!r} is given twice", at)
            self.lines[(*path, key)] = self.line(at)
            found[key] = self.value(self.skip(self.expect(at, ":")), (*path, key))
            at = self.skip(self.end)
            if self.text.startswith("}", at):
                self.end = at + 1
                return found
            at = self.expect(at, ",")

    def _array(self, at: int, path: Path) -> list[Any]:
        found: list[Any] = []
        at = self.skip(at)
        if self.text.startswith("]", at):
            self.end = at + 1
            return found
        while True:
            self.lines[(*path, len(found))] = self.line(at)
            found.append(self.value(at, (*path, len(found))))
            at = self.skip(self.end)
            if self.text.startswith("]", at):
                self.end = at + 1
                return found
            at = self.skip(self.expect(at, ","))
