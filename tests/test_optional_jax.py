"""JAX is the optional extra ``training`` of the package (lib.training, chapter 7 only).

``import lib`` and every module but ``lib.training``/``lib.teaching.training_widgets`` must work
in an environment without JAX, and ``lib.training`` must then say which extra to
install. Each check runs in a fresh interpreter in which ``jax``, ``jaxlib`` and ``optax``
cannot be imported (``sys.modules[name] = None`` makes ``import name`` raise ImportError).
"""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCK = "import sys\nfor _m in ('jax', 'jaxlib', 'optax'):\n    sys.modules[_m] = None\n"
#: every module of lib that chapters 1-6 and their tests use
MODULES = (
    "lib", "lib.theory", "lib.finite_size", "lib.hermite", "lib.quadrature", "lib.teachers", "lib.samplers",
    "lib.attention", "lib.simulation", "lib.baselines", "lib.spectral", "lib.teaching.claims", "lib.teaching.tables", "lib.teaching.labs",
    "lib.teaching.plotting", "lib.teaching.widgets", "lib.training_runs", "lib.loss_curves",
)  # fmt: skip


def _run(code: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, env=env, timeout=300)


def test_lib_imports_without_jax():
    code = "\n".join(f"import {m}" for m in MODULES)
    code += "\n"
    code += "bad = [m for m in sys.modules if m.split('.')[0] in ('jax', 'optax') and sys.modules[m] is not None]\n"
    code += "assert not bad, bad\nprint('ok')\n"
    done = _run(code)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_lib_does_not_import_training_eagerly():
    done = _run("import lib\nprint(sorted(m for m in sys.modules if m.startswith('lib.training')))")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


#: The install command the message gives (the package is not on PyPI: from its folder).
INSTALL = 'pip install -c constraints.txt ".[training]"'


def _pins() -> str:
    """``jax==X jaxlib==Y optax==Z`` as constraints.txt pins them."""
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines() if "==" in line)
    return " ".join(f"{name}=={pins[name]}" for name in ("jax", "jaxlib", "optax"))


def test_training_without_jax_names_the_extra():
    for module in ("lib.training", "lib.transformers", "lib.teaching.training_widgets"):
        done = _run(f"import {module}")
        assert done.returncode != 0
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("ImportError") and INSTALL in last, done.stderr[-2000:]
        # commands that work: not the PyPI name (the package is not published there),
        # and JAX at the versions the book is tested with
        assert "icl-nonlinear-book[training]" not in last
        assert f"pip install {_pins()}" in last
    # the student's command is the one of the student page
    assert '".[lab,training]"' in (ROOT / "book" / "student.md").read_text()
    # through the lazy attribute of lib as well
    done = _run("import lib\nlib.training")
    assert INSTALL in done.stderr


def test_jax_is_the_training_extra_not_a_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda reqs: {r.split(">")[0].split("=")[0].split("<")[0].strip() for r in reqs}  # noqa: E731
    assert not names(project["dependencies"]) & {"jax", "jaxlib", "optax"}
    assert names(project["optional-dependencies"]["training"]) == {"jax", "jaxlib", "optax"}
    minimal = (ROOT / "requirements-min.txt").read_text()
    assert not any(line.startswith(("jax", "optax")) for line in minimal.splitlines())
    full = (ROOT / "requirements.txt").read_text().splitlines()
    assert any(line.startswith("jax==") for line in full) and any(line.startswith("optax==") for line in full)
