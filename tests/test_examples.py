"""The Examples sections of ``lib``'s docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

MODULES = (
    "lib._checks", "lib.quadrature", "lib.hermite", "lib.teachers", "lib.samplers", "lib.attention", "lib.simulation",
    "lib.baselines", "lib.spectral", "lib.theory.marchenko_pastur", "lib.theory.linear",
    "lib.theory.nonlinear", "lib.theory.kappa_inf", "lib.theory.gap", "lib.theory.spectral_limits", "lib.finite_size.data",
    "lib.finite_size.fits", "lib.finite_size.study", "lib.teaching.claims", "lib.teaching.tables",
)  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, globs={**vars(module), "np": np}, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
