"""Helpers shared by the tests of several modules."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

#: Largest memory a refused call may allocate before its error.
SMALL = 8 * 2**20


def raises_early(exc, match, func, *args, **kwargs):
    """Call ``func(*args, rng=Generator, **kwargs)`` (if it takes rng) and check the error.

    Returns the exception. Asserts: type ``exc``, ``match`` in the message, traced
    peak memory below ``SMALL``, and (when a generator was passed) no draw from it.
    """
    rng = np.random.default_rng(123)
    state = rng.bit_generator.state
    if kwargs.pop("with_rng", False):
        kwargs["rng"] = rng
    tracemalloc.start()
    try:
        with pytest.raises(exc, match=match) as info:
            func(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < SMALL, f"{peak / 2**20:.1f} MiB allocated before the error"
    assert rng.bit_generator.state == state, "random numbers were drawn before the error"
    return info.value
