"""Fixtures shared by the tests of several modules."""

import pytest


@pytest.fixture
def limit_16g(monkeypatch):
    """A memory limit of 16 GiB for the memory guard, whatever the machine has."""
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "16GiB")
