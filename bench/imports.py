"""Import throughput against ``export`` of the same ledger, measured in the same run.

    python -m bench.imports            # 1,000 ratifications, 1,000 threads of 10 entries, 200 pages
    python -m bench.imports --quick    # a tenth of each

The tree is generated in the original layouts: ratification folders with three votes each,
dialogue threads whose entries each evaluate the one before, and canon pages. ``import`` reads
and judges every record (in a worker process a core) and sends each as it is read, as
``athenaeum import`` does (``send_all``: a hundred together on each call, two calls in flight),
straight to a command handler: each signed by the importer, a human, as the CLI signs it, and
decided on its own command, a call's appended in one write. ``export`` reads the ledger it made back as JSON lines. Target: import at least 0.3x
export, in records per second.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

import yaml

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.families import fold_of
from athenaeum.services.audit.export import export
from athenaeum.events.commands import Command
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.services.commands.credentials import SERVICE, deployment_command_id, signed
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.replies import Reply
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.importing.run import TreeReading, send_all
from athenaeum.services.jetstream.factory import stream_config
from athenaeum.services.identity.keys import key_pair, new_seed, public_key
from athenaeum.services.jetstream.loop import LoopThread
from athenaeum.services.runtime.nats_server import NatsServer

from bench.store import report, stream_env

ROSTER = ["alice", "bob", "carol"]
IMPORTER = "ada"  # only a human imports history: ada, her key registered as serve --humans registers it
ARTIFACT = "# ADR\n\n## Scope\nAll agents log to the ledger.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()


def ratification(root: Path, number: int) -> None:
    folder = root / ".athenaeum" / f"adr-{number}"
    folder.mkdir(parents=True)
    (folder / "artifact.md").write_text(ARTIFACT)
    manifest = {"topic": folder.name, "initiator": "alice", "artifact_sha256": SHA, "artifact_origin": "inline",
                "roster": ROSTER, "expires_at": "2099-01-01T00:00:00Z", "mode": "standard", "status": "ratified"}
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    for agent in ROSTER:
        vote = {"agent": agent, "artifact_sha256": SHA, "decision": "SIGN", "timestamp": "2026-05-15T10:00:00Z"}
        (folder / f"{agent}.vote.yaml").write_text(yaml.safe_dump(vote, sort_keys=False))
    (folder / "log.md").write_text("".join(f"[2026-05-15T10:00:00Z] {a} | VOTE: SIGN\n" for a in ROSTER))


def thread(root: Path, number: int, entries: int) -> None:
    folder = root / "wiki" / "agents" / "dialogue" / f"thread-{number}"
    (folder / "entries").mkdir(parents=True)
    (folder / "thread.md").write_text(f"---\nslug: {folder.name}\nopened_by: alice\nopened_at: 2026-05-10T08:00:00Z\n"
                                      "---\n\n## Context\n\nA question.\n\n## Open Questions (OQ)\n\n- OQ-1: why?\n")
    meta = {"slug": folder.name, "status": "open", "participants": ROSTER[:2],
            "rolespace": {"target": {"N": 3.0, "C": 3.0, "R": 3.0}}}
    (folder / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    previous = None
    for n in range(1, entries + 1):
        author = ROSTER[n % 2]
        name = f"{n:03d}-{author}.md"
        front = {"n": n, "type": "contribution", "author": author, "ts": "2026-05-11T09:00:00Z", "declared_axis": "R"}
        if previous:
            front["last_eval"] = {"ref": previous, "v": {"N": 0.1, "C": 0.1, "R": 0.1}}
        (folder / "entries" / name).write_text(f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n\nEntry {n}.\n")
        previous = name


def page(root: Path, number: int) -> None:
    path = root / "wiki" / "concepts" / f"page-{number}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nrev: v1\nlifecycle: working\nconsensus:\n  alice: \"contributed | 2026-05-15 | rev: v1\"\n"
                    "---\n\n# A page\n\nIts text.\n")


def import_tree(url: str, stream: str, root: Path) -> int:
    """``athenaeum import`` of ``root`` as the CLI does it (``send_all`` of the records as worker
    processes read them, a hundred on each call, two calls in flight), each call sent straight
    to a command handler's ``send_together`` on a uvloop of its own, as the command service's
    import endpoint sends it: what the NATS hop between them costs is left out. How many were
    sent."""
    reading = TreeReading([root])  # its workers forked first, as the CLI's are, before the connection's thread
    loop = LoopThread("bench-commands")
    store = loop.run(JetStreamCommandStore.open([url], stream_config(stream, 1, immutable=True), fold_of))
    handler = CommandHandler(store, humans=frozenset({IMPORTER}))
    key = key_pair(new_seed())
    register = RegisterAgent(name=IMPORTER, human=True, public_key=public_key(key),
                             command_id=deployment_command_id(IMPORTER))
    assert loop.run(handler.send(register, IMPORTER, SERVICE)).ok

    def send_together(commands: list[Command]) -> list[Reply]:
        """Each command signed with the importer's key, as the CLI signs it."""
        return loop.run(handler.send_together(
            [(command, signed(key, store.ledger_id, command, IMPORTER)) for command in commands], IMPORTER))

    outcomes = [outcome for outcome in send_all(reading, send_together) if outcome is not None]
    refused = [outcome for outcome in outcomes if not outcome.startswith("recorded")]
    assert not refused, refused[:3]
    loop.run(store.close())
    loop.close()
    return len(outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of the tree")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with tempfile.TemporaryDirectory() as workdir, NatsServer(store_dir=Path(workdir) / "nats") as server:
        root = Path(workdir) / "tree"
        for number in range(1000 // scale):
            ratification(root, number)
            thread(root, number, 10)
        for number in range(200 // scale):
            page(root, number)
        env = stream_env(server)
        started = time.perf_counter()
        count = import_tree(server.url, env["ATHENAEUM_STREAM"], root)
        imported = count / (time.perf_counter() - started)
        app = AthenaeumApplication(env=env)
        started = time.perf_counter()
        lines = sum(1 for _ in export(app))
        exported = count / (time.perf_counter() - started)
        app.close()
        print(f"({count:,} records imported; the export wrote {lines:,} lines)")
        report("import (read, judge, decide, append)", imported, "rec/s", "export of the same ledger", exported,
               "(target >= 0.3x)")


if __name__ == "__main__":
    main()
