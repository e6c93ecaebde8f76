"""The package installs the book's JupyterLab setting (issue 31, the student path).

With JupyterLab's default lazy rendering of notebook cells, jupyterlab-myst shows the
``{eval}`` role names instead of the numbers on Run All. ``make lab`` and Binder copy
binder/overrides.json (notebook windowing mode "none") into JupyterLab's settings; a
student only runs ``pip install ".[lab]"`` in the handed-out package (book/student.md),
so the package itself must put the setting where JupyterLab reads it:
``<env>/share/jupyter/lab/settings/overrides.d/`` (pyproject.toml, ``data-files``).
"""

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts/make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

#: JupyterLab's application settings folder, relative to the environment's prefix
#: (``jupyter lab path``: Application directory <prefix>/share/jupyter/lab).
SETTINGS = Path("share/jupyter/lab/settings")
WINDOWING = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The handed-out package (make_student.write_package) built as a wheel and
    installed, without dependencies, into a fresh prefix; returns the prefix."""
    # offline build: this environment's setuptools, with its own bdist_wheel (70.1 and
    # newer) or the wheel package
    setuptools = pytest.importorskip("setuptools", reason="building the wheel offline needs setuptools")
    major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
    if (major, minor) < (70, 1) and importlib.util.find_spec("wheel") is None:
        pytest.skip("building the wheel offline needs setuptools >= 70.1 or the wheel package")
    base = tmp_path_factory.mktemp("lab-settings")
    package = make_student.write_package(base / "package")
    _pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(base / "dist"), str(package))
    (wheel,) = (base / "dist").glob("*.whl")
    prefix = base / "prefix"
    # --ignore-installed: without it pip first uninstalls the environment's own copy of
    # the package (the editable install the book build imports)
    _pip("install", "--quiet", "--no-deps", "--no-compile", "--ignore-installed", "--prefix", str(prefix), str(wheel))
    return prefix


def test_the_student_install_writes_the_windowing_setting(installed):
    files = sorted((installed / SETTINGS / "overrides.d").glob("*.json"))
    assert [f.name for f in files] == ["icl-nonlinear-book.json"], files
    assert json.loads(files[0].read_text()) == WINDOWING
    # the user's own overrides.json (a singleton JupyterLab reads after overrides.d) is
    # left alone: the package writes none
    assert not (installed / SETTINGS / "overrides.json").exists()


def test_the_installed_setting_is_the_one_make_lab_and_binder_copy():
    shipped = ROOT / "lib" / "teaching" / "lab_settings" / "icl-nonlinear-book.json"
    assert json.loads(shipped.read_text()) == json.loads((ROOT / "binder" / "overrides.json").read_text())
    assert json.loads(shipped.read_text()) == WINDOWING


def test_jupyterlab_reads_the_installed_setting(installed):
    """JupyterLab's server (jupyterlab_server) merges it into the notebook's defaults."""
    settings_utils = pytest.importorskip("jupyterlab_server.settings_utils", reason="JupyterLab is not installed")
    overrides, error = settings_utils._get_overrides(str(installed / SETTINGS))
    assert not error and overrides == WINDOWING


def test_jupyterlab_app_settings_folder_is_under_the_prefix():
    """Where pip's data files go (sysconfig's ``data`` path, the prefix) is JupyterLab's
    application folder's parent (jupyterlab.commands.get_app_dir)."""
    commands = pytest.importorskip("jupyterlab.commands", reason="JupyterLab is not installed")
    app_dir = Path(commands.get_app_dir()).resolve()
    assert app_dir == (Path(sysconfig.get_paths()["data"]) / "share" / "jupyter" / "lab").resolve()


def _own_install() -> str:
    """Where this environment imports ``lib`` from, outside the repository and with no
    PYTHONPATH (as the book build's kernels do when the package is installed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", "import lib; print(lib.__file__)"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=env,
    )
    return out.stdout.strip() if out.returncode == 0 else f"no lib: {out.stderr.strip()[-200:]}"


#: Read when the module is collected, before the fixture installs anything.
_OWN_BEFORE = _own_install()


def test_the_prefix_install_leaves_the_environments_own_package_alone(installed):
    # pip install --prefix, without --ignore-installed, uninstalled the editable install
    # of the book's venv: the book build after `make test` then found no `lib`
    assert _own_install() == _OWN_BEFORE
