"""The notebooks work where readers open them (issue 12).

- every notebook's first two cells are the setup and macros cells that
  ``scripts/sync_notebooks.py`` writes (in sync with ``_config.yml``);
- the setup cell is hidden in the HTML and a no-op (no output) where ``lib`` is present;
- the macros defined in every notebook are exactly ``_config.yml``'s MathJax macros;
- no notebook uses ``myst_nb.glue`` or ``{glue}`` roles (Colab has no myst_nb);
- ``slow``: the package built as a wheel and installed NON-editable into a fresh virtual
  environment runs every notebook copied out of the repository, each in its own
  directory, in a plain Jupyter kernel; afterwards every ``{eval}`` name is bound to a
  string in that kernel, so no placeholder is left where a number belongs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import fcntl  # a lock shared by the xdist workers (POSIX only)
except ImportError:  # Windows: each worker builds its own venv
    fcntl = None

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("sync_notebooks", ROOT / "scripts" / "sync_notebooks.py")
sync = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sync)

# The book checked: the repository, or a copy of it (BOOK_ROOT=/tmp/copy pytest ...).
BOOK = Path(os.environ.get("BOOK_ROOT", ROOT)).resolve()
CONFIG = sync.load_config(BOOK)
NOTEBOOKS = sync.toc_notebooks(BOOK)
IDS = [str(p.relative_to(BOOK / "book")) for p in NOTEBOOKS]
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def eval_names(nb: dict) -> list[str]:
    """The names used in ``{eval}`` roles of the notebook's markdown cells, in order."""
    names: list[str] = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for name in EVAL_ROLE.findall(_source(cell)):
                if name.strip() not in names:
                    names.append(name.strip())
    return names


def test_toc_lists_notebooks():
    assert len(NOTEBOOKS) >= 7, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_in_sync(path):
    """Run `python scripts/sync_notebooks.py` if this fails."""
    text = path.read_text(encoding="utf-8")
    assert sync.dumps(sync.synced(json.loads(text), CONFIG)) == text, (
        f"{path.relative_to(BOOK)} is out of sync: run python scripts/sync_notebooks.py"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_setup_cell_first_and_hidden(path):
    cell = _load(path)["cells"][0]
    assert cell["cell_type"] == "code"
    assert cell["metadata"].get("book_sync") == "setup"
    tags = cell["metadata"].get("tags", [])
    # hidden in the HTML but still executed by the inline build (remove-cell is not)
    assert "remove-input" in tags and "remove-output" in tags and "remove-cell" not in tags
    # collapsed in JupyterLab (a bar instead of the code), as in the HTML
    assert cell["metadata"].get("jupyter") == {"source_hidden": True}
    src = _source(cell)
    assert 'find_spec("lib") is None' in src
    assert CONFIG["repository"]["url"].rstrip("/") in src
    assert max(len(line) for line in src.splitlines()) <= 88


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_macros_match_config(path):
    cell = _load(path)["cells"][1]
    assert cell["cell_type"] == "markdown"
    assert cell["metadata"].get("book_sync") == "macros"
    assert "remove-cell" in cell["metadata"].get("tags", [])
    src = _source(cell)
    expected = sync.macros(CONFIG)
    assert expected, "no macros in _config.yml"
    # MyST front matter (jupyterlab-myst) ...
    assert sync.parse_frontmatter_macros(src) == expected
    # ... and MathJax definitions (Jupyter without jupyterlab-myst, Colab)
    defs = src.strip().splitlines()[-1]
    for name, body in expected.items():
        assert f"\\def\\{name}" in defs and f"{{{body}}}" in defs, name
    assert defs.count("\\def") == len(expected)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_glue(path):
    for i, cell in enumerate(_load(path)["cells"]):
        src = _source(cell)
        assert not re.search(r"\bglue\b|\{glue", src), (
            f"cell {i} of {path.relative_to(BOOK)} uses glue; use {{eval}} roles"
        )


def test_no_foreign_imports():
    for path in NOTEBOOKS:
        assert not sync.foreign_imports(_load(path)), path


def test_sync_is_idempotent(tmp_path):
    """The script run twice on a copy changes nothing the second time."""
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(BOOK / name, tmp_path / name)
    shutil.copytree(BOOK / "book", tmp_path / "book")
    assert sync.main(["--root", str(tmp_path)]) == 0
    first = {p: p.read_text() for p in sync.toc_notebooks(tmp_path)}
    assert sync.main(["--root", str(tmp_path), "--check"]) == 0
    assert sync.main(["--root", str(tmp_path)]) == 0
    assert {p: p.read_text() for p in first} == first
    for text in first.values():
        nb = json.loads(text)
        roles = [c["metadata"].get("book_sync") for c in nb["cells"]]
        assert roles[:2] == ["setup", "macros"]
        captions = roles.count(sync.CAPTION_ROLE)
        assert roles.count(None) == len(roles) - 2 - captions
        # one caption cell right after each named figure cell
        named = [i for i, c in enumerate(nb["cells"]) if sync.caption_cell(c) is not None]
        assert captions == len(named)
        assert all(roles[i + 1] == sync.CAPTION_ROLE for i in named)


def test_setup_cell_installs_the_training_extra_where_jax_is_needed():
    """A chapter that imports lib's JAX modules installs icl-nonlinear-book[training]."""
    for path in NOTEBOOKS:
        nb = _load(path)
        wants = sync.needs_training(nb)
        assert ("[training] @ git+" in _source(nb["cells"][0])) == wants, path
    # only chapter 7 needs JAX: chapters 1-6 run where the extra is not installed
    needing = {p.relative_to(BOOK / "book").as_posix() for p in NOTEBOOKS if sync.needs_training(_load(p))}
    assert needing == {"trained/networks.ipynb"}
    cell = lambda src: {"cell_type": "code", "metadata": {}, "source": [src]}  # noqa: E731
    for src, want in [
        ("from lib import training", True),
        ("import lib.transformers as tf", True),
        ("from lib.training import train_linear_attention", True),
        ("from lib import training_runs\nfrom lib.teaching import claims", False),
        ("from lib.teaching import training_widgets", True),
        ("import lib", False),
    ]:
        assert sync.needs_training({"cells": [cell(src)]}) == want, src


def test_setup_cell_is_silent_noop():
    """Executed in a kernel where lib is importable, the setup cell prints nothing."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    sources = {_source(_load(p)["cells"][0]) for p in NOTEBOOKS}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sorted(sources)]
    nb.cells.append(nbformat.v4.new_code_cell("import lib"))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    for cell in nb.cells:
        assert cell.outputs == [], cell.outputs


# --------------------------------------------------------------------------------------
# slow: a fresh environment with the package installed from its wheel
# --------------------------------------------------------------------------------------
def _pins() -> list[str]:
    """requirements.txt's `name==version` pins (the book's checked versions)."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if "==" in ln.split("#")[0]]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    # no PYTHONPATH: other tests (the Dask ones) set it to the repository, where pip
    # would find the editable install's metadata and skip installing the wheel
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """The venv of :func:`_wheel_venv`, built once for all the xdist workers of a run.

    The chapter runs are shared out over the workers (tests/conftest.py); without the
    lock each worker built its own venv (a pip wheel build and install, 10-20 s). The
    first worker builds it in the run's temporary folder, the others wait for it there.
    Without xdist or without ``fcntl`` (Windows) the venv is built in this process.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ or fcntl is None:
        return _wheel_venv(tmp_path_factory.mktemp("wheel-venv"))
    shared = tmp_path_factory.getbasetemp().parent / "wheel-venv"  # the run's, common to its workers
    with open(shared.with_name("wheel-venv.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        built = shared / "built.json"
        if not built.exists():
            shutil.rmtree(shared, ignore_errors=True)  # a worker that died while building
            shared.mkdir()
            venv = _wheel_venv(shared)
            built.write_text(json.dumps({key: str(path) for key, path in venv.items()}))
        return {key: Path(path) for key, path in json.loads(built.read_text()).items()}


def _wheel_venv(base: Path) -> dict[str, Path]:
    """A fresh venv in ``base`` with the book's package installed, NOT editable, from a wheel.

    The wheel is built from a copy of the package's files (nothing is written into the
    repository) and installed with ``--no-deps``. The dependencies and ipykernel are
    those of the running environment, made visible through a ``.pth`` line (a path
    line only: the editable install of ``lib`` there is not activated, and the venv's
    own site-packages, holding the wheel, come first). With ``BOOK_WHEEL_DEPS=pypi``
    they are instead installed from PyPI at requirements.txt's pins (3 more minutes).
    """
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "lib", src / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = base / "dist"
    # build offline with this environment's setuptools where it has one (3.11 venvs do)
    offline = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            *offline,
            "-w",
            str(dist),
            str(src),
        ]
    )
    wheel = next(dist.glob("*.whl"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    site = Path(purelib).resolve()
    pip_install = [str(py), "-m", "pip", "install", "--quiet"]
    if os.environ.get("BOOK_WHEEL_DEPS") == "pypi":
        constraints = base / "constraints.txt"
        constraints.write_text("\n".join(_pins()) + "\n")
        _run([*pip_install, "-c", str(constraints), str(wheel), "ipykernel"])
    else:
        import sysconfig

        here = Path(sysconfig.get_paths()["purelib"]).resolve()
        # the wheel first: once the book's environment is visible through the .pth,
        # pip would see its (editable) icl-nonlinear-book and skip the wheel
        _run([*pip_install, "--no-deps", "--ignore-installed", str(wheel)])
        (site / "zz_book_deps.pth").write_text(f"{here}\n")
    kernels = base / "kernels"
    (kernels / "book-wheel").mkdir(parents=True)
    spec = {
        "argv": [str(py), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "book wheel",
        "language": "python",
    }
    (kernels / "book-wheel" / "kernel.json").write_text(json.dumps(spec))
    return {"python": py, "kernels": kernels, "site": site}


def execute_notebook(nb, km, cwd: Path, *, env: dict | None = None, timeout: int = 240):
    """Run ``nb`` in a kernel of ``km``, started in ``cwd``; the kernel is shut down after.

    nbclient shuts down only the kernels of the managers it creates: one handed in
    (``km=``) is left running, idle, after the notebook -- one per notebook test, each
    holding its chapter's arrays. Here the kernel and the client's channels are stopped
    once the notebook is done, also when a cell fails or times out. (nbclient's own
    ``cleanup_kc=True`` deadlocks with a synchronous ``KernelManager``.)
    """
    import nbclient

    client = nbclient.NotebookClient(nb, km=km, timeout=timeout, resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute(**({} if env is None else {"env": env}))
    finally:
        if client.kc is not None:
            client.kc.stop_channels()
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return nb


@pytest.mark.parametrize("fails", [False, True], ids=["passes", "fails"])
def test_no_kernel_outlives_its_notebook(fails, tmp_path):
    """The kernel of a notebook run with its own kernel manager is gone afterwards.

    Also when a cell fails: the leak this guards against was 10 idle kernels (3.5 GB)
    left by the notebook tests until the end of `make test`.
    """
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.manager import KernelManager

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nx = os.getpid()")]
    if fails:
        nb.cells.append(nbformat.v4.new_code_cell("1 / 0"))
    km = KernelManager(kernel_name="python3")
    if fails:
        with pytest.raises(nbclient.exceptions.CellExecutionError):
            execute_notebook(nb, km, tmp_path, timeout=60)
    else:
        execute_notebook(nb, km, tmp_path, timeout=60)
        assert nb.cells[0].outputs == []
    assert km.has_kernel is False and not km.is_alive()


HELPER_CELL = """\
def _book_check_evals(names, cell):
    missing = [n for n in names if n not in globals()]
    assert not missing, f"markdown cell {cell}: {{eval}} names undefined: {missing}"
    bad = [n for n in names if not isinstance(globals()[n], str)]
    assert not bad, f"markdown cell {cell}: {{eval}} names not strings: {bad}"
"""
WHERE_CELL = """\
import os as _os
import lib as _lib
_where = _os.path.realpath(_lib.__file__)
assert _where.startswith({site!r}), f"lib imported from {{_where}}, not the wheel"
"""


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs_from_installed_wheel(path, wheel_venv, tmp_path):
    """Copied out of the repository, the notebook runs with the wheel-installed lib.

    This is `make test`'s one execution of each chapter (nbmake's in-repository run
    is `make test-all`'s): every cell must run without error in a plain kernel, with
    the per-cell timeout of the book build. After each markdown cell with ``{eval}``
    roles a check cell asserts that every name is bound to a string at that point, as
    the inline build and jupyterlab-myst read them; the last cell checks that ``lib``
    is the installed wheel. The kernel is shut down after the notebook.
    """
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    work = tmp_path / path.stem
    work.mkdir()
    copy = work / path.name
    shutil.copy(path, copy)
    nb = nbformat.read(copy, as_version=4)
    new = nbformat.v4.new_code_cell
    cells = [new(HELPER_CELL)]
    for i, cell in enumerate(nb.cells):
        cells.append(cell)
        names = eval_names({"cells": [cell]})
        if names:
            cells.append(new(f"_book_check_evals({names!r}, {i})"))
    cells.append(new(WHERE_CELL.format(site=str(wheel_venv["site"]))))
    nb.cells = cells
    ksm = KernelSpecManager(kernel_dirs=[str(wheel_venv["kernels"])])
    km = KernelManager(kernel_name="book-wheel", kernel_spec_manager=ksm)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    # a plain kernel: no PYTHONPATH, cwd outside the repository
    execute_notebook(nb, km, work, env=env, timeout=240)
    assert not km.is_alive(), "the notebook's kernel outlived its test"


def test_check_mode_detects_a_changed_macro(tmp_path):
    """A macro changed in _config.yml makes `--check` fail until the script runs."""
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(BOOK / name, tmp_path / name)
    shutil.copytree(BOOK / "book", tmp_path / "book")
    assert sync.main(["--root", str(tmp_path)]) == 0
    cfg = tmp_path / "_config.yml"
    text = cfg.read_text()
    assert 'rhonl: "\\\\rho_{\\\\mathrm{nl}}"' in text
    cfg.write_text(text.replace('rhonl: "\\\\rho_{\\\\mathrm{nl}}"', 'rhonl: "\\\\rho_{\\\\text{nl}}"'))
    assert sync.main(["--root", str(tmp_path), "--check"]) == 1
    assert sync.main(["--root", str(tmp_path)]) == 0
    nb = json.loads(sync.toc_notebooks(tmp_path)[0].read_text())
    assert sync.parse_frontmatter_macros(_source(nb["cells"][1]))["rhonl"] == ("\\rho_{\\text{nl}}")


# --------------------------------------------------------------------------------------
# solutions collapsed in JupyterLab (jupyter.source_hidden / outputs_hidden)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_solutions_collapsed(path):
    """Every cell inside a solution span carries the collapsing metadata, every hidden
    code cell (tag remove-input) outside them its source's; no other cell does.

    The cells are those `scripts/sync_notebooks.py` derives from the solution markers:
    run it if this fails.
    """
    cells = _load(path)["cells"]
    where = str(path.relative_to(BOOK))
    assert len(sync.solution_cells(cells, where)) == len(cells), (
        f"{where}: a markdown cell holds solution text and, after its solution-end, "
        "more text: run python scripts/sync_notebooks.py (it splits the cell)"
    )
    flags = sync.collapse_flags(cells, where)
    for i, (cell, hidden) in enumerate(zip(cells, flags)):
        expected = sync.expected_collapse(cell, hidden)
        tags = cell["metadata"].get("tags", [])
        if not hidden and cell["cell_type"] == "code" and "remove-input" in tags:
            assert expected == {"source_hidden": True}
        assert sync.collapse_state(cell) == expected, (
            f"{where}, cell {i}: {'inside' if hidden else 'outside'} a solution span, "
            f"jupyter metadata {sync.collapse_state(cell)}: run scripts/sync_notebooks.py"
        )
        if hidden and cell["cell_type"] == "markdown":
            assert _source(cell).startswith("\n"), f"{where}, cell {i}"
    starts = sum("{solution-start}" in _source(c) for c in cells if c["cell_type"] == "markdown")
    # a solution's code and closing text are collapsed (every span here has some)
    assert sum(flags) >= starts, where


def _book_copy(tmp_path: Path) -> Path:
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(BOOK / name, tmp_path / name)
    shutil.copytree(BOOK / "book", tmp_path / "book")
    return tmp_path


def test_check_mode_detects_collapse_metadata(tmp_path, capsys):
    """`--check` fails on a solution cell not collapsed, or a collapsed cell outside."""
    root = _book_copy(tmp_path)
    assert sync.main(["--root", str(root)]) == 0
    path = next(p for p in sync.toc_notebooks(root) if any(sync.collapse_flags(_load(p)["cells"])))
    nb = _load(path)
    flags = sync.collapse_flags(nb["cells"])
    inside = flags.index(True)
    outside = next(
        i
        for i, (c, f) in enumerate(zip(nb["cells"], flags))
        if i >= 2 and not f and "remove-input" not in c["metadata"].get("tags", [])
    )
    # a solution cell without its metadata
    del nb["cells"][inside]["metadata"]["jupyter"]
    path.write_text(sync.dumps(nb), encoding="utf-8")
    capsys.readouterr()
    assert sync.main(["--root", str(root), "--check"]) == 1
    out = capsys.readouterr().out
    assert path.name in out and f"collapse metadata of cells [{inside}]" in out
    assert sync.main(["--root", str(root)]) == 0
    assert sync.main(["--root", str(root), "--check"]) == 0
    # a cell outside every span with it
    nb = _load(path)
    nb["cells"][outside]["metadata"]["jupyter"] = {"source_hidden": True}
    path.write_text(sync.dumps(nb), encoding="utf-8")
    assert sync.main(["--root", str(root), "--check"]) == 1
    assert sync.main(["--root", str(root)]) == 0
    assert "jupyter" not in _load(path)["cells"][outside]["metadata"]


def test_check_mode_detects_hidden_code_and_notebook_metadata(tmp_path, capsys):
    """`--check` fails on a hidden code cell shown in full, or on a notebook whose
    kernelspec is not the one JupyterLab writes (which marked it modified on opening)."""
    root = _book_copy(tmp_path)
    assert sync.main(["--root", str(root)]) == 0
    path = sync.toc_notebooks(root)[0]
    nb = _load(path)
    check = next(
        i
        for i, c in enumerate(nb["cells"])
        if i >= 2 and c["cell_type"] == "code" and "remove-input" in c["metadata"].get("tags", [])
    )
    assert nb["cells"][check]["metadata"]["jupyter"] == {"source_hidden": True}
    assert nb["metadata"]["kernelspec"] == sync.KERNELSPEC
    assert {k: v for k, v in nb["metadata"]["language_info"].items() if k != "version"} == sync.LANGUAGE_INFO
    del nb["cells"][check]["metadata"]["jupyter"]
    nb["metadata"]["kernelspec"]["display_name"] = "Python 3"
    path.write_text(sync.dumps(nb), encoding="utf-8")
    capsys.readouterr()
    assert sync.main(["--root", str(root), "--check"]) == 1
    out = capsys.readouterr().out
    assert f"collapse metadata of cells [{check}]" in out and "notebook metadata" in out
    assert sync.main(["--root", str(root)]) == 0
    assert sync.main(["--root", str(root), "--check"]) == 0


def test_notebook_metadata_keeps_a_stored_python_version():
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3"}, "language_info": {"name": "python"}}
    out = sync.notebook_metadata(meta)
    assert out["kernelspec"] == sync.KERNELSPEC and out["language_info"] == sync.LANGUAGE_INFO
    meta["language_info"]["version"] = "3.11.7"
    assert sync.notebook_metadata(meta)["language_info"]["version"] == "3.11.7"
    assert sync.notebook_metadata(sync.notebook_metadata(meta)) == sync.notebook_metadata(meta)


def _md(text, **extra):
    return {
        "cell_type": "markdown",
        "id": extra.get("id", "m"),
        "metadata": {},
        "source": text,
    }


def _code(text, tags=None):
    return {
        "cell_type": "code",
        "id": "c",
        "execution_count": None,
        "metadata": {"tags": tags} if tags else {},
        "outputs": [],
        "source": text,
    }


START = "```{solution-start} ex-a\n:class: dropdown\n```\n"
END = "```{solution-end}\n```"


def test_collapse_rules_on_a_synthetic_notebook():
    """Which cells collapse, which are split, and that a second pass changes nothing."""
    cells = [
        _md(
            "## Exercises\n\n````{exercise} A\n:label: ex-a\nQ?\n````\n\n" + START + "\nFirst idea.",
            id="a",
        ),  # exercise + start marker: stays visible
        _code("x = 1\nprint(x)"),  # inside: collapsed, input and output
        _md("The answer is 1.", id="b"),  # inside: collapsed
        _md(
            "So it is.\n" + END + "\n\n````{exercise} B\n:label: ex-b\nQ?\n````", id="d"
        ),  # solution text, end marker, next exercise: split
        _code("y = 2"),  # outside
        _md(START.replace("ex-a", "ex-b"), id="e"),  # start marker only: visible
        _code("z = 3"),  # inside
        _md(END + "\n\nText after.", id="f"),  # end marker first: visible
        _code("assert True", ["remove-input", "remove-output"]),  # a hidden check
    ]
    out = sync.with_collapsed_solutions(cells, "synthetic")
    assert [c["id"] for c in out] == ["a", "c", "b", "d", "d-2", "c", "e", "c", "f", "c"]
    assert [sync.collapse_state(c) for c in out] == [
        {},
        {"source_hidden": True, "outputs_hidden": True},
        {"source_hidden": True},
        {"source_hidden": True},
        {},
        {},
        {},
        {"source_hidden": True, "outputs_hidden": True},
        {},
        {"source_hidden": True},  # a hidden check: its source collapsed, no bar comment
    ]
    assert "".join(out[-1]["source"]) == "assert True"
    assert "".join(out[3]["source"]) == "\nSo it is.\n" + END
    assert "".join(out[4]["source"]).startswith("````{exercise} B")
    assert "".join(out[2]["source"]) == "\nThe answer is 1."
    assert sync.with_collapsed_solutions(out, "synthetic") == out

    # the book build sees the same Markdown: only blank lines and cell breaks moved
    def text(cs):
        md = [c for c in cs if c["cell_type"] == "markdown"]
        return "\n".join("".join(c["source"]) for c in md)

    assert text(out).split() == text(cells).split()


@pytest.mark.parametrize(
    "cells",
    [
        [_md(START), _code("x = 1")],  # never closed
        [_md(END)],  # end without start
        [_md(START), _md(START)],  # nested
    ],
    ids=["unclosed", "end-without-start", "nested"],
)
def test_unmatched_solution_markers_are_refused(cells):
    with pytest.raises(sync.SolutionMarkerError):
        sync.with_collapsed_solutions(cells, "synthetic")
