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
    code = "import sys, lib; lib.teaching.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "True", out.stdout + out.stderr


@pytest.mark.parametrize(
    "old, new",
    [
        ("lib.theory", "effective_noise"),
        ("lib.hermite", "teacher_moments"),
        ("lib.attention", "simulate"),
        ("lib.baselines", "spectral_predict"),
        ("lib", "plotting"),
        ("lib", "spectral_error"),
        ("lib.theory", "spectral_error"),
        ("lib.spectral", "spectral_overlap"),
        ("lib.training", "train_transformer"),
        ("lib.training", "train_transformer_grid"),
        ("lib.training", "TrainedTransformer"),
        ("lib.training", "ATTENTIONS"),
        ("lib.training", "SAMPLERS"),
        ("lib.training", "transformer_peak_bytes"),
        ("lib.training_runs", "loss_curve"),
    ],
)
def test_moved_names_say_where_they_went(old, new):
    import importlib

    if old == "lib.training":  # needs JAX (the extra 'training'); the floors run has none
        pytest.importorskip("jax")
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


#: Private modules meant to be shared inside ``lib``: their private names may be imported
#: by any module of ``lib``.
SHARED_PRIVATE_MODULES: frozenset[str] = frozenset(
    {"lib._checks", "lib._limits", "lib._ridge_solvers", "lib._csvfile", "lib._training_core"}
)
#: Private names still imported across modules, as ``(importer, module, name)``: none.
ALLOWED_PRIVATE_IMPORTS: frozenset[tuple[str, str, str]] = frozenset()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_imports() -> set[tuple[str, str, str]]:
    """``(importer, module, name)`` for every private name a lib module imports from another.

    A private name is one with a leading underscore (not a dunder). Importing one from a
    module of :data:`SHARED_PRIVATE_MODULES` is allowed, and so is importing a private
    module of one's own package (``from . import _csvfile``) or of the shared list.
    """
    mods = _modules()
    found = set()
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "lib":
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in mods:  # a module: private only if its own name is
                    module, item = full, None
                else:
                    module, item = target, alias.name
                if module == name or module in SHARED_PRIVATE_MODULES:
                    continue
                if item is not None and _is_private(item):
                    found.add((name, module, item))
                elif _is_private(module.rpartition(".")[2]) and module.rpartition(".")[0] != package:
                    found.add((name, module, module.rpartition(".")[2]))
    return found


def test_no_private_name_is_imported_across_modules():
    found = _private_imports()
    bad = sorted(found - ALLOWED_PRIVATE_IMPORTS)
    assert not bad, (
        "private names imported across lib modules (make them public in the module that owns them, "
        "or move a shared validator to lib/_checks.py): " + ", ".join(f"{i} imports {m}.{n}" for i, m, n in bad)
    )
    stale = sorted(ALLOWED_PRIVATE_IMPORTS - found)
    assert not stale, f"remove these fixed entries from ALLOWED_PRIVATE_IMPORTS: {stale}"


def test_the_private_import_check_sees_a_violation(tmp_path, monkeypatch):
    # the check must be able to fail: a fake lib with one cross-module private import
    fake = tmp_path / "lib"
    (fake / "sub").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "a.py").write_text("def _helper():\n    pass\n")
    (fake / "b.py").write_text("from lib.a import _helper\nfrom lib._checks import _anything\n")
    (fake / "sub" / "__init__.py").write_text("from . import _own\n")
    (fake / "sub" / "_own.py").write_text("")
    (fake / "c.py").write_text("from lib.sub import _own\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "LIB", fake)
    assert _private_imports() == {("lib.b", "lib.a", "_helper"), ("lib.c", "lib.sub._own", "_own")}
