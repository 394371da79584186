"""Who sent each stored command, checked again from the ledger alone: a signature must verify
against the key the roster bound its actor to at that position, over the command as signed in
this ledger; a principal bound to a key, and a human's decision, must be signed at all.

The auditor and ``verify-export`` both run it, the latter with no server: the roster is folded
from the fleet's own events as they come.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec

from athenaeum.aggregates.fleet import Fleet, evolve
from athenaeum.events import event_registry
from athenaeum.events.commands import CommandRecord, decode_record
from athenaeum.events.fleet import FLEET_ID
from athenaeum.services.audit.findings import Finding
from athenaeum.services.audit.redecide import Problem
from athenaeum.services.commands.credentials import SERVICE_ACTORS, deployment_command_id
from athenaeum.services.identity.signing import CLOCK_SKEW, all_verify, signed_bytes, verifies
from athenaeum.services.identity.verifier import Signed, Verifier
from athenaeum.services.jetstream.entries import Entry

REGISTRATION = "agent.register"


class Proofs:
    """``verify-export``'s half: the roster folded from the lines' fleet events as they come,
    and every command record's proof checked against the roster as it stood before the
    command (a record stored in a marker comes after its events: they wait for it)."""

    def __init__(self) -> None:
        self.ledger_id = ""
        self.roster: Fleet | None = None
        self.before: Fleet | None = None  # the roster before the command being read
        # An export from a later position holds no roster before it: who was bound to which key,
        # or held which token, is unknown, and each signature is checked against the key it names.
        self.partial = False

    def check(self, entry: Entry) -> list[Finding]:
        if entry.kind == "event" and entry.carries_command:
            self.before = self.roster
        record = entry.record if entry.kind == "event" else entry.payload if entry.kind == "marker" else None
        problem = None
        if record is not None:
            try:
                decoded = decode_record(record)
                problem = signed_problem(decoded, self.ledger_id) if self.partial else proof_problem(
                    decoded, self.before, self.ledger_id)
            except msgspec.DecodeError as error:
                problem = Problem("undecodable_command", f"the command's record does not decode: {error}")
        originator = entry.originator()
        # A partial export's roster events only continue a roster it does not hold: not folded.
        if not self.partial and entry.kind == "event" and originator is not None and originator[0] == FLEET_ID \
                and entry.topic:
            try:
                self.roster = evolve(self.roster, event_registry.decoder_for(entry.topic).decode(entry.payload))
            except (msgspec.DecodeError, LookupError):
                pass  # the line check reports what does not decode
        if problem is None:
            return []
        return [Finding(problem.severity, problem.code, "export", entry.subject, entry.position, problem.message)]


Verify = Callable[[str, str, bytes], bool]  # (public key, signature, message): whether it verifies


def proof_problem(record: CommandRecord, roster: Fleet | None, ledger_id: str, verify: Verify = verifies) -> Problem | None:
    """What is wrong with how ``record`` was proven, given the roster just before it; the
    signature itself checked by ``verify`` (which may defer it, and say True meanwhile)."""
    proof = record.proof
    key = roster.key_of(record.actor) if roster is not None else None
    if proof is None:  # recorded before the ledger knew identities, when no key bound anyone
        return None if key is None else Problem(
            "unsigned", f"{record.route} as {record.actor!r}, whom the roster binds to a key, has no proof at all")
    if proof.by == "service":
        if record.actor in SERVICE_ACTORS or _deployment_human(record):
            return None
        return Problem("unproven", f"{record.route} as {record.actor!r} is recorded as sent by Athenaeum's own "
                                   "services, which send no such command")
    if proof.by == "token":
        holder = roster.tokens.get(proof.token_sha256 or "") if roster is not None else None
        if holder != record.actor:
            return Problem("bad_token", f"{record.route} as {record.actor!r} is recorded as proven by a token the "
                                        "roster did not hold for it")
        if record.actor_is_human:
            return Problem("unsigned_human_decision", f"{record.route} was decided as the human {record.actor!r} "
                                                      "with a token, not a human's signature")
        return None
    if proof.by != "signature":
        if key is not None:
            return Problem("unsigned", f"{record.route} as {record.actor!r}, whom the roster binds to a key, was "
                                       f"accepted unsigned ({proof.by})")
        if record.actor_is_human:
            return Problem("unsigned_human_decision", f"{record.route} was decided as the human {record.actor!r} "
                                                      f"with no human's signature ({proof.by})")
        return Problem("header_asserted", f"{record.route} as {record.actor!r} was taken on its sender's word (a name "
                                          "no key binds, from NATS without accounts or a trusted HTTP address)", "INFO")
    if roster is not None and record.actor in roster.revoked:
        return Problem("key_revoked", f"{record.route} is signed by {record.actor!r}, whose key was revoked before it")
    if key is None or key != proof.public_key:
        return Problem("bad_signature", f"{record.route} is signed with {proof.public_key}, not the key the roster "
                                        f"bound {record.actor!r} to ({key or 'none'})")
    return signed_problem(record, ledger_id, verify)


def signed_problem(record: CommandRecord, ledger_id: str, verify: Verify = verifies) -> Problem | None:
    """What is wrong with ``record``'s signature, if it has one, over the command as stored, by
    the key its proof names (whose binding to the actor ``proof_problem`` checks)."""
    proof = record.proof
    if proof is None or proof.by != "signature":
        return None
    key = proof.public_key or ""
    command = proof.command.encode() if proof.command is not None else bytes(record.command)
    if proof.signed_at is None or proof.signature is None or not verify(
            key, proof.signature, signed_bytes(ledger_id, record.route, record.actor, proof.signed_at, command)):
        return not_verified(record)
    zoned = record.at.tzinfo is not None and proof.signed_at.tzinfo is not None  # the service writes zones
    if zoned and abs(record.at - proof.signed_at) > CLOCK_SKEW:
        # The service refuses a signature further than this from its clock; a clock shifted on
        # purpose (ATHENAEUM_CLOCK_OFFSET) records every signed command so, and is no forgery.
        return Problem("signed_apart", f"{record.route} as {record.actor!r} is recorded at {record.at.isoformat()} and "
                                       f"signed at {proof.signed_at.isoformat()}, more than {CLOCK_SKEW} apart: the "
                                       "record's time was changed, or the service ran on a shifted clock", "WARN")
    return None


class Signatures:
    """The audit's signatures, checked in batches by a process of its own while the replay goes
    on (see ``identity.verifier``); an audit of fewer than a batch checks them itself, with no
    process to start. Each failure is reported at its entry. Used as a context for one run."""

    BATCH = 250  # small, so the last batch, which the audit waits for at its end, is short

    def __init__(self) -> None:
        self._verifier: Verifier | None = None
        self._batch: list[tuple[CommandRecord, Entry, Signed]] = []
        self._sent: list[list[tuple[CommandRecord, Entry]]] = []  # the places of each batch sent

    def __enter__(self) -> Signatures:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._verifier is not None:
            self._verifier.close()
            self._verifier = None

    def verify_for(self, record: CommandRecord, entry: Entry) -> Verify:
        def verify(key: str, signature: str, message: bytes) -> bool:
            self._batch.append((record, entry, (key, signature, message)))
            if len(self._batch) >= self.BATCH:
                self._send()
            return True  # for now: problems() says

        return verify

    def _send(self) -> None:
        self._verifier = self._verifier or Verifier()
        batch, self._batch = self._batch, []
        self._verifier.send([signed for _, _, signed in batch])
        self._sent.append([(record, entry) for record, entry, _ in batch])

    def problems(self) -> Iterator[tuple[Entry, Problem]]:
        """Every signature read so far that does not verify, in the order read."""
        if self._verifier is not None and self._batch:
            self._send()
        answers = self._verifier.results() if self._verifier is not None else []
        self._verifier = None
        places, self._sent = self._sent, []
        batch, self._batch = self._batch, []
        places.append([(record, entry) for record, entry, _ in batch])
        answers.append(all_verify([signed for _, _, signed in batch]))
        for batch_places, verified in zip(places, answers):
            for (record, entry), ok in zip(batch_places, verified):
                if not ok:
                    yield entry, not_verified(record)


def not_verified(record: CommandRecord) -> Problem:
    return Problem("bad_signature", f"{record.route}'s signature is not {record.actor}'s over the command as stored "
                                    "in this ledger")


def _deployment_human(record: CommandRecord) -> bool:
    """The registration ``serve --humans`` records for each human at its first start."""
    try:
        command = msgspec.json.decode(bytes(record.command))
    except msgspec.DecodeError:
        return False
    return (record.route == REGISTRATION and isinstance(command, dict) and command.get("name") == record.actor
            and command.get("command_id") == deployment_command_id(record.actor))
