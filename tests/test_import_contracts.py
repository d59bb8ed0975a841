"""DESIGN section 2: the headless parts never pull in textual or torch (checked in a
fresh interpreter, since this test process itself may have imported them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def test_trace_and_analysis_import_neither_textual_nor_torch(tmp_path: Path):
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", '
                     '"pid": 1, "tid": 1, "ts": 1, "dur": 2}]}')
    code = (
        "import pkgutil, importlib, profiling.trace, profiling.analysis\n"
        "for m in pkgutil.iter_modules(profiling.analysis.__path__):\n"
        "    importlib.import_module('profiling.analysis.' + m.name)\n"
        f"profiling.trace.load_trace({str(trace)!r})"
    )
    loaded = modules_after(code)
    for forbidden in ("textual", "torch", "rich"):
        assert not any(m == forbidden or m.startswith(forbidden + ".") for m in loaded), forbidden


def test_the_viewer_never_imports_torch():
    loaded = modules_after("import tui.cli, tui.app")
    assert "textual" in loaded
    assert not any(m == "torch" or m.startswith("torch.") for m in loaded)


def test_the_cli_offers_exactly_the_variants_capture_knows():
    # tui.cli may not import profiling.capture at module level (startup without
    # torch), so it spells the names itself; this keeps the two lists one list.
    from profiling.capture.config import VARIANT_NAMES
    from tui.cli_options import VARIANTS

    assert VARIANTS == VARIANT_NAMES
