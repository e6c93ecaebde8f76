"""Tests of the library functions added for chapters 4 and 5: the kappa = infinity closed
forms (lib.theory.kappa_inf_*), the context-ridge baselines (lib.theory.context_ridge_error,
lib.teachers.gaussian_equivalent_ridge, lib.baselines.gaussian_equivalent_predict,
lib.baselines.context_ridge_errors) and lib.baselines.dmmse_task_set_errors."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import baselines, hermite, samplers, teachers, theory

TEACHERS = ["linear", "tanh", "relu", "sign", "cubic", "h2"]


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


def test_gaussian_equivalent_ridge_values():
    a0, a1 = 1 / np.sqrt(2 * np.pi), 0.5
    c, r = teachers.gaussian_equivalent_ridge("relu", 0.1)
    assert_allclose([c, r], [a0, (0.35 - a0**2) / a1**2])
    c, r = teachers.gaussian_equivalent_ridge("relu", 0.1, intercept=False)
    assert_allclose([c, r], [0.0, 0.35 / 0.25])
    assert np.isinf(teachers.gaussian_equivalent_ridge("h2", 0.1)[1])
    with pytest.raises(TypeError, match="intercept"):
        teachers.gaussian_equivalent_ridge("relu", 0.1, intercept="yes")


def test_gaussian_equivalent_predict_is_gaussian_posterior_mean():
    # For an affine teacher c + a1 z the predictor is the exact Gaussian posterior mean
    # E[y_q | y] = c + Cov(y_q, y) Cov(y, y)^{-1} (y - c) with w ~ N(0, I).
    rng = np.random.default_rng(0)
    n, ell, d, rho = 4, 7, 5, 0.3
    coeffs = np.array([0.4, 0.8])
    X = rng.standard_normal((n, ell, d)) / np.sqrt(d)
    xq = rng.standard_normal((n, d)) / np.sqrt(d)
    y = rng.standard_normal((n, ell))
    got = baselines.gaussian_equivalent_predict(X, y, xq, coeffs, rho)
    want = [0.4 + 0.64 * xq[i] @ X[i].T @ np.linalg.solve(0.64 * X[i] @ X[i].T + rho * np.eye(ell), y[i] - 0.4)
            for i in range(n)]
    assert_allclose(got, want, rtol=1e-10)
    # linear teacher: the same as the Bayes ridge predictor
    assert_allclose(baselines.gaussian_equivalent_predict(X, y, xq, None, rho),
                    baselines.bayes_ridge_predict(X, y, xq, rho), rtol=1e-12)
    # a1 = 0: the constant a0
    assert_allclose(baselines.gaussian_equivalent_predict(X, y, xq, "h2", rho), 0.0, atol=1e-12)


def test_context_ridge_errors_match_theory():
    out = baselines.context_ridge_errors(60, 3.0, 0.1, "relu", n_test=4000, rng=1)
    assert set(out) == {"ridge", "ge", "ge_intercept"}
    for name, kw in (("ridge", dict(ridge=0.1)), ("ge", None), ("ge_intercept", None)):
        if kw is None:
            intercept = name == "ge_intercept"
            kw = dict(ridge=teachers.gaussian_equivalent_ridge("relu", 0.1, intercept=intercept)[1],
                      intercept=intercept)
        want = theory.context_ridge_error("relu", 3.0, 0.1, **kw)
        mean, se = out[name]
        # finite d = 60 adds an O(1/d) bias; allow it on top of 4 standard errors
        assert abs(mean - want) < 4 * se + 0.03 * want


def test_dmmse_task_set_errors():
    m, se = baselines.dmmse_task_set_errors(10, 4.0, 0.2, 0.05, "relu", draws=2, n_test=300, rng=3)
    assert se >= 0 and 0.0 < m < 0.2  # two tasks, long contexts: close to the noise 0.05
    with pytest.raises(ValueError, match="draws"):
        baselines.dmmse_task_set_errors(10, 4.0, 0.2, 0.05, "relu", draws=1)
    a = baselines.dmmse_task_set_errors(10, 2.0, 0.5, 0.1, "relu", draws=2, n_test=50, rng=5)
    b = baselines.dmmse_task_set_errors(10, 2.0, 0.5, 0.1, "relu", draws=2, n_test=50, rng=5)
    assert a == b
