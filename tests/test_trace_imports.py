"""The trace package's modules import one another without a circle.

A circle (``decode`` -> ``lenient`` -> ``decode`` was one) makes import order
matter and hides which module owns what; the event types now live in
``events`` and the column extraction in ``chunk`` so none is needed.
"""

from __future__ import annotations

import grimp


def _graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("profiling")
    modules = {m for m in graph.modules if m.startswith("profiling.trace.")}
    return {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges[node]:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_trace_modules_have_no_import_circle():
    assert _cycles(_graph()) == []


def test_the_circle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
