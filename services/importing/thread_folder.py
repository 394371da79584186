"""An original dialogue thread folder, ``<dialogue-root>/<slug>/`` (``../shared/FORMATS.md``),
read: what it becomes (an ``ImportThread``), every rule of PROTOCOLS.md section 3 its entries
break, by file and line, and the files no thread has.

As the original documents and its checker reads it: ``meta.yaml``'s ``status`` says whether a
human crystallized the last closure (or closed it without); ``migration_mode: archival`` marks
the entry files historical text, kept but not read as entries (its checker skips them too);
``crystallized.md`` and ``crystallized.sig``, written after recognition, are kept as found."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from athenaeum.aggregates.rules import SLUG, Invalid
from athenaeum.aggregates.thread import (
    TOLERANCE, BadEvalRef, CurrentMismatch, MissingLastEval, ReopenExhausted, SelfEvaluation, ThreadClosed,
    ThreadNotClosed,
)
from athenaeum.events.imported import SourceFile
from athenaeum.events.thread import (
    ZERO, Axis, Crystallization, EntryKind, Evaluation, ImportedEntry, OpenQuestion, Settled, Settlement, Vector,
)
from athenaeum.events.thread_commands import ImportThread
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.importing import folder_files
from athenaeum.services.importing.findings import Findings, Reading
from athenaeum.services.importing.front_matter import split
from athenaeum.services.importing.times import moment
from athenaeum.services.importing.yaml_lines import Located, Unparsable, located

THREAD, META, ENTRIES = "thread.md", "meta.yaml", "entries"
CRYSTALLIZED = ("crystallized.md", "crystallized.sig")  # kept as found, never read (a signature may be binary)
ARCHIVAL = "archival"  # meta.yaml's ``migration_mode`` for a thread wrapped from an old single file
ENTRY_NAME = re.compile(r"^([0-9]+)-(.+)\.md$")
QUESTION = re.compile(r"^\s*[-*]?\s*\**(OQ-[0-9]+)\**\s*[:.—-]\s*(.+?)\s*$")
SECTION = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)


def read(folder: Path, source: str) -> Reading:
    findings = Findings()
    names, others = folder_files.files_under(folder)
    known = [n for n in names if n in (THREAD, META, *CRYSTALLIZED)
             or (n.startswith(ENTRIES + "/") and ENTRY_NAME.match(n[8:]))]
    unknown = [n for n in names if n not in known] + others
    contents = folder_files.contents(folder, known)
    # The crystallized files are kept, not read; one too large to keep is a finding, as any file.
    texts = findings.texts({name: content for name, content in contents.items()
                            if name not in CRYSTALLIZED or content is None})
    opening = _opening(texts, folder.name, findings)
    archival = opening is not None and opening["archival"]
    entry_names = [name for name in known if name.startswith(ENTRIES + "/")]
    entries = [] if archival else _entries(entry_names, texts, findings)
    if opening is None or entries is None or None in contents.values():
        return Reading(folder.name, None, findings, unknown)
    opening["settled"] = _settled(opening.pop("meta"), entries, archival, findings)
    files = [SourceFile(name=name, content=contents[name]) for name in known]
    command = ImportThread(source=source, entries=entries, files=files, findings=list(findings), **opening)
    # Named by the slug it is imported as (which a finding says is not its folder's name, if so).
    return Reading(command.slug, msgspec.structs.replace(command, command_id=f"import:{fingerprint(command)}"),
                   findings, unknown)


def _front(text: str, name: str, findings: Findings) -> tuple[Located, str] | None:
    try:
        document = split(text)
    except Unparsable as error:
        findings.add(Invalid.code, name, (error.line or 0) + 1, str(error))
        return None
    if document is None or not isinstance(document.front.value, dict):
        findings.add(Invalid.code, name, 1, "no YAML front matter between --- lines")
        return None
    return document.front, document.body


def _opening(texts: dict[str, str], folder: str, findings: Findings) -> dict[str, Any] | None:
    if THREAD not in texts or META not in texts:
        for name in (THREAD, META):
            if name not in texts:
                findings.add(Invalid.code, name, None, f"{name} is missing; nothing is imported")
        return None
    found = _front(texts[THREAD], THREAD, findings)
    try:
        meta = located(texts[META])
    except Unparsable as error:
        findings.add(Invalid.code, META, error.line, str(error))
        return None
    if not isinstance(meta.value, dict):
        findings.add(Invalid.code, META, 1, "meta.yaml is no map of the thread's fields; nothing is imported")
    if found is None or not isinstance(meta.value, dict):
        return None
    front, body = found
    slug, opened_by, opened_at = front.value.get("slug"), front.value.get("opened_by"), moment(front.value.get("opened_at"))
    usable = True
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        findings.add(Invalid.code, THREAD, front.line("slug"), f"slug {slug!r} is not a kebab slug; nothing is imported")
        usable = False
    elif slug != folder:
        findings.add(Invalid.code, THREAD, front.line("slug"), f"slug {slug!r} is not the folder's name {folder!r}")
    if not isinstance(opened_by, str) or not opened_by.strip() or opened_at is None:
        findings.add(Invalid.code, THREAD, front.line("opened_at"), "opened_by and opened_at are needed; nothing is "
                                                                    "imported")
        usable = False
    sections = dict(_sections(body))
    context = sections.get("Context", "").strip()
    if not context:
        findings.add(Invalid.code, THREAD, None, "no ## Context section; nothing is imported")
        usable = False
    questions = [OpenQuestion(id=m.group(1), text=m.group(2))
                 for line in sections.get("Open Questions (OQ)", "").splitlines() if (m := QUESTION.match(line))]
    archival = meta.value.get("migration_mode") == ARCHIVAL
    target = _vector((meta.value.get("rolespace") or {}).get("target") if isinstance(meta.value.get("rolespace"), dict)
                     else None)
    if archival and target is None:
        target = ZERO  # the original asks no target of an archival thread, and nothing continues one
    elif target is None or min(target.N, target.C, target.R) <= 0:
        findings.add(Invalid.code, META, meta.line("rolespace", "target"), "rolespace.target needs N, C and R above 0; "
                                                                           "nothing is imported")
        usable = False
    if not usable:
        return None
    return {"slug": slug, "opened_by": opened_by, "opened_at": opened_at, "context": context,
            "open_questions": questions, "target": target,
            "participants": [str(p) for p in meta.value.get("participants") or []],
            "topics": [str(t) for t in meta.value.get("topics") or []], "archival": archival, "meta": meta}


def _settled(meta: Located, entries: list[ImportedEntry], archival: bool, findings: Findings) -> Settlement | None:
    """What meta.yaml says a human made of the last closure, if it says one decided it; a
    decision on a closure the entries do not end with is a finding, and not imported."""
    try:
        status = Settled(meta.value.get("status"))
    except ValueError:
        return None  # open, pending-<agent>, awaiting-crystallization, reopened: the entries tell
    if not archival and not (entries and entries[-1].kind is EntryKind.CLOSURE):
        last = f"entry {entries[-1].n} is a {entries[-1].kind.value}" if entries else "there is no entry"
        findings.add(Invalid.code, META, meta.line("status"), f"status {status.value}, yet {last}: no closure awaited "
                                                             "a decision; imported as the entries stand")
        return None
    crystallization = meta.value.get("crystallization")
    block = crystallization if isinstance(crystallization, dict) and status is Settled.CRYSTALLIZED else {}
    signer, pages = block.get("signed_by"), block.get("canon_pages")
    return Settlement(status=status, signed_by=str(signer) if signer else None,
                      canon_pages=tuple(str(page) for page in pages) if isinstance(pages, list) else ())


def _sections(body: str) -> list[tuple[str, str]]:
    marks = list(SECTION.finditer(body))
    return [(m.group(1), body[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(body)])
            for i, m in enumerate(marks)]


def _vector(value: Any) -> Vector | None:
    try:
        return msgspec.convert(value, Vector)
    except (msgspec.ValidationError, TypeError):
        return None


def _entries(names: list[str], texts: dict[str, str], findings: Findings) -> list[ImportedEntry] | None:
    """Every entry (``names``), in its number's order, checked as the rules check an append;
    None when one cannot be read, its text or its front matter (the thread's sums would be guesses)."""
    read: list[tuple[str, ImportedEntry, Located]] = []
    for name in sorted(names):
        if name not in texts:
            return None  # not text, or too large: said where it was read
        entry = _entry(name, texts[name], findings)
        if entry is None:
            return None
        read.append((name, *entry))
    read.sort(key=lambda item: item[1].n)
    previous: tuple[str, ImportedEntry] | None = None
    total, closure, awaiting, reopened = ZERO, None, False, set()
    for name, entry, front in read:
        line = front.line
        if entry.n != (previous[1].n + 1 if previous else 1):
            findings.add(Invalid.code, name, line("n"), f"entry {entry.n} does not follow entry "
                                                        f"{previous[1].n if previous else 0}")
        if previous is None and entry.last_eval is not None:
            findings.add(BadEvalRef.code, name, line("last_eval"), "the first entry has no entry before it to evaluate")
        if previous is not None:
            if entry.last_eval is None:
                findings.add(MissingLastEval.code, name, line("n"), "an entry after the first evaluates the one before")
            elif front.value["last_eval"].get("ref") != Path(previous[0]).name:
                findings.add(BadEvalRef.code, name, line("last_eval", "ref"), f"last_eval.ref is not {Path(previous[0]).name}")
            if entry.author == previous[1].author:
                findings.add(SelfEvaluation.code, name, line("author"), f"{entry.author} follows their own entry")
        if entry.last_eval is not None:
            if any(not 0 <= value <= 1 for value in entry.last_eval.v.values().values()):
                findings.add(Invalid.code, name, line("last_eval", "v"), "an evaluation's values lie in [0, 1]")
            total = total + entry.last_eval.v
        if entry.kind is EntryKind.REOPEN:
            if closure is None:
                findings.add(ThreadNotClosed.code, name, line("type"), "a reopen with no closure to reopen")
            elif closure in reopened:
                findings.add(ReopenExhausted.code, name, line("type"), f"closure {closure} was already reopened once")
            reopened.add(closure)
            awaiting = False
        elif awaiting:
            findings.add(ThreadClosed.code, name, line("type"), f"appended after closure {closure}, which awaits "
                                                                "crystallization")
        if entry.kind is EntryKind.CLOSURE:
            stated = entry.current_at_close
            if stated is not None and any(abs(a - b) > TOLERANCE for a, b in
                                          zip(stated.values().values(), total.values().values())):
                findings.add(CurrentMismatch.code, name, line("current_at_close"),
                             f"current_at_close is not the sum of the evaluations ({total.N:g}, {total.C:g}, {total.R:g})")
            closure, awaiting = entry.n, True
        previous = (name, entry)
    return [entry for _, entry, _ in read]


def _entry(name: str, text: str, findings: Findings) -> tuple[ImportedEntry, Located] | None:
    found = _front(text, name, findings)
    if found is None:
        return None
    front, body = found
    value = front.value
    try:
        kind = EntryKind(value.get("type"))
        ts = moment(value.get("ts"))
        n, reason = value.get("n"), value.get("reason")
        if ts is None or type(n) is not int or n < 1 or not str(value.get("author") or "").strip():
            raise ValueError("n (a whole number from 1), author and ts are needed")  # (true is no number)
        if reason is not None and not isinstance(reason, str):
            raise ValueError("a reopen's reason is a text")
        evaluation = value.get("last_eval")
        last_eval = None if evaluation is None else Evaluation(
            ref=_ref(evaluation.get("ref")), v=msgspec.convert(evaluation.get("v"), Vector))
        crystallization = value.get("proposed_crystallization")
        closing = {}
        if kind is EntryKind.CLOSURE:
            closing = {"current_at_close": msgspec.convert(value.get("current_at_close"), Vector),
                       "proposed_crystallization": msgspec.convert(crystallization, Crystallization),
                       "summary": body.strip() or None}
        axis = value.get("declared_axis")
        entry = ImportedEntry(n=value["n"], kind=kind, author=str(value["author"]), ts=ts, body=body or "\n",
                              declared_axis=Axis(axis) if axis else None, last_eval=last_eval,
                              reason=reason, **closing)
    except (ValueError, TypeError, AttributeError, msgspec.ValidationError) as error:
        findings.add(Invalid.code, name, 1, f"not an entry: {error}; nothing is imported")
        return None
    return entry, front


def _ref(ref: Any) -> int:
    """The entry number a ``last_eval.ref`` names (its file name's NNN), 0 if none."""
    match = ENTRY_NAME.match(str(ref or ""))
    return int(match.group(1)) if match else 0
