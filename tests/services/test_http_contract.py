"""The HTTP contract, fuzzed: schemathesis reads ``/openapi.json`` from a live ``athenaeum
serve`` and sends what it generates from the document, as alice with her bearer token. No
answer is a server error, every answer is one the document declares (status, headers, body),
and a request the document says is valid is never refused as ``invalid``, except by a rule no
JSON Schema can state: one that weighs another field, the clock or the ledger (named below).

Bounded: a few examples per operation, derandomized, so a run takes the same path each time."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.services.conftest import Served

# Refusals of a request the document admits, each by a rule that spans what a schema sees alone.
BEYOND_A_SCHEMA = {
    "after": "a position past the ledger's head",
    "expires_at": "a deadline in the past, by the service's clock",
    "expires_in": "a window longer than a century",
    "files": "an imported file named twice, or artifact.md, which the artifact's field carries",
    "entries": "an imported closure without its sum or its crystallization: what an entry needs depends on its kind",
    "votes.cast_at": "an imported vote's time RFC 3339 admits and no datetime holds (a leap second, the year 0)",
    # The other imported records' own times, likewise a plain string in the document.
    "reviews.posted_at": "an imported review's time that is no RFC 3339 datetime",
    "rulings.posted_at": "an imported ruling's time that is no RFC 3339 datetime",
    "pendingTrigger": "an imported task's pending trigger without its arbitrating status, or that status without it",
    "deadline": "a deadline in the past, by the service's clock",
    "deadline_in": "a window longer than a century",
    "threshold": "k above the electorate's size, or neither k nor a preset",
    "total": "N other than the electorate's size",
    "public_key": "a key whose checksum is wrong",
    "pages": "one page named twice, once inside wiki/ and once from the root",
    "to": "a page's lifecycle moved to where it already is",
    "content": "an edit that leaves the page's content as it is",
    "ruling": "a rule ruling on a trigger other than a contradiction",
    "contradictionResolution": "a resolution with a rule ruling only, and two different findings",
    "electorate": "an imported open proposal's, empty or naming an agent twice (a closed one's is its voters, maybe none)",
    "acks": "an imported proposal's votes, one per agent of its electorate, acks and nacks together",
    "Idempotency-Key": "a header naming another command id than the body's command_id",
}
EXAMPLES = 6  # per operation: about a minute on two cores


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[schemathesis.BaseSchema, dict[str, str]]]:
    """The document a live serve publishes, as schemathesis reads it, and alice's credentials."""
    served = Served(tmp_path_factory.mktemp("contract") / "home")
    try:
        served.enrol("alice")
        issued = served.run("agent", "token", "alice", actor="alice")
        assert issued.returncode == 0, issued.stderr
        token = issued.stdout.strip().splitlines()[-1]
        url = json.loads((served.data_dir / "serve.json").read_text())["http"]
        # X-Agent-Name names the token's holder: anyone else is actor_mismatch.
        yield schemathesis.openapi.from_url(f"{url}/openapi.json"), {"Authorization": f"Bearer {token}",
                                                                      "X-Agent-Name": "alice"}
    finally:
        served.stop()


def never_invalid_when_valid(ctx: schemathesis.CheckContext, response: schemathesis.Response,
                             case: schemathesis.Case) -> None:
    """A request generated as valid is refused as ``invalid`` only by a rule beyond a schema."""
    if case.meta is None or not case.meta.generation.mode.is_positive or response.status_code != 400:
        return
    field = json.loads(response.content).get("error", {}).get("field")
    assert field in BEYOND_A_SCHEMA, f"a request the document admits was refused: {response.content!r}"


def test_every_answer_is_the_one_the_document_declares(
        contract: tuple[schemathesis.BaseSchema, dict[str, str]]) -> None:
    document, alice = contract
    failures: dict[str, str] = {}
    operations = [result.ok() for result in document.get_all_operations()]
    assert len(operations) > 50
    for operation in operations:
        # Page paths and slugs are patterns most random strings miss: generating them is slow.
        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
        @given(operation.as_strategy())
        def answered_as_declared(case: schemathesis.Case) -> None:
            # 401, 403, 404, 409 and 422 refuse a valid request on who sends it, or on the
            # ledger's state: only a 400 says the request itself is wrong.
            case.call_and_validate(headers=alice, excluded_checks=[positive_data_acceptance],
                                   additional_checks=[never_invalid_when_valid])

        try:
            answered_as_declared()
        except (Exception, BaseExceptionGroup) as failure:  # noqa: BLE001  every operation is tried, all shown
            failures[operation.label] = str(failure)
    assert not failures, "\n\n".join(f"{label}:\n{failure}" for label, failure in failures.items())
