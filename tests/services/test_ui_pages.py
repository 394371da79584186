"""The web page at /ui/ as HTTP answers it: the pages read from the same queries, the forms'
signing, the refusals and the live stream. The browser drives it in ``test_ui.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from athenaeum.services.identity.keys import new_seed
from tests.services.conftest import Served, served_over_http
from tests.services.ui_records import ARTIFACT, SHA, pending_human, seed_of, sent, signed_as


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, httpx.Client]]:
    with served_over_http(tmp_path_factory.mktemp("ui") / "home") as served_and_client:
        yield served_and_client


def main_of(html: str) -> str:
    return html[html.index("<main"):html.index("</main>")]


def test_the_inbox_lists_what_waits_on_the_human(site: tuple[Served, httpx.Client]) -> None:
    _, http = site
    pending_human(http, "ui-inbox")
    inbox = http.get("/ui/inbox/ada")
    assert inbox.status_code == 200 and inbox.headers["content-type"].startswith("text/html")
    assert '<a href="/ui/ratifications/ui-inbox">ui-inbox</a>' in inbox.text and "<td>decide</td>" in inbox.text
    assert http.get("/ui/inbox", params={"agent": "ada"}, follow_redirects=False).headers["location"] == "/ui/inbox/ada"
    bad = http.get("/ui/inbox/Not-A-Slug")
    assert bad.status_code == 400 and "<code>invalid</code>" in bad.text


def test_before_the_tally_a_ratification_shows_who_voted_never_how(site: tuple[Served, httpx.Client]) -> None:
    _, http = site
    sent(http, "ratification/init", "alice", {"topic": "ui-blind", "roster": ["alice", "bob"], "artifact": ARTIFACT})
    sent(http, "ratification/vote", "alice", {"topic": "ui-blind", "sha256": SHA, "decision": "SIGN"})
    page = main_of(http.get("/ui/ratifications/ui-blind").text)
    assert "<li>alice: has voted</li>" in page and "<li>bob: not yet</li>" in page
    assert "SIGN" not in page and "DISSENT" not in page and "Your decision" not in page


def test_a_decision_signed_through_the_page_is_refused_as_the_cli_refuses_it(site: tuple[Served, httpx.Client]) -> None:
    served, http = site
    pending_human(http, "ui-decide")
    seed = seed_of(served)
    bare = signed_as(http, seed, "ada", "ratification/decide", {"topic": "ui-decide", "decision": "rewrite-with-caveats"})
    cli = served.run("ratify", "decide", "ui-decide", "--decision", "rewrite-with-caveats", actor="ada")
    assert bare.status_code == 422 and bare.json()["error"]["code"] == "caveat_incomplete"
    assert cli.returncode == 1 and cli.stderr.startswith("rejected: caveat_incomplete")
    decision = {"topic": "ui-decide", "decision": "rewrite-with-caveats", "caveats": [{"atom": "A1", "verifier": "make check"}]}
    forged = signed_as(http, new_seed().decode(), "ada", "ratification/decide", decision)
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "bad_signature"
    unsigned = http.post("/commands/ratification/decide", headers={"X-Agent-Name": "ada"}, json=decision)
    assert unsigned.status_code == 401 and unsigned.json()["error"]["code"] == "bad_signature"
    assert "pending-human" in http.get("/ui/ratifications/ui-decide").text  # nothing refused was written
    decided = signed_as(http, seed, "ada", "ratification/decide", decision)
    assert decided.status_code == 200, decided.text
    page = main_of(http.get("/ui/ratifications/ui-decide").text)
    assert "data-status>ratified<" in page and "rewrite-with-caveats by ada" in page


def test_the_bytes_to_sign_are_refused_with_the_field_and_nothing_is_written(site: tuple[Served, httpx.Client]) -> None:
    _, http = site
    wrong = http.post("/ui/signing/ratification/decide", json={"actor": "ada", "command": {"topic": "x", "decision": "maybe"}})
    assert wrong.status_code == 400 and wrong.json()["error"]["field"] == "decision"
    nobody = http.post("/ui/signing/ratification/decide", json={"actor": "Ada!", "command": {"topic": "x", "decision": "reject"}})
    assert nobody.status_code == 400 and nobody.json()["error"]["field"] == "actor"
    unknown = http.post("/ui/signing/ratification/bless", json={"actor": "ada", "command": {}})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    internal = http.post("/ui/signing/page/reassess", json={"actor": "ada", "command": {"page": "a.md"}})
    assert internal.status_code == 404  # what only Athenaeum's own timer sends is offered to nobody
    given = http.post("/ui/signing/ratification/decide", json={"actor": "ada", "command": {
        "topic": "x", "decision": "reject", "command_id": "kept"}})
    assert json.loads(given.json()["command"])["command_id"] == "kept"


def test_proposals_threads_and_the_canon_board_show_their_records(site: tuple[Served, httpx.Client]) -> None:
    _, http = site
    sent(http, "quorum/propose", "alice", {"text": "Adopt the page", "electorate": ["bob", "carol"], "threshold": 2,
                                           "proposal_id": "00C0FFEE"})
    sent(http, "quorum/ack", "bob", {"proposal_id": "00C0FFEE"})
    proposal = main_of(http.get("/ui/proposals/00c0ffee").text)
    assert "<strong>1</strong> ACK" in proposal and "<li>bob: ACK</li>" in proposal and "<li>carol: not yet</li>" in proposal
    assert '<a href="/ui/proposals/00C0FFEE">' in http.get("/ui/proposals").text
    sent(http, "thread/open", "alice", {"slug": "ui-thread", "context": "How do pages become canon?",
                                        "target": {"N": 1, "C": 1, "R": 1}, "body": "Humans approve."})
    thread = main_of(http.get("/ui/threads/ui-thread").text)
    assert "suggested role is <strong>" in thread and "<strong>alice</strong>" in thread
    sent(http, "page/init", "alice", {"page": "wiki/ui.md", "content": "# UI\n"})
    board = main_of(http.get("/ui/canon").text)
    assert "<code>ui.md</code> · rev v1 · working" in board and "canonical: not ready: no agent is active" in board
    tasks = main_of(http.get("/ui/canon", params={"project": "nothing-here"}).text)
    assert "No task in nothing-here." in tasks
    assert http.get("/ui/proposals/FFFFFFFF").status_code == 404


def test_the_page_brings_its_own_script_and_style_and_fetches_nothing_elsewhere(site: tuple[Served, httpx.Client]) -> None:
    _, http = site
    for asset, kind in (("ui.js", "javascript"), ("ui.css", "text/css")):
        answer = http.get(f"/ui/static/{asset}")
        assert answer.status_code == 200 and kind in answer.headers["content-type"]
    for path in ("/ui/", "/ui/ratifications", "/ui/canon"):
        assert not re.search(r"(src|href)=\"(https?:)?//", http.get(path).text)
    assert "/ui/" not in http.get("/openapi.json").text  # the page is for people; the API is the contract


def test_every_change_of_a_view_is_announced_on_the_live_stream(site: tuple[Served, httpx.Client]) -> None:
    _, http = site
    with http.stream("GET", "/ui/events", timeout=20) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: ready"
        sent(http, "ratification/init", "alice", {"topic": "ui-live", "roster": ["alice"], "artifact": "# L\n"})
        changes = []
        for line in lines:  # bounded by the read timeout
            if line.startswith("data: ") and "ui-live" in line:
                changes.append(json.loads(line.removeprefix("data: ")))
                break
    assert changes[0]["key"] == "ratifications.ui-live" and changes[0]["position"] > 0


def test_the_canon_and_thread_forms_are_refused_with_the_clis_codes(site: tuple[Served, httpx.Client]) -> None:
    served, http = site
    sent(http, "page/init", "alice", {"page": "wiki/ui-forms.md", "content": "# Forms\n"})
    sent(http, "thread/open", "alice", {"slug": "ui-forms", "context": "c", "target": {"N": 1, "C": 1, "R": 1}, "body": "b"})
    seed = seed_of(served)
    for path, command, argv in (
            ("page/approve", {"page": "wiki/ui-forms.md", "level": "canonical"},
             ("page", "approve", "wiki/ui-forms.md", "--level", "canonical")),
            ("thread/refuse", {"slug": "ui-forms", "reason": "below target"},
             ("thread", "refuse", "ui-forms", "--reason", "below target"))):
        page = signed_as(http, seed, "ada", path, command)
        cli = served.run(*argv, actor="ada")
        assert page.status_code >= 400 and cli.returncode == 1
        assert cli.stderr.startswith(f"rejected: {page.json()['error']['code']}"), (page.text, cli.stderr)
