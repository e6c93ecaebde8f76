"""The layout of ``lib``: an acyclic import graph, imports at module level only, modules
of readable size, and a light ``import lib`` (no matplotlib, no ipywidgets)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "lib"
#: Largest module, in lines ("no module over ~800 lines").
MAX_LINES = 800
#: Modules owned by the teaching layer's developers and not (yet) split.
SIZE_EXEMPT: frozenset[str] = frozenset()


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(LIB.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _lib_imports(node: ast.AST, module: str, is_package: bool) -> set[str]:
    """The ``lib`` modules a node imports (``from lib import x`` counts ``lib.x`` if it is one)."""
    mods = _modules()
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import):
            found |= {a.name for a in sub.names if a.name.split(".")[0] == "lib"}
        elif isinstance(sub, ast.ImportFrom):
            if sub.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - sub.level + 1]
                target = ".".join(base + ([sub.module] if sub.module else []))
            else:
                target = sub.module or ""
            if target.split(".")[0] != "lib":
                continue
            for a in sub.names:
                full = f"{target}.{a.name}"
                found.add(full if full in mods else target)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        top = ast.Module(body=[s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))], type_ignores=[])
        deps = _lib_imports(top, name, path.name == "__init__.py")
        # a package's __init__ re-exports its submodules: that is not a cycle
        graph[name] = {d for d in deps if d != name and not (name == "lib" or d.startswith(name + "."))}
    return graph


def test_import_graph_has_no_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep) :] + [dep]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if dep in graph and not state.get(dep):
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node)


def test_no_function_level_import_of_lib():
    bad = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if _lib_imports(node, name, path.name == "__init__.py"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not bad, "imports of lib modules inside functions or classes: " + ", ".join(bad)


def test_no_module_is_too_long():
    long = {
        str(p.relative_to(ROOT)): n
        for p in LIB.rglob("*.py")
        if p.name not in SIZE_EXEMPT and (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_import_lib_does_not_import_matplotlib_or_ipywidgets():
    code = "import sys, lib; print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_plotting_and_widgets_load_on_first_use():
    code = "import sys, lib; lib.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "True", out.stdout + out.stderr


@pytest.mark.parametrize(
    "old, new",
    [
        ("lib.theory", "effective_noise"),
        ("lib.hermite", "teacher_moments"),
        ("lib.attention", "simulate"),
        ("lib.baselines", "spectral_predict"),
    ],
)
def test_moved_names_say_where_they_went(old, new):
    import importlib

    module = importlib.import_module(old)
    with pytest.raises(AttributeError, match=f"{old}.{new} has moved to lib"):
        getattr(module, new)


def test_every_lib_module_has_an_api_page():
    api = ROOT / "book" / "api"
    text = "\n".join(p.read_text() for p in api.glob("*.md"))
    missing = [
        name
        for name in _modules()
        if name != "lib" and not name.split(".")[-1].startswith("_") and f"automodule:: {name}\n" not in text
    ]
    assert not missing, f"modules without an automodule directive in book/api/: {missing}"
