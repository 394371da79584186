"""The ``athenaeum`` command line."""

from __future__ import annotations

import argparse
from importlib import metadata


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="athenaeum",
        description="Athenaeum: the ledger of how a fleet of agents decides together, on NATS JetStream.",
    )
    parser.add_argument("--version", action="version", version=f"athenaeum {metadata.version('athenaeum')}")
    return parser


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    return 0
