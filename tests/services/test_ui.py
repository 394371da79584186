"""A human at the web page in a real headless browser (Debian's chromium, driven by
Playwright): opens the inbox, decides a pending ratification with a caveat, and watches it
ratified without reloading; then watches a proposal's tally move as an agent votes elsewhere.
A screenshot of each page, as a phone shows it, lands in ``tests/artifacts/ui/``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services.conftest import Served, served_over_http
from tests.services.ui_records import pending_human, seed_of, sent

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra: pip install -e '.[test]'")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine: apt-get install chromium "
                                "(.ci/run installs it where it runs as root with apt-get)")
ARTIFACTS = Path(__file__).parents[1] / "artifacts" / "ui"
PHONE = {"width": 390, "height": 844}
WAIT_MS = 15_000  # for a change to reach the page


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Served, httpx.Client]]:
    with served_over_http(tmp_path / "home") as served_and_client:
        yield served_and_client


@pytest.fixture
def page(site: tuple[Served, httpx.Client]) -> Iterator[sync_api.Page]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            context = browser.new_context(viewport=PHONE, base_url=str(site[1].base_url))
            context.set_default_timeout(WAIT_MS)
            yield context.new_page()
        finally:
            browser.close()


def shot(page: sync_api.Page, name: str) -> None:
    """Kept as a test artifact; and the page fits a phone's width (tables scroll inside)."""
    page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), f"{name} is wider than a phone"


def test_a_human_decides_a_pending_ratification_with_a_caveat_and_sees_it_ratified_live(
        site: tuple[Served, httpx.Client], page: sync_api.Page) -> None:
    served, http = site
    pending_human(http, "adr-ui")
    expect = sync_api.expect
    page.goto("/ui/")
    page.get_by_label("Your name").fill("ada")
    page.get_by_label("Paste your seed").fill(seed_of(served))
    shot(page, "sign-in")
    page.get_by_role("button", name="Open my inbox").click()
    page.wait_for_url("**/ui/inbox/ada")
    expect(page.get_by_role("link", name="adr-ui")).to_be_visible()
    expect(page.get_by_text("Signed in as ada, with your key")).to_be_visible()
    shot(page, "inbox")
    page.get_by_role("link", name="adr-ui").click()
    expect(page.locator("[data-status]")).to_have_text("pending-human")
    expect(page.locator("body[data-live=on]")).to_be_attached()  # following the ledger
    page.evaluate("window.loadedOnce = true")  # gone if the page reloads
    page.get_by_label("rewrite-with-caveats").check()
    page.get_by_role("button", name="Decide").click()
    refused = page.locator("#decide [data-outcome]")
    expect(refused).to_contain_text("caveat_incomplete")  # the CLI's refusal, in place; nothing written
    expect(page.locator("[data-status]")).to_have_text("pending-human")
    shot(page, "ratification-refused")
    page.get_by_label("Verifier").fill("make check")
    page.get_by_label("Verifier").press("Enter")  # the keyboard alone decides
    expect(page.locator("[data-status]")).to_have_text("ratified")
    expect(page.locator("[data-live-state]")).to_contain_text("Accepted: ratification decide")
    expect(page.get_by_text("rewrite-with-caveats by ada")).to_be_visible()
    assert page.evaluate("window.loadedOnce") is True
    shot(page, "ratification-ratified")
    for path, name in (("/ui/ratifications", "ratifications"), ("/ui/threads", "threads")):
        page.goto(path)
        shot(page, name)


def test_a_proposals_tally_moves_on_the_page_as_agents_vote_elsewhere(
        site: tuple[Served, httpx.Client], page: sync_api.Page) -> None:
    _, http = site
    sent(http, "quorum/propose", "alice", {"text": "Adopt the web page", "electorate": ["bob", "carol", "dave"],
                                           "threshold": 2, "proposal_id": "0000CAFE"})
    sent(http, "page/init", "alice", {"page": "wiki/ui.md", "content": "# UI\n"})
    sent(http, "thread/open", "alice", {"slug": "ui-thread", "context": "How do pages become canon?",
                                        "target": {"N": 1, "C": 1, "R": 1}, "body": "Humans approve."})
    expect = sync_api.expect
    page.goto("/ui/proposals/0000CAFE")
    expect(page.locator("body[data-live=on]")).to_be_attached()
    page.evaluate("window.loadedOnce = true")
    sent(http, "quorum/ack", "bob", {"proposal_id": "0000CAFE"})
    expect(page.locator(".tally")).to_contain_text("1 ACK")
    sent(http, "quorum/ack", "carol", {"proposal_id": "0000CAFE"})
    expect(page.locator("#proposal .status")).to_have_text("accepted")
    assert page.evaluate("window.loadedOnce") is True
    shot(page, "proposal")
    for path, name in (("/ui/proposals", "proposals"), ("/ui/threads/ui-thread", "thread"), ("/ui/canon", "canon")):
        page.goto(path)
        shot(page, name)
