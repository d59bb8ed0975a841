"""List modules over ~400 lines and functions over ~80 (the project's size rule).

    python tools/check_sizes.py [--module-lines 400] [--function-lines 80] [DIR ...]

Counts physical lines (a function from its ``def`` or first decorator to its last
line, nested functions counted within their parent too).  Exits 1 when anything is
listed, so it can gate CI once the tree is within the rule.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

DEFAULT_DIRS = ("profiling", "tui", "tests", "bench", "tools")
SKIP_PARTS = {"flash_kernel", "__snapshots__", ".venv"}


def oversized(path: Path, module_lines: int, function_lines: int) -> list[str]:
    """One line per module or function of ``path`` over its limit."""
    text = path.read_text(encoding="utf-8")
    out = []
    lines = text.count("\n") + (not text.endswith("\n") and bool(text))
    if lines > module_lines:
        out.append(f"{path}: module {lines} lines")
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > function_lines:
                out.append(f"{path}:{start}: function {node.name} {length} lines")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=list(DEFAULT_DIRS))
    parser.add_argument("--module-lines", type=int, default=400)
    parser.add_argument("--function-lines", type=int, default=80)
    args = parser.parse_args(argv)
    found = []
    for folder in args.dirs:
        for path in sorted(Path(folder).rglob("*.py")):
            if not SKIP_PARTS & set(path.parts):
                found += oversized(path, args.module_lines, args.function_lines)
    print("\n".join(found) if found else "every module and function is within the limits")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
