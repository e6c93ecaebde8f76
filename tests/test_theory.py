"""Tests for lib.theory: check values, limits, the ridge root, vectorization, the
nonlinear map and its a_1 = 0 branch, and input validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import raises_early
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import brentq

from lib import attention, hermite, simulation, teachers, theory
from lib._checks import check_broadcast
from lib.hermite import get_link
from lib.teachers import effective_noise
from lib.theory import (
    M_kappa,
    dM_kappa,
    icl_error,
    icl_limit,
    idg_error,
    nonlinear_icl_error,
    nonlinear_idg_error,
    nonlinear_optimal_lambda,
    optimal_lambda,
    pure_noise_error,
    ridge_epsilon,
    source,
    transition_kappa,
)

INF = np.inf


# --------------------------------------------------------------------------------------
# independent scalar re-implementations (straight from the formulas of section 2.2)
# --------------------------------------------------------------------------------------
def _M_plain(x: float, kappa: float) -> float:
    b = x + 1 - 1 / kappa
    return 2 / (b + math.sqrt(b * b + 4 * x / kappa))


def _dM_plain(x: float, kappa: float) -> float:
    b = x + 1 - 1 / kappa
    return -0.5 * _M_plain(x, kappa) ** 2 * (1 + (x + 1 + 1 / kappa) / math.sqrt(b * b + 4 * x / kappa))


def _ridge_plain(alpha, kappa, tau, rho, lam):
    x = (1 + rho) / alpha
    eps = brentq(lambda e: 1 - tau + tau * lam / e - e * _M_plain(e + x, kappa), 1e-12, 1e6, xtol=1e-15, rtol=1e-15)
    nu = x + eps
    S, Sp = _M_plain(nu, kappa), _dM_plain(nu, kappa)
    c = (rho + nu - nu**2 * S - eps * (1 - 2 * nu * S - nu**2 * Sp)) / (1 - 2 * eps * S - eps**2 * Sp - tau)
    return (1 + x) * (1 - 2 * nu * S - nu**2 * Sp - c * (S + eps * Sp)) - 2 * (1 - nu * S) + 1 + rho


# --------------------------------------------------------------------------------------
# check values of the linear theory (section 2.2)
# --------------------------------------------------------------------------------------
def test_check_values_ridgeless():
    assert_allclose(icl_error(1, 0.5, 2, 0.01), 1.233993, atol=1e-6)
    assert_allclose(idg_error(1, 0.5, 2, 0.01), 0.609561, atol=1e-6)


def test_check_value_ridge():
    e = icl_error(2, 1.5, 3, 0.1, 0.5)
    # the published check value is 0.71154; its formula, evaluated with 40-digit arithmetic
    # (mpmath) and by the plain scalar code above, gives 0.71150821, 3e-5 lower.
    assert_allclose(e, 0.7115082089491352, rtol=1e-10)
    assert_allclose(e, _ridge_plain(2, 1.5, 3, 0.1, 0.5), rtol=1e-10)
    assert abs(e - 0.71154) < 5e-5


@pytest.mark.parametrize("params", [(1, 0.3, 0.5, 0.2, 0.01), (0.5, 2.0, 1.0, 0.0, 1.0), (3, 1.0, 7.0, 1.0, 3.0)])
def test_ridge_against_plain_scalar_code(params):
    assert_allclose(icl_error(*params), _ridge_plain(*params), rtol=1e-9)


def test_nonlinear_check_values():
    # h2: a_1 = 0, rho_nl = 1.1, ridgeless tau = 3 -> 1.1 * 3 / 2.
    assert_allclose(nonlinear_icl_error("h2", 2, 1.5, 3, 0.1), 1.65, rtol=1e-12)
    assert_allclose(nonlinear_icl_error("cubic", 2, 1.5, 3, 0.1), 1.2807, atol=1e-4)


# --------------------------------------------------------------------------------------
# M_kappa
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kappa", [0.5, 2.0])
def test_M_kappa_against_eigenvalues(kappa):
    rng = np.random.default_rng(1234)
    d = 400
    k = int(round(kappa * d))
    W = rng.standard_normal((k, d))
    r = np.linalg.eigvalsh(W.T @ W / k)
    for x in (0.3, 1.0):
        assert_allclose(np.mean(1 / (r + x)), M_kappa(x, kappa), rtol=2e-2)


def test_M_kappa_infinite_and_quadratic_identity():
    x = np.logspace(-8, 6, 57)
    assert_allclose(M_kappa(x, INF), 1 / (1 + x), rtol=1e-14)
    for kappa in (0.01, 0.5, 0.999, 1.0, 3.0, 1e9):
        m = M_kappa(x, kappa)
        # M solves (x/kappa) M^2 + (x + 1 - 1/kappa) M - 1 = 0 (both branches of the stable form).
        terms = np.abs([(x / kappa) * m * m, (x + 1 - 1 / kappa) * m, np.ones_like(x)])
        resid = (x / kappa) * m * m + (x + 1 - 1 / kappa) * m - 1
        assert np.all(np.abs(resid) <= 1e-13 * terms.max(axis=0))
        assert np.all(m > 0)


@pytest.mark.parametrize("kappa", [0.2, 0.9, 1.0, 4.0, INF])
def test_dM_kappa_finite_differences(kappa):
    x = np.array([1e-3, 0.05, 0.7, 3.0, 40.0])
    h = 1e-6 * x
    fd = (M_kappa(x + h, kappa) - M_kappa(x - h, kappa)) / (2 * h)
    assert_allclose(dM_kappa(x, kappa), fd, rtol=1e-6)
    assert_allclose(dM_kappa(0.7, kappa), _dM_plain(0.7, kappa) if kappa != INF else -1 / 1.7**2, rtol=1e-12)


# --------------------------------------------------------------------------------------
# limits
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha, rho", [(0.5, 0.0), (1.0, 0.01), (2.0, 0.5), (8.0, 2.0)])
def test_limit_tau_kappa_to_infinity(alpha, rho):
    lim = icl_limit(alpha, rho)
    assert_allclose(lim, rho + ((1 + rho) / alpha) / (1 + (1 + rho) / alpha))
    errs = [abs(icl_error(alpha, INF, t, rho) - lim) for t in (10.0, 100.0, 1e4)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3
    errs = [abs(icl_error(alpha, s, s, rho) - lim) for s in (10.0, 100.0, 1e4)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3
    assert_allclose(icl_error(alpha, 1e10, 1e10, rho), lim, rtol=1e-8)


@pytest.mark.parametrize("tau", [0.3, 0.8, 1.3, 4.0])
@pytest.mark.parametrize("kappa", [0.4, 2.0, INF])
def test_lambda_to_zero_is_continuous(tau, kappa):
    e0 = icl_error(1.5, kappa, tau, 0.2)
    e = icl_error(1.5, kappa, tau, 0.2, [1e-4, 1e-7, 1e-10])
    gaps = np.abs(e - e0)
    assert gaps[2] < 1e-8 * max(1.0, e0)
    assert gaps[0] > gaps[1] > gaps[2] or gaps[0] < 1e-12


@pytest.mark.parametrize("tau", [0.4, 2.5])
def test_kappa_inf_equals_large_kappa(tau):
    for lam in (0.0, 0.3):
        assert_allclose(icl_error(1.2, INF, tau, 0.1, lam), icl_error(1.2, 1e12, tau, 0.1, lam), rtol=1e-9)
    assert_allclose(idg_error(1.2, INF, tau, 0.1), idg_error(1.2, 1e12, tau, 0.1), rtol=1e-9)


def test_idg_equals_icl_at_kappa_inf():
    tau = np.array([0.1, 0.5, 0.9, 1.1, 2.0, 30.0])
    for alpha, rho in [(0.5, 0.0), (1.0, 0.1), (4.0, 1.0)]:
        icl = icl_error(alpha, INF, tau, rho)
        assert_allclose(idg_error(alpha, INF, tau, rho), icl, rtol=1e-12)
        x = (1 + rho) / alpha
        closed = np.where(
            tau < 1,
            ((1 - tau) ** 2 + x + rho * (1 + x)) / ((1 + x) * np.abs(1 - tau)),
            tau / np.abs(tau - 1) * (rho + x / (1 + x)),
        )
        assert_allclose(icl, closed, rtol=1e-12)


def test_interpolation_peak_is_inf():
    assert icl_error(1, 0.5, 1.0, 0.1) == INF
    assert idg_error(1, 0.5, 1.0, 0.1) == INF
    assert pure_noise_error(0.3, 1, 1.0) == INF
    assert nonlinear_icl_error("relu", 1, 0.5, 1.0, 0.1) == INF
    assert nonlinear_idg_error("h2", 1, 0.5, 1.0, 0.1) == INF
    assert np.isfinite(icl_error(1, 0.5, 1.0, 0.1, 1e-3))
    # The ridge error diverges as lam -> 0 at tau = 1.
    e = icl_error(1, 0.5, 1.0, 0.1, [1e-2, 1e-4, 1e-6])
    assert np.all(np.diff(e) > 0) and e[-1] > 100


# --------------------------------------------------------------------------------------
# the ridge root
# --------------------------------------------------------------------------------------
def test_ridge_root_residual():
    alpha = np.array([0.2, 1.0, 5.0])[:, None, None, None]
    kappa = np.array([0.1, 0.7, 1.0, 3.0, INF])[None, :, None, None]
    tau = np.array([0.05, 0.5, 1.0, 1.5, 20.0])[None, None, :, None]
    lam = np.logspace(-9, 3, 7)
    rho = 0.3
    eps = ridge_epsilon(alpha, kappa, tau, rho, lam)
    assert eps.shape == (3, 5, 5, 7) and np.all(eps > 0)
    x = (1 + rho) / alpha
    m = eps * M_kappa(eps + x, kappa)
    resid = 1 - tau + tau * lam / eps - m
    scale = np.maximum.reduce([np.ones_like(eps), tau * lam / eps, tau + 0 * eps])
    assert np.max(np.abs(resid) / scale) <= 1e-12


def test_extreme_parameters_stay_accurate():
    # No data or a huge ridge: Gamma -> 0 and the error -> 1 + rho.
    assert_allclose(icl_error(2, [0.3, INF], 1e-12, 0.1, [1e-9, 5.0]), 1.1, rtol=1e-9)
    assert_allclose(icl_error(2, [0.3, INF], 3.0, 0.1, 1e14), 1.1, rtol=1e-9)
    # tau >> 1 with a fixed ridge: converges (root ~ lam, no cancellation).
    assert_allclose(
        icl_error(2, 1.5, 1e14, 0.1, [1e-6, 1.0, 1e6]), icl_error(2, 1.5, 1e12, 0.1, [1e-6, 1.0, 1e6]), rtol=1e-9
    )
    # At the peak tau = 1 the ridge error grows like lam^(-1/2).
    e = icl_error(2, 1.5, 1.0, 0.1, [1e-200, 1e-100])
    assert_allclose(e[0] / e[1], 1e50, rtol=1e-6)


# --------------------------------------------------------------------------------------
# vectorization
# --------------------------------------------------------------------------------------
def test_vectorized_equals_scalar_calls():
    alpha = np.array([[0.5], [2.0], [3.0]])
    tau = np.array([0.4, 1.0, 2.0, 6.0])
    kappa = np.array([0.3, INF, 1.5, 8.0])
    lam = np.array([0.0, 0.2, 0.0, 1e-3])
    e = icl_error(alpha, kappa, tau, 0.1, lam)
    g = idg_error(alpha, kappa, tau, 0.1)
    assert e.shape == g.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            s = icl_error(float(alpha[i, 0]), float(kappa[j]), float(tau[j]), 0.1, float(lam[j]))
            assert isinstance(s, float)
            assert_allclose(e[i, j], s, rtol=1e-12)
            assert_allclose(g[i, j], idg_error(float(alpha[i, 0]), float(kappa[j]), float(tau[j]), 0.1), rtol=1e-14)
    assert isinstance(M_kappa(1.0, 2.0), float) and M_kappa([1.0], 2.0).shape == (1,)
    assert pure_noise_error([0.1, 0.2], 1.0, [[0.5], [2.0]]).shape == (2, 2)
    assert nonlinear_icl_error("h2", [1.0, 2.0], 0.5, 3.0, 0.1).shape == (2,)


# --------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------
pos = st.floats(0.05, 20.0)
kap = st.one_of(st.floats(0.05, 50.0), st.just(INF))
taus = st.floats(0.05, 50.0).filter(lambda t: abs(t - 1) > 1e-3)
rhos = st.floats(0.0, 3.0)
lams = st.one_of(st.just(0.0), st.floats(1e-6, 1e3))


@settings(max_examples=60, deadline=None)
@given(alpha=pos, kappa=kap, tau=taus, rho=rhos, lam=lams)
def test_error_above_infinite_data_limit_and_monotone_in_rho(alpha, kappa, tau, rho, lam):
    e = icl_error(alpha, kappa, tau, rho, lam)
    assert e >= icl_limit(alpha, rho) - 1e-12 >= rho - 1e-12
    assert icl_error(alpha, kappa, tau, rho + 0.05, lam) >= e


@settings(max_examples=15, deadline=None)
@given(alpha=pos, kappa=kap, tau=taus, rho=rhos, lam=st.floats(1e-4, 1e2))
def test_ridge_error_at_least_optimal(alpha, kappa, tau, rho, lam):
    lam_star, e_star = optimal_lambda(alpha, kappa, tau, rho)
    assert lam_star >= 0
    assert_allclose(e_star, icl_error(alpha, kappa, tau, rho, lam_star), rtol=1e-12)
    assert icl_error(alpha, kappa, tau, rho, lam) >= e_star - 1e-9
    assert icl_error(alpha, kappa, tau, rho) >= e_star - 1e-9


def test_optimal_lambda_at_kappa_inf():
    # Found numerically (reported in the docstring): lam* tau = (1 + x*)^2 e_inf.
    alpha = np.array([0.3, 1.0, 2.0, 5.0])
    rho = np.array([0.0, 0.1, 0.5, 2.0])[:, None]
    for tau in (0.5, 2.0, 7.0):
        lam_star, e_star = optimal_lambda(alpha, INF, tau, rho)
        x = (1 + rho) / alpha
        assert_allclose(lam_star, (1 + x) ** 2 * icl_limit(alpha, rho) / tau, rtol=1e-5)
    # Finite kappa, large tau: the error increases with lam from 0, so lam* = 0.
    lam_star, e_star = optimal_lambda(2.0, 1.5, 30.0, 0.1)
    assert lam_star == 0.0 and e_star == icl_error(2.0, 1.5, 30.0, 0.1)


# --------------------------------------------------------------------------------------
# nonlinear teachers
# --------------------------------------------------------------------------------------
def test_linear_teacher_reduces_exactly():
    args = (np.array([0.5, 2.0]), np.array([[0.4], [INF]]), 3.0, 0.1)
    for teacher in (None, "linear", np.array([0.0, 1.0])):
        assert effective_noise(teacher, 0.1) == 0.1
        assert_array_equal(nonlinear_icl_error(teacher, *args), icl_error(*args))
        assert_array_equal(nonlinear_icl_error(teacher, *args, lam=0.3), icl_error(*args, lam=0.3))
        assert_array_equal(nonlinear_idg_error(teacher, *args), idg_error(*args))


def test_nonlinear_map():
    a1 = 0.5
    rho_nl = 0.1 + 0.5 - a1**2  # ReLU: E f^2 = 1/2, a_1 = 1/2
    assert_allclose(effective_noise("relu", 0.1), rho_nl, rtol=1e-12)
    assert_allclose(
        nonlinear_icl_error("relu", 2, 1.5, 3, 0.1, 0.2),
        a1**2 * icl_error(2, 1.5, 3, rho_nl / a1**2, 0.2 / a1**2),
        rtol=1e-12,
    )
    assert_allclose(
        nonlinear_idg_error("relu", 2, 1.5, 3, 0.1), a1**2 * idg_error(2, 1.5, 3, rho_nl / a1**2), rtol=1e-12
    )
    # Coefficient arrays: a_0 and the a_m, m >= 2, only add to the noise.
    assert_allclose(
        nonlinear_icl_error([0.3, 0.8, 0.2, -0.1], 1, 2, 4, 0.05),
        nonlinear_icl_error([0.0, 0.8, 0.0, 0.0], 1, 2, 4, 0.05 + 0.14),
        rtol=1e-12,
    )


def test_a1_zero_branch():
    # ridgeless closed forms, kappa-independent, IDG = ICL
    for tau in (0.25, 3.0):
        expected = 1.1 / (1 - tau) if tau < 1 else 1.1 * tau / (tau - 1)
        assert_allclose(nonlinear_icl_error("h2", 2, [0.3, 1.5, INF], tau, 0.1), expected, rtol=1e-12)
        assert_allclose(nonlinear_idg_error("h2", 2, [0.3, 1.5, INF], tau, 0.1), expected, rtol=1e-12)
    # f == 0 and no noise: nothing to fit, error 0 (also at the peak tau = 1)
    assert nonlinear_icl_error([0.0, 0.0, 0.0], 1, 1, [0.5, 1.0, 2.0], 0.0, 0.0).tolist() == [0, 0, 0]
    assert nonlinear_idg_error(np.zeros(3), 1, 1, 1.0, 0.0) == 0.0
    assert pure_noise_error(0.0, 1.0, 2.0, 0.5) == 0.0


def _mp_stieltjes(z, gamma):
    """The Marchenko-Pastur m(z), principal square root (complex z allowed)."""
    return (1 - gamma - z - np.sqrt((1 - gamma - z) ** 2 - 4 * gamma * z + 0j)) / (2 * gamma * z)


@pytest.mark.parametrize(
    "rho_nl, alpha, tau, lam", [(1.1, 2, 3, 0.5), (0.4, 1, 0.4, 0.05), (2.0, 0.5, 0.9, 3.0), (0.05, 3, 10, 1e-3)]
)
def test_pure_noise_matches_theory_form(rho_nl, alpha, tau, lam):
    mu, gamma, h = lam * alpha / rho_nl, 1 / tau, 1e-20
    m = _mp_stieltjes(-mu, gamma).real
    dm = _mp_stieltjes(-mu + 1j * h, gamma).imag / h  # complex step: m'(-mu)
    assert_allclose(pure_noise_error(rho_nl, alpha, tau, lam), rho_nl * (1 + (m - mu * dm) / tau), rtol=1e-10)
    assert_allclose(pure_noise_error(rho_nl, alpha, tau, 1e-12), pure_noise_error(rho_nl, alpha, tau), rtol=1e-9)


@pytest.mark.parametrize(
    "alpha, kappa, tau, rho, lam",
    [
        (2, 1.5, 3, 0.1, 0.5),
        (1, 0.5, 0.5, 0.3, 0.1),
        (2, INF, 0.4, 0.0, 1.0),
        (0.7, 3, 5, 1.0, 0.0),
        (1, 0.5, 0.5, 0.2, 0.0),
    ],
)
def test_a1_to_zero_is_continuous(alpha, kappa, tau, rho, lam):
    a0, a2 = 0.3, 1.0
    small = 1e-4
    teacher_small = [a0, small, np.sqrt(a2**2 - small**2)]  # same rho_nl as [a0, 0, a2]
    e_small = nonlinear_icl_error(teacher_small, alpha, kappa, tau, rho, lam)
    e_zero = nonlinear_icl_error([a0, 0.0, a2], alpha, kappa, tau, rho, lam)
    assert_allclose(e_small, e_zero, rtol=1e-5)
    if lam == 0.0:
        assert_allclose(nonlinear_idg_error(teacher_small, alpha, kappa, tau, rho), e_zero, rtol=1e-5)
    # Just above the a_1 = 0 threshold the a_1 != 0 formula is still evaluated stably.
    tiny = 1e-8
    e_tiny = nonlinear_icl_error([a0, tiny, np.sqrt(a2**2 - tiny**2)], alpha, kappa, tau, rho, lam)
    assert_allclose(e_tiny, e_zero, rtol=1e-9)


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
GOOD = dict(alpha=1.0, kappa=0.5, tau=2.0, rho=0.1, lam=0.1)


@pytest.mark.parametrize(
    "name, value, exc",
    [
        ("alpha", "1", TypeError),
        ("alpha", None, TypeError),
        ("alpha", True, TypeError),
        ("alpha", np.nan, ValueError),
        ("alpha", 0.0, ValueError),
        ("alpha", -1.0, ValueError),
        ("alpha", INF, ValueError),
        ("kappa", 0.0, ValueError),
        ("kappa", [1.0, -2.0], ValueError),
        ("kappa", np.nan, ValueError),
        ("tau", 0.0, ValueError),
        ("tau", INF, ValueError),
        ("tau", 1 + 1j, TypeError),
        ("rho", -0.1, ValueError),
        ("rho", np.nan, ValueError),
        ("lam", -1e-3, ValueError),
        ("lam", "x", TypeError),
    ],
)
def test_bad_inputs_name_the_argument(name, value, exc):
    kwargs = dict(GOOD, **{name: value})
    with pytest.raises(exc, match=name):
        icl_error(**kwargs)
    if name != "lam":
        kwargs.pop("lam")
        with pytest.raises(exc, match=name):
            idg_error(**kwargs)
        with pytest.raises(exc, match=name):
            nonlinear_idg_error("relu", **kwargs)


def test_bad_inputs_other_functions():
    with pytest.raises(ValueError, match="x"):
        M_kappa(0.0, 1.0)
    with pytest.raises(ValueError, match="kappa"):
        dM_kappa(1.0, -1.0)
    with pytest.raises(ValueError, match="rho_nl"):
        pure_noise_error(-1.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="lam"):
        ridge_epsilon(1, 1, 1, 0.1, 0.0)
    with pytest.raises(ValueError, match="rho"):
        effective_noise("relu", -0.1)
    with pytest.raises(ValueError, match="lam"):
        nonlinear_icl_error("tanh", 1, 1, 2, 0.1, lam=np.nan)
    with pytest.raises(ValueError, match="lam_bounds"):
        optimal_lambda(1, 1, 2, 0.1, lam_bounds=(1.0, 0.5))
    # kappa = inf is allowed everywhere
    assert np.isfinite(icl_error(1, INF, 2, 0.1, 0.1)) and np.isfinite(M_kappa(1.0, INF))


# --------------------------------------------------------------------------------------
# nonlinear_optimal_lambda and transition_kappa
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("teacher", ["tanh", "relu", "cubic"])
def test_nonlinear_optimal_lambda_minimizes_the_teacher_error(teacher):
    tau = np.array([0.5, 1.0, 2.5])
    lam, e = nonlinear_optimal_lambda(teacher, 2.0, INF, tau, 0.1)
    assert_allclose(e, nonlinear_icl_error(teacher, 2.0, INF, tau, 0.1, lam=lam), rtol=1e-10)
    for t, l_star, e_star in zip(tau, lam, e):
        grid = l_star * np.array([0.7, 0.9, 1.1, 1.4])
        assert np.all(nonlinear_icl_error(teacher, 2.0, INF, t, 0.1, lam=grid) >= e_star)


def test_nonlinear_optimal_lambda_linear_and_a1_zero():
    assert_allclose(nonlinear_optimal_lambda(None, 2.0, 1.5, 1.2, 0.3), optimal_lambda(2.0, 1.5, 1.2, 0.3), rtol=1e-12)
    lam, e = nonlinear_optimal_lambda("h2", 2.0, INF, [0.5, 2.0], 0.1)
    assert np.all(np.isinf(lam))
    assert_allclose(e, effective_noise("h2", 0.1))
    assert e[0] < pure_noise_error(effective_noise("h2", 0.1), 2.0, 0.5, lam=1e6) + 1e-12


def test_transition_kappa_solves_its_equation():
    def e(k):
        return nonlinear_icl_error("relu", 5.0, k, 5.0, 0.1)

    e0, e_inf = e(1e-8), e(INF)
    for q in (0.1, 0.5, 0.9):
        k = transition_kappa(q, "relu", 5.0, 5.0, 0.1)
        assert_allclose(e(k), e0 - q * (e0 - e_inf), rtol=1e-9)
    assert transition_kappa(0.1, "relu", 5.0, 5.0, 0.1) < transition_kappa(0.9, "relu", 5.0, 5.0, 0.1)


def test_transition_kappa_no_crossing_and_bad_input():
    # a1 = 0: the error does not depend on kappa, no transition
    with pytest.raises(ValueError, match="memorization level"):
        transition_kappa(0.5, "h2", 5.0, 5.0, 0.1)
    assert math.isnan(transition_kappa(0.5, "h2", 5.0, 5.0, 0.1, missing="nan"))
    # short context, little data: memorization level below the generalization level
    assert math.isnan(transition_kappa(0.5, "relu", 0.5, 2.0, 0.1, missing="nan"))
    with pytest.raises(ValueError, match="q"):
        transition_kappa(1.0, "relu", 5.0, 5.0, 0.1)
    with pytest.raises(ValueError, match="missing"):
        transition_kappa(0.5, "relu", 5.0, 5.0, 0.1, missing="skip")


def test_transition_kappa_takes_the_last_down_crossing(monkeypatch):
    # An error curve (in u = log10 kappa) that falls through the level 1/2 at u = -1.5,
    # rises back above it at u = 0.2 and falls through again at u = 1.7: the documented
    # answer is the last down-crossing, 10**1.7, not the first one, 10**-1.5.
    import lib.theory.nonlinear
    from lib.theory import TRANSITION_KAPPA0

    def fake_error(teacher, alpha, kappa, tau, rho, lam=0.0):
        kappa = np.asarray(kappa, dtype=float)
        u = np.log10(np.where(np.isinf(kappa), 1.0, kappa))
        e = 0.5 - 0.05 * (u + 1.5) * (u - 0.2) * (u - 1.7)
        e = np.where(kappa == TRANSITION_KAPPA0, 1.0, np.where(np.isinf(kappa), 0.0, e))
        return float(e) if e.ndim == 0 else e

    monkeypatch.setattr(lib.theory.nonlinear, "nonlinear_icl_error", fake_error)
    assert_allclose(transition_kappa(0.5, "relu", 5.0, 5.0, 0.1), 10.0**1.7, rtol=1e-9)


INF = np.inf


def _mp_plain(x, kappa):
    """M_kappa(x) straight from the formula of section 2.2 (no care for cancellation)."""
    b = x + 1 - 1 / kappa
    return 2 / (b + np.sqrt(b * b + 4 * x / kappa))


def _idg_below_plain(alpha, kappa, tau, rho):
    """The published form (section 2.2) of the ridgeless IDG error for tau < 1, term by term."""
    x = (1 + rho) / alpha
    mu = x * _mp_plain(x, kappa / tau)
    eps = (1 - tau) * x / (tau * mu)
    c = 1 / (1 - kappa / (1 + kappa * eps / (1 - tau)) ** 2)
    return tau * ((x + eps) ** 2 / eps + (rho + x - 2 * x * (1 - tau) * (x / eps + 1)) / (1 - tau - c * (1 - tau) ** 2))


# --------------------------------------------------------------------------------------
# negative a_1
# --------------------------------------------------------------------------------------
def _neg(name):
    f = get_link(name)

    def g(z):
        return -f(z)

    return g


TEACHERS = ["linear", "tanh", "relu", "sign", "cubic", "h2"]


def test_gap_estimate_h2_against_pure_noise():
    est = theory.gap_estimate("h2", 0.1, 2.0, 3.0, twin=[0.0], rho_twin=1.1)
    # delta E[y^2 z^2] = 5.1 - 1.1, delta E[y^4] = 15.63 - 3 * 1.1^2
    assert_allclose([est.delta_ey2z2, est.delta_ey4], [4.0, 12.0], atol=1e-8)
    assert_allclose(est.c_het, (1 - 2 / 3) * 4.0 / 2.0, rtol=1e-10)
    assert_allclose(est.c_tail, 12.0 / (3 * 2 * 1.1) / 2.0, rtol=1e-10)
    assert_allclose(est.c_delta, est.c_het + est.c_tail, rtol=1e-12)


def test_gap_estimate_default_twin_and_errors():
    g, rho_eq = teachers.gaussian_equivalent("relu", 0.1)
    a = theory.gap_estimate("relu", 0.1, 2.0, 3.0)
    b = theory.gap_estimate("relu", 0.1, 2.0, 3.0, twin=g, rho_twin=rho_eq)
    assert_allclose(a, b, rtol=1e-12)
    assert theory.gap_estimate("linear", 0.1, 2.0, 3.0).c_delta == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="tau"):
        theory.gap_estimate("relu", 0.1, 2.0, 0.5)
    with pytest.raises(ValueError, match="rho_twin"):
        theory.gap_estimate("relu", 0.1, 2.0, 3.0, twin="linear")


@pytest.mark.parametrize("tau", [0.5, 2.0, 5.0])
@pytest.mark.parametrize("lam", [0.05, 1.0])
def test_pure_noise_integral_matches_closed_form(tau, lam):
    assert_allclose(
        theory.pure_noise_error_integral(1.1, 2.0, tau, lam),
        theory.pure_noise_error(1.1, 2.0, tau, lam),
        rtol=1e-8,
    )


def test_pure_noise_integral_rejects_ridgeless():
    with pytest.raises(ValueError, match="lam"):
        theory.pure_noise_error_integral(1.1, 2.0, 3.0, 0.0)


@pytest.mark.parametrize("teacher", TEACHERS)
@pytest.mark.parametrize("alpha", [0.5, 2.0, 7.0])
def test_closed_form_matches_general_formula(teacher, alpha):
    a1 = teachers.teacher_moments(teacher)[1]
    rho_nl = teachers.effective_noise(teacher, 0.1)
    tau = np.r_[np.linspace(0.02, 0.98, 25), np.linspace(1.02, 8.0, 25)]
    general = theory.nonlinear_icl_error(teacher, alpha, np.inf, tau, 0.1)
    assert_allclose(theory.kappa_inf_ridgeless_error(a1, rho_nl, alpha, tau), general, rtol=1e-10)
    # the floor is the tau -> infinity limit
    _, E_inf = theory.kappa_inf_floor(a1, rho_nl, alpha)
    far = theory.nonlinear_icl_error(teacher, alpha, np.inf, 1e12, 0.1)
    assert_allclose(E_inf, far, rtol=1e-9)


def test_floor_parts_and_peak():
    B, E = theory.kappa_inf_floor(0.5, 0.35, 2.0)
    assert_allclose(B, 2 * 0.5**4 / (3 * 0.25 + 0.35))
    assert_allclose(B + E, 0.25 + 0.35)  # B + E_inf = E[y^2]
    assert theory.kappa_inf_floor(0.0, 1.1, 2.0) == (0.0, 1.1)
    assert np.isinf(theory.kappa_inf_ridgeless_error(0.5, 0.35, 2.0, 1.0))
    assert theory.kappa_inf_ridgeless_error(0.0, 0.0, 2.0, 1.0) == 0.0
    out = theory.kappa_inf_ridgeless_error([0.5, 1.0], 0.35, 2.0, [[0.5], [2.0]])
    assert out.shape == (2, 2)


@pytest.mark.parametrize("teacher", ["linear", "tanh", "relu", "sign", "cubic"])
def test_closed_form_optimal_lambda(teacher):
    a1 = teachers.teacher_moments(teacher)[1]
    rho_nl = teachers.effective_noise(teacher, 0.1)
    tau = np.array([0.3, 1.0, 2.5])
    lam_num, _ = theory.nonlinear_optimal_lambda(teacher, 2.0, np.inf, tau, 0.1)
    assert_allclose(theory.kappa_inf_optimal_lambda(a1, rho_nl, 2.0, tau), lam_num, rtol=1e-5)
    assert np.isinf(theory.kappa_inf_optimal_lambda(0.0, 1.1, 2.0, 1.0))


@pytest.mark.parametrize("bad", [dict(rho_nl=-0.1), dict(alpha=0.0), dict(tau=-1.0)])
def test_closed_forms_reject_bad_input(bad):
    args = dict(a1=0.5, rho_nl=0.35, alpha=2.0, tau=2.0) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        theory.kappa_inf_ridgeless_error(**args)


def test_context_ridge_error_linear_is_bayes():
    # linear teacher, ridge rho: rho + (rho/alpha) M_alpha(rho/alpha)
    for alpha in (0.5, 1.0, 5.0):
        e = theory.context_ridge_error("linear", alpha, 0.1, 0.1)
        assert_allclose(e, 0.1 + 0.1 / alpha * theory.M_kappa(0.1 / alpha, alpha), rtol=1e-12)
    # the matched ridge minimizes the error over the ridge
    for teacher in ("relu", "tanh", "cubic"):
        for intercept in (False, True):
            _, r = teachers.gaussian_equivalent_ridge(teacher, 0.1, intercept=intercept)
            grid = r * np.logspace(-1, 1, 201)
            e = theory.context_ridge_error(teacher, 5.0, 0.1, grid, intercept=intercept)
            assert abs(grid[np.argmin(e)] / r - 1) < 0.015


@pytest.mark.parametrize("alpha", [0.5, 2.0, 10.0])
@pytest.mark.parametrize("kappa", [0.1, 0.5, 1.5, 20.0])
@pytest.mark.parametrize("tau", [0.05, 0.5, 0.9])
def test_idg_below_peak_matches_the_published_form(alpha, kappa, tau):
    assert_allclose(theory.idg_error(alpha, kappa, tau, 0.1), _idg_below_plain(alpha, kappa, tau, 0.1), rtol=1e-10)


def test_idg_below_peak_is_positive_and_above_the_noise():
    """Over a wide grid of finite kappa the IDG error stays above rho (it is a test error
    with label noise rho); the check value of the issue is 0.801079."""
    a, k, t, r = np.meshgrid([0.2, 1, 2, 5, 50], np.logspace(-2, 3, 11), [0.02, 0.2, 0.5, 0.8, 0.98], [0.0, 0.1, 1.0])
    e = theory.idg_error(a, k, t, r)
    assert np.all(np.isfinite(e)) and np.all(e >= r)
    assert_allclose(theory.idg_error(2, 0.5, 0.5, 0.1), 0.8010787211, rtol=1e-9)


@pytest.mark.parametrize("name", ["relu", "tanh"])
def test_negative_linear_coefficient_theory(name):
    """-f has a_1 < 0 and the same a_1^2, E f^2 and rho_nl, so every asymptotic error
    equals that of f; it is not mistaken for a teacher with a_1 = 0."""
    f, g = get_link(name), _neg(name)
    a0, a1, ef2 = teachers.teacher_moments(g)
    assert a1 < -0.4
    assert_allclose((a0, a1, ef2), (-f.coefficients(1)[0], -f.coefficients(1)[1], f.second_moment), atol=1e-9)
    assert_allclose(hermite.coefficients(g, 5), -f.coefficients(5), atol=1e-9)
    assert_allclose(teachers.effective_noise(g, 0.1), teachers.effective_noise(f, 0.1), rtol=1e-9)
    s = a1 * a1
    for args in [(2, 1.5, 3, 0.1), (2, 0.5, 0.5, 0.1), (1, INF, 2, 0.3)]:
        rho_nl = teachers.effective_noise(g, args[3])
        e = theory.nonlinear_icl_error(g, *args, lam=0.2)
        assert_allclose(e, theory.nonlinear_icl_error(f, *args, lam=0.2), rtol=1e-8)
        assert_allclose(e, s * theory.icl_error(*args[:3], rho_nl / s, 0.2 / s), rtol=1e-8)
        ei = theory.nonlinear_idg_error(g, *args)
        assert_allclose(ei, s * theory.idg_error(*args[:3], rho_nl / s), rtol=1e-8)
        assert abs(ei - theory.pure_noise_error(rho_nl, args[0], args[2])) > 1e-3
    lam, e = theory.nonlinear_optimal_lambda(g, 2, 1.5, 3, 0.1)
    assert_allclose((lam, e), theory.nonlinear_optimal_lambda(f, 2, 1.5, 3, 0.1), rtol=1e-7)
    geq, rho_eq = teachers.gaussian_equivalent(g, 0.1)
    assert_allclose(geq.coefficients(1), [a0, a1], atol=1e-12)


# --------------------------------------------------------------------------------------
# 1. theory at extreme but legal input (more in tests/test_theory_properties.py)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, kwargs, expected",
    [
        ((2, 1.5, 2, 0.1), dict(lam=1e200), 1.1),  # lam -> inf: the zero predictor, 1 + rho
        ((1e-16, 1.5, 2, 0.1), dict(lam=0.5), 2.2),  # alpha -> 0: (1 + rho) tau/(tau - 1)
        ((1e-20, 1.5, 2, 0.1), {}, 2.2),
        ((1e-300, 1.5, 2, 0.1), {}, 2.2),
        ((1e-300, 1.5, 0.5, 0.1), {}, 2.2),  # (1 + rho)/(1 - tau)
    ],
)
def test_issue_theory_cases(args, kwargs, expected):
    e = icl_error(*args, **kwargs)
    assert_allclose(e, expected, rtol=1e-12)
    assert e >= theory.icl_limit(args[0], args[3])


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((1e-310, 1.5, 2, 0.1), {}, "alpha"),  # x* = (1 + rho)/alpha overflows
        ((1e-300, 1.5, 2, 0.1), dict(lam=0.5), "alpha"),  # beyond the ridge formula's range
        ((2, 1.5, 2, 0.1), dict(lam=1e306), "lam"),
    ],
)
def test_theory_outside_supported_range_is_refused(args, kwargs, name):
    err = raises_early(ValueError, name, icl_error, *args, **kwargs)
    assert "supported range" in str(err)


# --------------------------------------------------------------------------------------
# 3. arrays where scalars are expected, shapes that do not broadcast
# --------------------------------------------------------------------------------------
def test_broadcast_errors_name_the_arguments_in_order():
    err = raises_early(ValueError, "alpha", icl_error, [1, 2], [1, 2, 3], 2, 0.1)
    msg = str(err)
    assert msg.index("alpha") < msg.index("kappa") and "(2,)" in msg and "(3,)" in msg
    msg = str(raises_early(ValueError, "alpha", icl_error, [1, 2], 1.5, 2, [0.1, 0.2, 0.3]))
    assert "rho" in msg and msg.index("alpha") < msg.index("rho")
    msg = str(raises_early(ValueError, "tau", theory.idg_error, 1, [1, 2, 3], [2, 3], 0.1))
    assert msg.index("kappa") < msg.index("tau")
    msg = str(raises_early(ValueError, "lam", icl_error, 1, 2, [2, 3, 4], 0.1, [0.1, 0.2]))
    assert msg.index("tau") < msg.index("lam")
    raises_early(ValueError, "rho_nl", theory.pure_noise_error, [1, 2], [1, 2, 3], 2)
    raises_early(ValueError, "kappa", theory.M_kappa, [1, 2], [1, 2, 3])
    raises_early(ValueError, "rho", theory.icl_limit, [1, 2], [1, 2, 3])
    raises_early(ValueError, "kappa", nonlinear_icl_error, "relu", [1, 2], [1, 2, 3], 2, 0.1)
    assert check_broadcast(("a", [1, 2]), ("b", 3.0), ("c", [[1], [2], [3]])) == (3, 2)


def test_lam_bounds_must_be_a_pair():
    raises_early(TypeError, "lam_bounds", optimal_lambda, 2, 1.5, 2, 0.1, lam_bounds=5)
    raises_early(TypeError, "lam_bounds", optimal_lambda, 2, 1.5, 2, 0.1, lam_bounds=(1, 2, 3))
    raises_early(ValueError, r"lam_bounds\[1\]", optimal_lambda, 2, 1.5, 2, 0.1, lam_bounds=(1.0, 0.5))


def test_fixed_gamma_icl_error_linear_teacher_is_exact_error():
    rng = np.random.default_rng(0)
    d, ell = 12, 24
    gamma = rng.normal(0, 1 / d, (d, d + 1)) + np.hstack([0.4 * np.eye(d), np.zeros((d, 1))])
    got = theory.fixed_gamma_icl_error(gamma, ell, "linear", 0.3)
    assert_allclose(got, attention.exact_error(gamma, ell, 0.3), rtol=1e-12)


def test_fixed_gamma_icl_error_relu_against_monte_carlo():
    rng = np.random.default_rng(1)
    d, ell = 10, 20
    gamma = rng.normal(0, 1 / d, (d, d + 1)) + np.hstack([0.4 * np.eye(d), np.zeros((d, 1))])
    gamma[:, -1] += 0.05
    e, se = simulation.mc_error(gamma, ell, None, "relu", 0.1, 100_000, 3)
    assert abs(theory.fixed_gamma_icl_error(gamma, ell, "relu", 0.1) - e) < 4 * se


def test_fixed_gamma_icl_error_gap_to_linear_twin():
    # e_f - e_twin = (dE[y^2 z^2] |G1|_F^2 + dE[y^4] |g2|^2) / (ell d)
    rng = np.random.default_rng(2)
    d, ell = 8, 16
    gamma = rng.normal(0, 1 / d, (d, d + 1))
    a1, rho_nl = teachers.teacher_moments("relu")[1], teachers.effective_noise("relu", 0.1)
    mf, mt = teachers.label_moments("relu", 0.1), teachers.label_moments([0.0, a1], rho_nl)
    want = ((mf.ey2z2 - mt.ey2z2) * np.sum(gamma[:, :-1] ** 2) + (mf.ey4 - mt.ey4) * np.sum(gamma[:, -1] ** 2)) / (
        ell * d
    )
    got = theory.fixed_gamma_icl_error(gamma, ell, "relu", 0.1) - theory.fixed_gamma_icl_error(
        gamma, ell, [0.0, a1], rho_nl
    )
    assert_allclose(got, want, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(gamma=np.zeros((3, 3)), ell=5), "gamma"),
        (dict(gamma=np.zeros((3, 4)), ell=0), "ell"),
        (dict(gamma=np.zeros((3, 4)), ell=5, rho=-1.0), "rho"),
    ],
)
def test_fixed_gamma_icl_error_rejects_bad_input(kwargs, match):
    args = dict(teacher="relu", rho=0.1) | kwargs
    with pytest.raises(ValueError, match=match):
        theory.fixed_gamma_icl_error(**args)


# --- the source's formulas as evaluated by its authors' code (lib/data/source_formulas.csv)


def test_source_values_agree_with_the_book_formulas():
    """The book's printed formulas agree with the authors' implementation on the whole grid:
    ridgeless to rounding, ridge to the 1e-6 the authors' rounded root allows."""
    vals = source.source_values()
    assert set(vals) == {"icl_ridgeless", "idg_ridgeless", "icl_ridge"}
    for q, c in vals.items():
        assert c["value"].shape[0] > 100
        if q == "idg_ridgeless":
            mine = idg_error(c["alpha"], c["kappa"], c["tau"], c["rho"])
        else:
            mine = icl_error(c["alpha"], c["kappa"], c["tau"], c["rho"], lam=c["lam"])
        rel = np.abs(mine - c["value"]) / np.abs(c["value"])
        assert rel.max() < (5e-6 if q == "icl_ridge" else 1e-12), q
    assert np.all(vals["icl_ridge"]["lam"] > 0) and np.all(vals["icl_ridgeless"]["lam"] == 0)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("quantity,alpha\n", "header"),
        ("quantity,alpha,kappa,tau,rho,lam,value\nfoo,1,1,1,1,0,1\n", "quantity"),
        ("quantity,alpha,kappa,tau,rho,lam,value\nicl_ridge,1,1,x,1,0,1\n", "tau"),
        ("quantity,alpha,kappa,tau,rho,lam,value\nicl_ridge,1,1,1,1,0,nan\n", "value: 'nan' is not allowed"),
        ("quantity,alpha,kappa,tau,rho,lam,value\nicl_ridge,1,1,1\n", "rho: missing"),
        ("quantity,alpha,kappa,tau,rho,lam,value\nicl_ridge,1,1,2,1,0.5,1\n", "no row"),
    ],
)
def test_source_values_rejects_bad_files(tmp_path, text, match):
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        source.source_values(path)
