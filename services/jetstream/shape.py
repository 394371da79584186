"""What a stream must be for Athenaeum to rely on it, and which departures are safe to mend.

A stream's configuration is compared with the one Athenaeum creates it with. A repair never
touches a stored message and never lets one go: it restores a protection (deny delete, deny
purge, atomic batches, direct gets), lifts a limit (a limit that has dropped nothing yet then
never will), restores the subjects, raises the replicas, or declares the layout of an empty
stream. Everything else is drift only an operator can settle: a sealed stream (NATS cannot
unseal one), another storage or retention (NATS changes neither), another layout, or, in a
stream that keeps history, messages already gone.
"""

from __future__ import annotations

from typing import NamedTuple

# Limits and their unlimited values, as the server reports them.
LIMITS = {"max_msgs": -1, "max_bytes": -1, "max_age": 0, "max_msgs_per_subject": -1, "max_msg_size": -1}
FIXED = ("storage", "retention")  # an update cannot change these
OWN = ("name", "num_replicas", "metadata", "sealed", *FIXED)  # compared each in its own way


class Inspection(NamedTuple):
    """What a stream's configuration departs in: what may be set back (``update``, the whole
    configuration to send, and ``repairs``, said in words) and what may not (``drift``)."""

    repairs: list[str]
    drift: list[str]
    update: dict[str, object] | None


def inspect(expected: dict[str, object], info: dict, keeps_history: bool) -> Inspection:
    """``info``: the stream's information, as the server gives it. ``keeps_history``: a message
    gone from it is history lost (the ledger), not derived data its services make again; in
    such a stream a limit is only ever lifted, never tightened."""
    existing: dict[str, object] = info["config"]
    state = info.get("state") or {}
    name = existing["name"]
    repairs: list[str] = []
    drift: list[str] = []
    changes: dict[str, object] = {}
    if existing.get("sealed"):
        drift.append(f"stream {name} is sealed, and NATS cannot unseal a stream: nothing can be appended to it")
    for option in FIXED:
        if option in expected and existing.get(option) != expected[option]:
            drift.append(f"stream {name} has {option} {existing.get(option)}, not {expected[option]}, "
                         "which NATS cannot change on a stream")
    for option, wanted in _settings(expected).items():
        # The server leaves out an option that is off.
        found = existing.get(option, LIMITS.get(option, False if isinstance(wanted, bool) else None))
        if found == wanted:
            continue
        if keeps_history and option in LIMITS and not _looser(wanted, found):
            continue  # a tighter limit could drop history: here a limit is only ever lifted
        changes[option] = wanted
        repairs.append(f"{option} {_said(option, found)} -> {_said(option, wanted)}")
    replicas = int(expected.get("num_replicas") or 1)
    if int(existing.get("num_replicas") or 1) < replicas:
        changes["num_replicas"] = replicas
        repairs.append(f"num_replicas {existing.get('num_replicas')} -> {replicas}")
    declared, other_layout = _layout(expected, existing, int(state.get("messages") or 0))
    if declared:
        changes["metadata"] = declared
        repairs.append("layout declared")
    drift += other_layout
    if keeps_history and (lost := _lost(state)):
        limits = ", ".join(f"{limit} {existing[limit]}" for limit in LIMITS
                           if existing.get(limit, LIMITS[limit]) != LIMITS[limit])
        cause = f", dropped by {limits}" if limits else ""
        drift.append(f"stream {name} holds {state.get('messages', 0)} of the {state['last_seq']} messages written "
                     f"to it ({lost} gone{cause}), and history cannot be made again from what is left: restore the "
                     "stream from a backup")
    return Inspection(repairs, drift, existing | changes if changes else None)


def layout_drift(expected: dict[str, object], info: dict) -> str | None:
    """Why a reader cannot read the stream ``info`` describes, if it is in another layout."""
    drift = _layout(expected, info["config"], int((info.get("state") or {}).get("messages") or 0))[1]
    return drift[0] if drift else None


def _settings(expected: dict[str, object]) -> dict[str, object]:
    """Every option compared as a value to set back: what the stream is created with, and
    every limit (unlimited unless created with one)."""
    return LIMITS | {option: value for option, value in expected.items() if option not in OWN}


def _looser(wanted: object, found: object) -> bool:
    """Whether limit ``wanted`` holds at least what ``found`` does (unlimited: -1, or 0 for an age)."""
    return wanted in (-1, 0) or (found not in (-1, 0) and int(wanted) >= int(found))  # type: ignore[call-overload]


def _layout(expected: dict, existing: dict, messages: int) -> tuple[dict[str, str] | None, list[str]]:
    """A stream written in another layout of subjects and headers is drift; an empty one
    without a layout (made by hand, or by an older version) is given ours."""
    ours = dict(expected.get("metadata") or {})
    theirs = dict(existing.get("metadata") or {})
    declare: dict[str, str] = {}
    drift = []
    for key, layout in ours.items():
        found = theirs.get(key)
        if found == layout:
            continue
        if found is None and messages == 0:
            declare[key] = layout
            continue
        drift.append(f"stream {existing['name']} holds a ledger in layout {found or 1} of Athenaeum, and this "
                     f"version reads layout {layout}: read it with the version that wrote it (athenaeum export), or "
                     "use another stream")
    return (theirs | declare if declare else None), drift


def _lost(state: dict) -> int:
    """Messages once stored and now gone: a stream that keeps history never loses one, so its
    sequences run from 1 without a hole."""
    last = int(state.get("last_seq") or 0)
    return last - int(state.get("messages") or 0) if last else 0


def _said(option: str, value: object) -> str:
    return "unlimited" if option in LIMITS and value == LIMITS[option] else str(value)
