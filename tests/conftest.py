"""Fixtures shared by the tests of several modules."""

import importlib.util
import sys
from pathlib import Path

import pytest


@pytest.fixture
def limit_16g(monkeypatch):
    """A memory limit of 16 GiB for the memory guard, whatever the machine has."""
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "16GiB")


#: The longest tests, each an xdist work unit of its own: the chapter runs (each executes
#: a whole chapter) and the grader's runs that wait for a hanging submission. nbmake's
#: runs of the chapters (`make test-all`) are too: each is the one test of its notebook.
SOLO = (
    "test_notebook_runs_from_installed_wheel",
    "test_grade_right_wrong_raising_hanging_and_broken_submissions",
    "test_grade_a_lab_function_that_hangs",
)


def pytest_configure(config):
    """Keep the order of the work units set below (`make test`).

    By default xdist sends the groups with the most tests first, which put the one-test
    units, the longest, last: one worker was still running chapters when the other had
    nothing left.
    """
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    # the notebook runs of the suite wait for kernel replies in short polls, as the book
    # build does (book/_ext/kernel_polling.py): a missed wake-up costs a second, not 240 s
    # (the floors' environment, `make test-min`, has no jupyter_client and runs no notebook)
    if importlib.util.find_spec("jupyter_client") is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
        import kernel_polling

        kernel_polling.install()


def _solo(item):
    return getattr(item, "originalname", None) in SOLO or item.path.suffix == ".ipynb"


def _group(item):
    return item.nodeid if _solo(item) else item.nodeid.split("::")[0]


def pytest_collection_modifyitems(config, items):
    """Group the tests for ``pytest -n N --dist loadgroup`` (`make test`), longest first.

    Every test file is one group, as with ``--dist loadfile`` (a file's module
    fixtures are built once), except the tests of SOLO: each is a group of its own, so
    that the longest tests are shared out over the workers instead of running one after
    the other in one of them. Under xdist the groups are sent longest first (the
    shortest last, so that the workers finish together): the SOLO tests, then the
    groups by their number of tests marked slow, then by their number of tests.
    """
    if not config.pluginmanager.hasplugin("xdist"):  # its marker would be unknown
        return
    groups = {}
    for item in items:
        groups.setdefault(_group(item), []).append(item)
        item.add_marker(pytest.mark.xdist_group(name=_group(item)))
    if not hasattr(config, "workerinput"):  # not an xdist worker: the files' own order
        return

    def longest_first(name):
        members = groups[name]
        solo = len(members) == 1 and _solo(members[0])
        n_slow = sum(m.get_closest_marker("slow") is not None for m in members)
        return (not solo, -n_slow, -len(members))

    order = {name: rank for rank, name in enumerate(sorted(groups, key=longest_first))}
    items.sort(key=lambda item: order[_group(item)])
