"""The installed package holds the app only: test and bench fixtures live under tests/.

``tests/fixtures`` (the synthetic traces) used to ship inside ``tui``; this keeps
``profiling`` and ``tui`` from importing anything under ``tests`` again, which
would break an installed attn-tui (``tests`` is not packaged).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved against its package."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            out.add(base)
    return out


def test_the_package_never_imports_tests() -> None:
    offenders = {}
    for top in ("profiling", "tui"):
        for path in sorted((REPO / top).rglob("*.py")):
            bad = {m for m in imported_modules(path) if m == "tests" or m.startswith("tests.")}
            if bad:
                offenders[str(path.relative_to(REPO))] = sorted(bad)
    assert not offenders, offenders


def test_the_scan_sees_imports() -> None:
    """The check above can fail: this file itself imports modules the scan finds."""
    found = imported_modules(Path(__file__))
    assert {"ast", "pathlib"} <= found
    fixtures = imported_modules(REPO / "tests" / "fixtures" / "flat_trace.py")
    assert "tests.fixtures.synthetic" in fixtures


def test_no_fixture_modules_in_the_package() -> None:
    assert not (REPO / "tui" / "synthetic.py").exists()
    assert not (REPO / "tui" / "flat_trace.py").exists()
