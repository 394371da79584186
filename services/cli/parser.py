"""The command line's parser, as people expect of ``git`` or ``gh``: a usage error shows the
verb's own usage, every verb says what it does with an example, and errors are raised to
``main``, which answers them on stderr (or as one JSON object with ``--json``) with exit 2."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NoReturn

from athenaeum.services.cli.args import UsageError


class VerbUsageError(UsageError):
    """A usage error, with the usage of the verb it is about."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class Parser(argparse.ArgumentParser):
    """Raises ``VerbUsageError`` rather than exit; every sub-parser made from it is one too, and
    remembers itself in the arguments it parses, so an argument nobody takes is reported by the
    verb it was given to, not by the top level."""

    def error(self, message: str) -> NoReturn:
        raise VerbUsageError(message, self.format_usage())

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        namespace = namespace if namespace is not None else argparse.Namespace()
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, "parser"):
            parsed.parser = self  # the innermost parser sets it first: defaults are set before parents'
        return parsed, extras

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parsed.parser.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def verb_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every verb's parser under ``parser`` (those with no verbs of their own), by its words."""
    groups = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]  # noqa: SLF001
    if not groups:
        yield path, parser
    for group in groups:
        for name, sub in group.choices.items():
            yield from verb_parsers(sub, (*path, name))


def explained(parser: argparse.ArgumentParser, examples: Mapping[tuple[str, ...], str]) -> None:
    """Give every verb its help line as its description, and its example as its epilog."""
    for words, verb in verb_parsers(parser):
        verb.description = verb.description or _help_of(parser, words)
        if words in examples:
            verb.epilog = f"example:\n  {examples[words]}"
            verb.formatter_class = argparse.RawDescriptionHelpFormatter


def _help_of(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> str | None:
    current, help_text = parser, None
    for word in words:
        group = next(a for a in current._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
        help_text = next((c.help for c in group._choices_actions if c.dest == word), None)  # noqa: SLF001
        current = group.choices[word]
    return help_text
