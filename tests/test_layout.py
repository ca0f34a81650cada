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


def _packages() -> list[Path]:
    return sorted(p.parent for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py"))


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_package_says_what_lives_in_it_and_what_it_may_import(package):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    members = sorted({p.stem for p in package.glob("*.py") if p.stem != "__init__"}
                     | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()})
    unnamed = [m for m in members if f"``{m}``" not in doc and f"``{m}/``" not in doc and f".{m}`" not in doc]
    assert unnamed == [], f"{package.name}/__init__.py does not name {unnamed}"
    assert "May import" in doc


def test_no_source_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}


def test_core_and_charts_import_nothing_that_computes():
    """``tools.core`` imports only itself; ``tools.charts`` only itself and ``tools.core`` (DESIGN.md)."""
    graph = _graph()
    allowed = {"tools.core": ("tools.core",), "tools.charts": ("tools.core", "tools.charts")}
    offenders = {m: sorted(d for d in deps if not d.startswith(allowed[p]))
                 for p in allowed for m, deps in graph.items() if m.startswith(p)}
    assert {m: d for m, d in offenders.items() if d} == {}


def test_the_readme_layout_names_every_package():
    layout = (ROOT / "README.md").read_text().split("## Layout", 1)[1].split("```")[1]
    missing = [str(p.relative_to(ROOT)) for p in _packages() if p.parent != ROOT and f"{p.name}/" not in layout]
    assert missing == []


#: The command families: each computes typed facts and has one formatter that writes the words (DESIGN.md).
FAMILIES = ("similarity", "attention", "projection", "benchmark", "inspection", "layers", "corpus")
REPLY_TYPES = {"Result", "Table", "Chart", "Artifact"}


def _builds_replies(path: Path) -> list[str]:
    """Where ``path`` constructs a reply object or calls a chart builder (``charts.x(...)``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id in REPLY_TYPES:
            found.append(f"{fn.id}() at line {node.lineno}")
        elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id == "charts":
            found.append(f"charts.{fn.attr}() at line {node.lineno}")
    return found


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_writes_its_replies_in_one_formatter(family):
    """Tools return facts; only the family's ``replies`` modules build Results, tables, charts and downloads."""
    package = ROOT / "tools" / family
    assert (package / "facts.py").is_file() and (package / "replies.py").is_file()
    offenders = {p.name: hits for p in sorted(package.glob("*.py"))
                 if not p.stem.startswith("replies") and (hits := _builds_replies(p))}
    assert offenders == {}


#: The toolkit's floors, lowest first: a module may import its own floor and those below, never one above.
FLOORS = (("tools.core",), ("tools.models", "tools.charts"), ("tools.encoding",))


def _floor(module: str) -> int:
    """Which floor a toolkit module stands on (the command families stand above every floor)."""
    for level, prefixes in enumerate(FLOORS):
        if module.startswith(prefixes):
            return level
    return len(FLOORS)


def test_no_arrow_runs_back_up_inside_the_toolkit():
    graph = _graph()
    upward = {m: sorted(d for d in deps if d.startswith("tools.") and _floor(d) > _floor(m))
              for m, deps in graph.items() if m.startswith("tools.")}
    assert {m: d for m, d in upward.items() if d} == {}


def test_the_app_never_reaches_the_process_wide_default_hub():
    """The app's hub (``ModelHub(settings)``) reaches every command through its context; ``default_hub()`` and
    ``as_model(name)`` are the notebook's conveniences only."""
    named = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "assistant").rglob("*.py")
                   if "default_hub" in p.read_text() or "as_model" in p.read_text())
    assert named == []


def test_tables_and_columns_are_read_back_only_in_their_familys_replies():
    """A Result's table or column names are the family formatter's words: nothing else reads them back
    (``--vs`` compares facts through the command's own ``differ``)."""
    offenders = []
    for path in [*(ROOT / "assistant").rglob("*.py"), *(ROOT / "tools").rglob("*.py")]:
        if path.name.startswith("replies"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "table"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
