"""compose.yaml describes the production topology: valid against the Compose schema, and
every Athenaeum service runs a real ``athenaeum`` verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tests" / "data" / "compose-spec.json"

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_yaml_is_valid_against_the_compose_schema(compose: dict) -> None:
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    validator.validate(compose)
    broken = compose | {"services": {"x": {"image": "a", "no_such_key": 1}}}
    assert not validator.is_valid(broken)  # the check can fail


def test_every_athenaeum_service_runs_a_real_verb_with_real_options(compose: dict) -> None:
    from athenaeum.services.cli.main import build_parser

    athenaeum = {name: service for name, service in compose["services"].items() if service.get("image") == "athenaeum:latest"}
    assert set(athenaeum) == {"commands", "projector", "timer", "http"}
    for name, service in athenaeum.items():
        args = build_parser().parse_args(service["command"])  # exits (fails the test) on a bad verb or option
        assert args.family == "serve" and args.services == name


def test_the_cluster_has_three_nodes_that_fsync_every_write(compose: dict) -> None:
    nodes = [name for name in compose["services"] if name.startswith("nats-")]
    assert len(nodes) == 3
    assert "sync_interval: always" in (ROOT / "deploy" / "nats.conf").read_text()
