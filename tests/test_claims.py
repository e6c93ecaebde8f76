"""Tests for lib.claims: each check passes on supporting numbers and fails otherwise."""

import numpy as np
import pytest

from lib import claims
from lib.claims import ClaimError


def test_claim_close_relative_and_absolute():
    claims.claim_close(1.009, 1.0, "within 1 %", rel=0.01)
    claims.claim_close([1.0, 2.0], [1.004, 1.996], "to 0.005", abs=0.005)
    with pytest.raises(ClaimError, match="within 1 %"):
        claims.claim_close(1.011, 1.0, "within 1 %", rel=0.01)
    with pytest.raises(ValueError, match="tolerance"):
        claims.claim_close(1.0, 1.0, "no tolerance")
    with pytest.raises(ValueError, match="finite"):
        claims.claim_close(np.nan, 1.0, "nan", rel=0.1)


def test_orderings_and_ranges():
    claims.claim_below(0.1, 0.2, "smaller")
    claims.claim_below([0.1, 0.2], [0.3, 0.4], "smaller, with margin", margin=0.05)
    with pytest.raises(ClaimError, match="tanh has the smaller"):
        claims.claim_below(0.3, 0.2, "tanh has the smaller")
    claims.claim_between([0.2, 0.5], 0.0, 1.0, "in the unit interval")
    with pytest.raises(ClaimError):
        claims.claim_between(1.5, 0.0, 1.0, "in the unit interval")


def test_monotone():
    claims.claim_monotone([1, 2, 3], "grows")
    claims.claim_monotone([3, 2, 2], "does not grow", increasing=False, strict=False)
    with pytest.raises(ClaimError, match="entry 1 to 2"):
        claims.claim_monotone([1, 2, 2], "grows strictly")
    with pytest.raises(ValueError):
        claims.claim_monotone([1], "too short")


def test_consistent_and_boolean():
    claims.claim_consistent(1.65, 0.01, 1.66, "agrees", z=2)
    with pytest.raises(ClaimError, match="standard errors"):
        claims.claim_consistent(1.70, 0.01, 1.65, "agrees", z=3)
    claims.claim(np.array([True, True]), "all true")
    with pytest.raises(ClaimError, match="is false"):
        claims.claim(False, "something")
    with pytest.raises(ValueError):
        claims.claim_consistent(1.0, -1.0, 1.0, "negative se")
