"""Dependencies point inward: events know only msgspec; aggregates add eventsourcing;
projectors know events; nothing inside reaches NATS, services or projectors."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "events": {"msgspec", "athenaeum.events"},
    "aggregates": {"msgspec", "eventsourcing", "athenaeum.events", "athenaeum.aggregates"},
    "projectors": {"msgspec", "athenaeum.events", "athenaeum.projectors"},
}


def imported_modules(source: Path, package: str = "athenaeum.x") -> set[str]:
    """Absolute names of what ``source``, a module of ``package``, imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            names.add(".".join(part for part in (base, node.module or "") if part))
    return names


def is_allowed(module: str, allowed: set[str]) -> bool:
    if module.split(".")[0] in sys.stdlib_module_names:
        return True
    return any(module == prefix or module.startswith(prefix + ".") for prefix in allowed)


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_a_folder_imports_only_what_lies_inward_of_it(folder: str) -> None:
    offenders = {
        f"{source.relative_to(ROOT)} imports {module}"
        for source in (ROOT / folder).rglob("*.py")
        for module in imported_modules(source, f"athenaeum.{folder}")
        if not is_allowed(module, ALLOWED[folder])
    }
    assert not offenders, sorted(offenders)


def test_the_check_catches_an_outward_import(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text("import nats\nfrom athenaeum.services import jetstream\nfrom ..services import cli\n")
    modules = imported_modules(source, "athenaeum.aggregates")
    assert modules == {"nats", "athenaeum.services"}
    assert not any(is_allowed(module, ALLOWED["aggregates"]) for module in modules)
