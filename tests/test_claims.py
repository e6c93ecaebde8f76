"""Tests for lib.teaching.claims: each check passes on supporting numbers and fails otherwise."""

import numpy as np
import pytest

from lib.teaching import claims
from lib.teaching.claims import ClaimError


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


# Bad input must raise, never pass: each of these calls passed silently before the
# checks in lib.teaching.claims, so each case fails if its check is removed.
NAN, INF = np.nan, np.inf


@pytest.mark.parametrize(
    ("condition", "error", "match"),
    [
        (np.nan, TypeError, "condition must be a bool"),
        ([], TypeError, "condition must be a bool"),
        (np.array([], dtype=bool), ValueError, "condition must not be empty"),
        ("False", TypeError, "condition must be a bool"),
        ("", TypeError, "condition must be a bool"),
        (1.0, TypeError, "condition must be a bool"),
        ([1, 1], TypeError, "condition must be a bool"),
        (None, TypeError, "condition must be a bool"),
    ],
)
def test_claim_refuses_non_booleans(condition, error, match):
    with pytest.raises(error, match=match):
        claims.claim(condition, "bad condition")


@pytest.mark.parametrize("condition", [True, np.bool_(True), [True, True], np.ones(3, bool)])
def test_claim_accepts_booleans(condition):
    claims.claim(condition, "true")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rel": NAN}, "rel must be a finite number >= 0; got nan"),
        ({"abs": NAN}, "abs must be a finite number >= 0; got nan"),
        ({"rel": INF}, "rel must be a finite number >= 0; got inf"),
        ({"abs": INF}, "abs must be a finite number >= 0; got inf"),
        ({"rel": 0.1, "abs": NAN}, "abs must be"),
        ({"rel": -0.1}, "rel must be a finite number >= 0"),
    ],
)
def test_claim_close_refuses_bad_tolerances(kwargs, match):
    with pytest.raises(ValueError, match=match):
        claims.claim_close(1, 2, "bad tolerance", **kwargs)


@pytest.mark.parametrize("tol", ["0.5", True, [0.5]])
def test_claim_close_refuses_non_numeric_tolerances(tol):
    with pytest.raises(TypeError, match="rel must be a single real number"):
        claims.claim_close(1, 1.2, "bad tolerance", rel=tol)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: claims.claim_close([], [], "x", abs=0.1), ValueError, "actual must not be empty"),
        (lambda: claims.claim_close(1, [NAN], "x", abs=0.1), ValueError, "expected must be finite"),
        (lambda: claims.claim_close("1", "1", "x", abs=0.1), TypeError, "actual must be real"),
        (lambda: claims.claim_below([], 1, "x"), ValueError, "smaller must not be empty"),
        (lambda: claims.claim_below(0, NAN, "x"), ValueError, "larger must be finite"),
        (lambda: claims.claim_below("0", "1", "x"), TypeError, "smaller must be real"),
        (lambda: claims.claim_between([], 0, 1, "x"), ValueError, "value must not be empty"),
        (lambda: claims.claim_between(NAN, 0, 1, "x"), ValueError, "value must be finite"),
        (lambda: claims.claim_monotone([1, NAN, 3], "x"), ValueError, "values must be finite"),
        (lambda: claims.claim_monotone(["1", "2"], "x"), TypeError, "values must be real"),
        (lambda: claims.claim_consistent(NAN, 0.1, 1, "x"), ValueError, "estimate must be"),
        (lambda: claims.claim_consistent(1, [], 1, "x"), ValueError, "se must not be empty"),
        (lambda: claims.claim_consistent(1, INF, 5, "x"), ValueError, "se must be finite"),
    ],
)
def test_values_must_be_non_empty_finite_numbers(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("margin", [NAN, INF, -0.1])
def test_claim_below_refuses_bad_margins(margin):
    with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
        claims.claim_below(0.0, 1.0, "bad margin", margin=margin)


@pytest.mark.parametrize(
    ("value", "low", "high", "error", "match"),
    [
        (0.5, NAN, 1, ValueError, "low must be a number or \\+-inf, not NaN"),
        (5, 0, NAN, ValueError, "high must be a number or \\+-inf, not NaN"),
        (0.5, 1, 0, ValueError, "low must be <= high"),
        (0.5, "0", 1, TypeError, "low must be a single real number"),
        (0.5, 0, [1, 2], TypeError, "high must be a single real number"),
    ],
)
def test_claim_between_refuses_bad_bounds(value, low, high, error, match):
    with pytest.raises(error, match=match):
        claims.claim_between(value, low, high, "bad bounds")


def test_claim_between_allows_infinite_bounds():
    # one-sided claims, as in equivalence/verification.ipynb
    claims.claim_between([0.0, 3.0], 0.0, INF, "non-negative")
    claims.claim_between([-5.0, 3.0], -INF, 3.5, "at most 3.5")
    with pytest.raises(ClaimError):
        claims.claim_between(-1.0, 0.0, INF, "non-negative")


@pytest.mark.parametrize(
    ("estimate", "se", "target", "z"),
    [
        (1, 0.1, 5, NAN),
        (1, 0.0, 5, INF),  # inf * 0 is NaN: the check would pass for any estimate
        (1, 0.1, 5, INF),
        (1, 0.1, 1, -1.0),
    ],
)
def test_claim_consistent_refuses_bad_z(estimate, se, target, z):
    with pytest.raises(ValueError, match="z must be a finite number >= 0"):
        claims.claim_consistent(estimate, se, target, "bad z", z=z)


@pytest.mark.parametrize("kwargs", [{"increasing": "no"}, {"strict": 0}, {"increasing": None}])
def test_claim_monotone_refuses_non_bool_flags(kwargs):
    with pytest.raises(TypeError, match="must be True or False"):
        claims.claim_monotone([3, 2, 1], "bad flag", **kwargs)
