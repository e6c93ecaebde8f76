"""Fixtures shared by the tests of several modules."""

import pytest


@pytest.fixture
def limit_16g(monkeypatch):
    """A memory limit of 16 GiB for the memory guard, whatever the machine has."""
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "16GiB")


#: The tests that each execute a whole chapter: one xdist work unit each.
NOTEBOOK_RUNS = ("test_notebook_runs_from_installed_wheel",)


def pytest_collection_modifyitems(config, items):
    """Group the tests for ``pytest -n N --dist loadgroup`` (`make test`).

    Every test file is one group, as with ``--dist loadfile`` (a file's module
    fixtures are built once), except the chapter runs of tests/book/test_notebooks.py:
    each is a group of its own, so that the chapters, the longest tests, are shared out
    over the workers instead of running one after the other in one of them.
    """
    for item in items:
        if getattr(item, "originalname", None) in NOTEBOOK_RUNS:
            group = item.nodeid
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(name=group))
