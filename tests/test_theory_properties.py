"""Property tests of the asymptotic formulas over wide logarithmic parameter ranges.

Every formula must give a finite number, never below the floor rho + x*/(1 + x*) of
the ICL error (:func:`lib.theory.icl_limit`), and must be continuous where the theory
says so: as lam -> 0+ (ridge -> ridgeless, away from the peak tau = 1), across
kappa = inf, and as alpha -> 0, where every error tends to its useless-context limit.
Where the closed forms make a monotonicity statement (kappa = inf, ridgeless) it is
checked too.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from lib import teachers, theory
from lib.theory import icl_error, icl_limit, idg_error, nonlinear_icl_error, optimal_lambda

INF = np.inf


def log_uniform(lo: float, hi: float):
    return st.floats(np.log10(lo), np.log10(hi)).map(lambda u: float(10.0**u))


alphas = log_uniform(1e-12, 1e8)
kappas = st.one_of(log_uniform(1e-8, 1e12), st.just(INF))
taus = log_uniform(1e-6, 1e8).filter(lambda t: abs(t - 1.0) > 1e-6)
rhos = st.one_of(st.just(0.0), log_uniform(1e-12, 1e6))
lams = log_uniform(1e-14, 1e12)


def _floor(alpha, rho):
    return icl_limit(alpha, rho) * (1.0 - 1e-9)


@settings(max_examples=300, deadline=None)
@given(alphas, kappas, taus, rhos)
def test_ridgeless_finite_and_above_floor(alpha, kappa, tau, rho):
    e = icl_error(alpha, kappa, tau, rho)
    g = idg_error(alpha, kappa, tau, rho)
    assert np.isfinite(e) and np.isfinite(g)
    assert e >= _floor(alpha, rho)
    assert g >= rho * (1.0 - 1e-9)


@settings(max_examples=200, deadline=None)
@given(alphas, kappas, log_uniform(1e-6, 1e8), rhos, lams)
def test_ridge_finite_and_above_floor(alpha, kappa, tau, rho, lam):
    e = icl_error(alpha, kappa, tau, rho, lam)
    assert np.isfinite(e)
    assert e >= _floor(alpha, rho)


@settings(max_examples=150, deadline=None)
@given(log_uniform(1e-3, 1e3), kappas, taus.filter(lambda t: abs(t - 1.0) > 0.05), log_uniform(1e-4, 10))
def test_ridge_tends_to_ridgeless(alpha, kappa, tau, rho):
    e0 = icl_error(alpha, kappa, tau, rho)
    e = icl_error(alpha, kappa, tau, rho, 1e-11)
    assert_allclose(e, e0, rtol=1e-4)


@settings(max_examples=150, deadline=None)
@given(log_uniform(1e-4, 1e4), log_uniform(1e-4, 1e4), log_uniform(1e-4, 10), st.one_of(st.just(0.0), lams))
def test_continuous_across_kappa_inf(alpha, tau, rho, lam):
    if lam == 0.0 and abs(tau - 1.0) < 1e-6:
        return
    big = icl_error(alpha, 1e13, tau, rho, lam)
    assert_allclose(big, icl_error(alpha, INF, tau, rho, lam), rtol=1e-6)
    if lam == 0.0:
        assert_allclose(idg_error(alpha, 1e13, tau, rho), idg_error(alpha, INF, tau, rho), rtol=1e-6)


@settings(max_examples=100, deadline=None)
@given(kappas, taus, log_uniform(1e-6, 1e3))
def test_useless_context_limit(kappa, tau, rho):
    """alpha -> 0: the context says nothing, the error tends to the pure-noise error of
    labels of variance 1 + rho: (1 + rho)/(1 - tau) below the peak, (1 + rho) tau/(tau - 1)
    above it (ICL and IDG alike); the ridge error at fixed lam tends to it too."""
    limit = (1.0 + rho) / (1.0 - tau) if tau < 1.0 else (1.0 + rho) * tau / (tau - 1.0)
    assert_allclose(icl_error(1e-280, kappa, tau, rho), limit, rtol=1e-8)
    assert_allclose(idg_error(1e-280, kappa, tau, rho), limit, rtol=1e-8)
    assert_allclose(icl_error(1e-140, kappa, tau, rho, 1.0), limit, rtol=1e-8)


@settings(max_examples=100, deadline=None)
@given(log_uniform(1e-6, 1e6), kappas, log_uniform(1e-4, 1e4), rhos)
def test_huge_ridge_gives_zero_predictor(alpha, kappa, tau, rho):
    """lam -> inf: Gamma -> 0, so the error tends to E[y^2] = 1 + rho."""
    assert_allclose(icl_error(alpha, kappa, tau, rho, 1e290), 1.0 + rho, rtol=1e-9)


@settings(max_examples=150, deadline=None)
@given(log_uniform(1e-6, 1e6), log_uniform(1.0 + 1e-6, 1e8), log_uniform(1e-8, 1e4))
def test_monotone_at_kappa_inf(alpha, tau, rho):
    """kappa = inf, tau > 1, ridgeless: e = tau/(tau-1) (rho + x*/(1+x*)) decreases in
    tau and alpha and increases in rho."""
    e = icl_error(alpha, INF, tau, rho)
    assert icl_error(alpha, INF, tau * 1.5, rho) <= e * (1 + 1e-12)
    assert icl_error(alpha * 1.5, INF, tau, rho) <= e * (1 + 1e-12)
    assert icl_error(alpha, INF, tau, rho * 1.5) >= e * (1 - 1e-12)


@settings(max_examples=15, deadline=None)
@given(log_uniform(1e-2, 1e2), kappas, log_uniform(1e-2, 1e2), log_uniform(1e-4, 10))
def test_optimal_ridge_between_floor_and_ridgeless(alpha, kappa, tau, rho):
    lam, e = optimal_lambda(alpha, kappa, tau, rho)
    assert np.isfinite(e) and e >= _floor(alpha, rho)
    if abs(tau - 1.0) > 1e-6:
        assert e <= icl_error(alpha, kappa, tau, rho) * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(log_uniform(1e-3, 1e3), kappas, taus, log_uniform(1e-4, 10), st.one_of(st.just(0.0), log_uniform(1e-8, 1e4)))
def test_nonlinear_finite_and_above_its_floor(alpha, kappa, tau, rho, lam):
    """The equivalence maps onto the linear formulas at rho_nl/a1^2: also finite, and
    not below a1^2 times the linear floor at rho_nl/a1^2."""
    for teacher in ("relu", "tanh", "cubic"):
        e = nonlinear_icl_error(teacher, alpha, kappa, tau, rho, lam)
        rho_nl = teachers.effective_noise(teacher, rho)
        a1 = teachers.teacher_moments(teacher)[1]
        assert np.isfinite(e)
        s = a1 * a1
        assert e >= s * icl_limit(alpha, rho_nl / s) * (1.0 - 1e-9)


def test_issue_cases():
    """The values of the issue: right numbers or clear errors, never a wrong number."""
    assert_allclose(icl_error(2, 1.5, 2, 0.1, lam=1e200), 1.1, rtol=1e-12)
    assert_allclose(icl_error(1e-16, 1.5, 2, 0.1, lam=0.5), 2.2, rtol=1e-12)
    assert_allclose(icl_error(1e-20, 1.5, 2, 0.1), 2.2, rtol=1e-12)
    assert_allclose(icl_error(1e-300, 1.5, 2, 0.1), 2.2, rtol=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        icl_error(1e-300, 1.5, 2, 0.1, lam=0.5)  # outside the ridge formula's range
    with pytest.raises(ValueError, match="alpha"):
        icl_error(1e-310, 1.5, 2, 0.1)  # x* overflows


def test_check_values_still_hold():
    assert_allclose(icl_error(1, 0.5, 2, 0.01), 1.233993, atol=1e-6)
    assert_allclose(idg_error(1, 0.5, 2, 0.01), 0.609561, atol=1e-6)
    assert_allclose(icl_error(2, 1.5, 3, 0.1, 0.5), 0.7115082, atol=5e-8)
    assert_allclose(theory.ridge_epsilon(2, 1.5, 3, 0.1, 0.5), 0.6432148, atol=5e-8)


def test_random_extreme_points_vectorized():
    """4,000 points drawn log-uniformly over the whole supported range at once (alpha down
    to (1 + rho)/1e150, kappa from 1e-300 to inf, tau from 1e-12 to 1e12, rho from 0 or
    1e-300 to 1e100, lam from 1e-300 to 1e300): finite, not below the floor, and no
    floating-point warning (pytest turns lib's RuntimeWarnings into errors)."""
    rng = np.random.default_rng(20261201)
    n = 4000
    a, k, t, r, lam = (
        10.0 ** rng.uniform(lo, hi, n) for lo, hi in [(-149, 30), (-300, 300), (-12, 12), (-300, 100), (-300, 300)]
    )
    k[rng.random(n) < 0.2] = INF
    r[rng.random(n) < 0.1] = 0.0
    keep = (1.0 + r) / a <= theory.RIDGE_MAX
    a, k, t, r, lam = a[keep], k[keep], t[keep], r[keep], lam[keep]
    floor = icl_limit(a, r) * (1.0 - 1e-9)
    e = icl_error(a, k, t, r, lam)
    assert np.all(np.isfinite(e)) and np.all(e >= floor)
    m = np.abs(t - 1.0) > 1e-9
    e0, g0 = icl_error(a[m], k[m], t[m], r[m]), idg_error(a[m], k[m], t[m], r[m])
    assert np.all(np.isfinite(e0)) and np.all(e0 >= floor[m])
    assert np.all(np.isfinite(g0)) and np.all(g0 >= r[m] * (1.0 - 1e-9))
