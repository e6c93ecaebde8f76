"""Tests for lib.theory.context_free: the closed forms against the quadrature, a Monte
Carlo check at d = 8, the d -> infinity limit, and input validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import lib
from lib import teachers
from lib.theory import CONTEXT_FREE_QUAD_ATOL, context_free_error, sphere_moment
from lib.theory.context_free import _mean_abs_t

RHO = 0.1


@pytest.mark.parametrize("d", [2, 3, 8, 32])
def test_h2_closed_form(d):
    assert context_free_error("h2", d, RHO) == pytest.approx(1 + RHO - 1 / d, abs=1e-14)


def test_one_address():
    # lib.theory re-exports its modules' functions; lib.training no longer does (issue 33)
    import lib.theory

    assert lib.theory.context_free_error is context_free_error
    pytest.importorskip("jax", reason="lib.training needs the optional extra 'training' (JAX)")
    from lib import training

    with pytest.raises(
        AttributeError, match="lib.training.context_free_error has moved to lib.theory.context_free_error"
    ):
        training.context_free_error


def test_sphere_moments_by_integration():
    from scipy import integrate, special

    for d in (2, 5, 8):
        beta = (d - 3) / 2
        norm = special.beta(0.5, (d - 1) / 2)
        for m in range(7):
            num = integrate.quad(lambda t: t**m, -1, 1, weight="alg", wvar=(beta, beta))[0]
            assert sphere_moment(m, d) == pytest.approx(num / norm, abs=1e-12)


@pytest.mark.parametrize("teacher", ["h2", "relu", "abs", "cubic", [0.3, 0.5, 0.4, 0.0, 0.2]])
@pytest.mark.parametrize("d", [2, 8, 64, 256])
def test_quadrature_matches_closed_form(teacher, d):
    closed = context_free_error(teacher, d, RHO)
    quad = context_free_error(teacher, d, RHO, method="quadrature")
    assert abs(closed - quad) <= CONTEXT_FREE_QUAD_ATOL


def test_callable_goes_through_quadrature():
    h2 = lambda z: (z**2 - 1) / math.sqrt(2)  # noqa: E731
    assert context_free_error(h2, 8, RHO) == pytest.approx(1 + RHO - 1 / 8, abs=CONTEXT_FREE_QUAD_ATOL)


def test_relu_closed_form_against_hermite_series():
    # sum_m a_m^2 (1 - E t^m) to degree 60, the tail bracketed by [0, E t^62 * tail]
    a = lib.get_link("relu").coefficients(60)
    mu = np.array([sphere_moment(m, 8) for m in range(61)])
    partial = RHO + 0.5 - np.sum(a**2 * mu)
    tail = 0.5 - np.sum(a**2)
    got = context_free_error("relu", 8, RHO)
    assert partial - sphere_moment(62, 8) * tail - 1e-14 <= got <= partial + 1e-14


@pytest.mark.parametrize("teacher", ["h2", "relu"])
def test_monte_carlo_at_d8(teacher):
    d, n = 8, 400_000
    c = lib.sample_contexts(n, d, 1, None, teacher, RHO, rng=np.random.default_rng(2024))
    r2 = np.sum(c.x_query**2, axis=1)
    if teacher == "h2":
        g = (r2 - 1) / math.sqrt(2)
    else:  # c_d |x| with c_d = sqrt(d) E|t| / 2
        g = math.sqrt(d) * _mean_abs_t(d) / 2 * np.sqrt(r2)
    sq = (c.y_query - g) ** 2
    se = sq.std(ddof=1) / math.sqrt(n)
    # the stated tolerance: 4 standard errors of the Monte Carlo mean
    assert abs(sq.mean() - context_free_error(teacher, d, RHO)) < 4 * se


@pytest.mark.parametrize("teacher", ["h2", "relu", "abs", "erf", "cubic"])
def test_large_d_limit_is_rho_plus_variance(teacher):
    a0, _, ef2 = teachers.teacher_moments(teacher)
    e = [context_free_error(teacher, d, RHO) for d in (100, 10_000, 1_000_000)]
    limit = RHO + ef2 - a0**2
    assert abs(e[-1] - limit) < 1e-5
    assert np.all(np.diff(np.abs(np.array(e) - limit)) <= 1e-15)  # approaches it


def test_h2_below_rho_nl_by_one_over_d():
    for d in (8, 16, 32):
        gap = float(teachers.effective_noise("h2", RHO)) - context_free_error("h2", d, RHO)
        assert gap == pytest.approx(1 / d, rel=1e-12)


def test_tanh_numerical_path_runs():
    e = context_free_error("tanh", 8, RHO)
    a0, _, ef2 = teachers.teacher_moments("tanh")
    assert RHO < e <= RHO + ef2 + 1e-12  # tanh is odd: E[y | x] = 0
    assert_allclose(e, RHO + ef2, atol=CONTEXT_FREE_QUAD_ATOL)


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        ({"d": 1}, ValueError, "d must be an integer >= 2"),
        ({"d": 8.0}, TypeError, "d must be an integer"),
        ({"rho": -0.1}, ValueError, "rho"),
        ({"rho": np.inf}, ValueError, "rho"),
        ({"rho": np.nan}, ValueError, "rho"),
        ({"teacher": "nope"}, ValueError, "teacher must be one of"),
        ({"teacher": 3.0}, TypeError, "teacher"),
        ({"teacher": lambda z: np.exp(z**2)}, ValueError, "teacher"),
        ({"method": "mc"}, ValueError, "method"),
    ],
)
def test_validation(kwargs, exc, words):
    args = {"teacher": "h2", "d": 8, "rho": RHO, **kwargs}
    method = args.pop("method", "auto")
    with pytest.raises(exc, match=words):
        context_free_error(args["teacher"], args["d"], args["rho"], method=method)
