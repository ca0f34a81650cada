"""The layout DESIGN.md promises: arrows point one way, and there is no import cycle.

Imports inside functions count too: a lazy import hides a cycle from the interpreter,
not from a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("assistant", "tools")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module of our packages that ``path`` imports (top-level or inside a function)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    graph = {}
    for name, path in modules.items():
        graph[name] = {m for m in _imports(path) if m in modules and m != name and m not in PACKAGES}
    return graph


def test_the_toolkit_never_imports_the_assistant_or_gradio():
    offenders = {}
    for path in (ROOT / "tools").rglob("*.py"):
        bad = {m for m in _imports(path) if m.split(".")[0] in ("assistant", "gradio")}
        if bad:
            offenders[_module_name(path)] = sorted(bad)
    assert offenders == {}


def test_there_is_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            pytest.fail("import cycle: " + " -> ".join(cycle))
