"""Tests for lib.baselines: Bayes ridge and dMMSE predictors and their Monte Carlo errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from lib import baselines, samplers, teachers, theory
from lib.baselines import baseline_errors, bayes_ridge_predict, dmmse_predict
from lib.hermite import get_link
from lib.samplers import sample_contexts, sample_tasks


def relu(z):
    return np.maximum(z, 0.0)


# ----------------------------------------------------------------------------------------
# Bayes ridge
# ----------------------------------------------------------------------------------------


@given(
    n=st.integers(1, 3),
    ell=st.integers(1, 8),
    d=st.integers(1, 8),
    rho=st.floats(1e-3, 10.0),
    seed=st.integers(0, 2**31),
)
@settings(max_examples=40, deadline=None)
def test_bayes_ridge_matches_the_primal_formula(n, ell, d, rho, seed):
    """Primal and dual forms agree with the textbook formula, context by context."""
    rng = np.random.default_rng(seed)
    X, y, xq = rng.normal(size=(n, ell, d)), rng.normal(size=(n, ell)), rng.normal(size=(n, d))
    pred = bayes_ridge_predict(X, y, xq, rho)
    expected = [xq[m] @ np.linalg.inv(X[m].T @ X[m] + rho * np.eye(d)) @ X[m].T @ y[m] for m in range(n)]
    assert_allclose(pred, expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("ell,d", [(3, 5), (8, 4)])
def test_bayes_ridge_is_the_gaussian_posterior_mean(ell, d):
    """Condition the joint Gaussian (w, y) with w ~ N(0, I), y = X w + N(0, rho I)."""
    rng = np.random.default_rng(0)
    rho = 0.3
    ctx = sample_contexts(2, d, ell, None, None, rho, rng=rng)
    pred = bayes_ridge_predict(ctx.X, ctx.y, ctx.x_query, rho)
    for m in range(2):
        X = ctx.X[m]
        cov_wy, cov_yy = X.T, X @ X.T + rho * np.eye(ell)
        post_mean = cov_wy @ np.linalg.solve(cov_yy, ctx.y[m])
        assert_allclose(pred[m], ctx.x_query[m] @ post_mean, rtol=1e-10)


@pytest.mark.parametrize("ell,d", [(3, 5), (8, 4)])
def test_bayes_ridge_at_zero_noise_is_min_norm_least_squares(ell, d):
    rng = np.random.default_rng(1)
    X, y, xq = rng.normal(size=(2, ell, d)), rng.normal(size=(2, ell)), rng.normal(size=(2, d))
    pred = bayes_ridge_predict(X, y, xq, 0.0)
    for m in range(2):
        w_ls = np.linalg.lstsq(X[m], y[m], rcond=None)[0]  # minimum-norm solution
        assert_allclose(pred[m], xq[m] @ w_ls, rtol=1e-8)
    # and it is the rho -> 0+ limit
    assert_allclose(bayes_ridge_predict(X, y, xq, 1e-9), pred, rtol=1e-5)


def test_bayes_error_matches_its_exact_conditional_risk():
    """For any prior with E[w w^T] = I independent of X, the ridge risk given X is
    rho + (rho/d) tr (X^T X + rho I)^{-1} (bias and variance combine exactly)."""
    d, ell, rho, n = 8, 12, 0.5, 8000
    err = baseline_errors(d, ell / d, None, rho, setting="icl", n_test=n, rng=2)
    mean, se = err["bayes"]
    X = sample_contexts(4000, d, ell, None, None, rho, rng=3).X
    risk = rho + rho / d * np.trace(np.linalg.inv(np.swapaxes(X, 1, 2) @ X + rho * np.eye(d)), axis1=1, axis2=2)
    assert abs(mean - risk.mean()) < 4 * np.hypot(se, risk.std() / np.sqrt(len(risk)))


def test_bayes_beats_least_squares():
    d, ell, rho, n = 10, 14, 0.5, 4000
    ctx = sample_contexts(n, d, ell, None, None, rho, rng=4)
    e_bayes = (ctx.y_query - bayes_ridge_predict(ctx.X, ctx.y, ctx.x_query, rho)) ** 2
    e_ls = (ctx.y_query - bayes_ridge_predict(ctx.X, ctx.y, ctx.x_query, 0.0)) ** 2
    diff = e_ls - e_bayes
    assert diff.mean() > 5 * diff.std(ddof=1) / np.sqrt(n)
    assert e_bayes.mean() > rho  # nobody beats the noise


# ----------------------------------------------------------------------------------------
# dMMSE
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("teacher", [None, "relu", relu])
@pytest.mark.parametrize("rho", [0.0, 0.2])
def test_dmmse_single_task_returns_the_teacher(teacher, rho):
    tasks = sample_tasks(1, 6, rng=5)
    ctx = sample_contexts(20, 6, 4, tasks, teacher, rho, rng=6)
    pred = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, teacher, rho)
    z = ctx.x_query @ tasks[0]
    assert_allclose(pred, z if teacher is None else relu(z), rtol=1e-12)


def test_dmmse_matches_the_explicit_formula():
    rng = np.random.default_rng(7)
    d, ell, k, rho = 4, 6, 5, 0.7
    tasks = sample_tasks(k, d, rng=rng)
    ctx = sample_contexts(3, d, ell, tasks, "relu", rho, rng=rng)
    pred = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, "relu", rho)
    for m in range(3):
        rss = np.array([np.sum((ctx.y[m] - relu(ctx.X[m] @ w)) ** 2) for w in tasks])
        weights = np.exp(-(rss - rss.min()) / (2 * rho))
        weights /= weights.sum()
        assert_allclose(pred[m], weights @ relu(tasks @ ctx.x_query[m]), rtol=1e-10)


def test_dmmse_is_stable_for_tiny_noise_and_has_the_argmin_limit():
    d, ell, k = 5, 3, 4
    tasks = sample_tasks(k, d, rng=8)
    ctx = sample_contexts(200, d, ell, tasks, None, 1e-3, rng=9)
    exact = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, None, 0.0)
    tiny = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, None, 1e-12)  # weights exp(-1e9): no overflow
    assert np.all(np.isfinite(tiny))
    assert_allclose(tiny, exact, rtol=1e-8, atol=1e-12)
    # the limit picks the best-fitting task
    rss = np.sum((ctx.y[:, :, None] - ctx.X @ tasks.T) ** 2, axis=1)
    best = tasks[np.argmin(rss, axis=1)]
    assert_allclose(exact, np.einsum("nd,nd->n", ctx.x_query, best), rtol=1e-12)
    # duplicated tasks tie exactly and share the weight
    twin = np.vstack([tasks[:1], tasks[:1]])
    assert_allclose(dmmse_predict(ctx.X, ctx.y, ctx.x_query, twin, None, 0.0), ctx.x_query @ tasks[0])


@pytest.mark.parametrize("teacher", [None, "relu"])
@pytest.mark.parametrize("k", [1, 2])
def test_dmmse_error_reaches_the_noise_with_few_tasks_and_long_contexts(teacher, k):
    d, rho = 10, 0.1
    tasks = sample_tasks(k, d, rng=10)
    err = baseline_errors(d, 5.0, tasks, rho, teacher, setting="idg", n_test=6000, rng=11)
    mean, se = err["dmmse"]
    assert abs(mean - rho) < 4 * se
    assert err["bayes"][0] > mean  # the generalizing baseline pays for not knowing the task set


def test_icl_setting_uses_fresh_tasks():
    """dMMSE memorizes: good in distribution, bad on fresh tasks; ridge does not care."""
    d, rho = 8, 0.1
    tasks = sample_tasks(2, d, rng=12)
    idg = baseline_errors(d, 2.0, tasks, rho, setting="idg", n_test=3000, rng=13)
    icl = baseline_errors(d, 2.0, tasks, rho, setting="icl", n_test=3000, rng=14)
    assert icl["dmmse"][0] > 1.0 and idg["dmmse"][0] < 0.15
    assert abs(icl["bayes"][0] - idg["bayes"][0]) < 5 * np.hypot(icl["bayes"][1], idg["bayes"][1])
    only = baseline_errors(d, 2.0, None, rho, n_test=100, rng=15)
    assert set(only) == {"bayes"}
    assert set(baseline_errors(d, 2.0, tasks, rho, n_test=100, rng=15, which="dmmse")) == {"dmmse"}
    # reproducible
    assert baseline_errors(d, 2.0, tasks, rho, n_test=100, rng=16) == baseline_errors(
        d, 2.0, tasks, rho, n_test=100, rng=16
    )


# ----------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------


def test_bad_input_is_named():
    X, y, xq = np.ones((2, 3, 4)), np.ones((2, 3)), np.ones((2, 4))
    with pytest.raises(ValueError, match="y"):
        bayes_ridge_predict(X, np.ones((2, 4)), xq, 0.1)
    with pytest.raises(ValueError, match="x_query"):
        bayes_ridge_predict(X, y, np.ones((3, 4)), 0.1)
    with pytest.raises(ValueError, match="X"):
        bayes_ridge_predict(np.ones((3, 4)), y, xq, 0.1)
    with pytest.raises(ValueError, match="rho"):
        bayes_ridge_predict(X, y, xq, -1.0)
    with pytest.raises(ValueError, match="X"):
        bayes_ridge_predict(np.full((2, 3, 4), np.nan), y, xq, 0.1)
    with pytest.raises(ValueError, match="tasks"):
        dmmse_predict(X, y, xq, np.ones((2, 5)), None, 0.1)
    with pytest.raises(ValueError, match="tasks"):
        dmmse_predict(X, y, xq, None, None, 0.1)
    with pytest.raises(ValueError, match="teacher"):
        dmmse_predict(X, y, xq, np.ones((2, 4)), lambda z: 0.0, 0.1)
    tasks = np.ones((2, 4))
    with pytest.raises(ValueError, match="alpha"):
        baseline_errors(4, 0.1, tasks, 0.1)
    with pytest.raises(ValueError, match="setting"):
        baseline_errors(4, 1.0, tasks, 0.1, setting="ood")
    with pytest.raises(ValueError, match="which"):
        baseline_errors(4, 1.0, tasks, 0.1, which=("bayes", "ols"))
    with pytest.raises(ValueError, match="dmmse"):
        baseline_errors(4, 1.0, None, 0.1, which=("dmmse",))
    with pytest.raises(ValueError, match="n_test"):
        baseline_errors(4, 1.0, tasks, 0.1, n_test=1)
    with pytest.raises(ValueError, match="tasks"):
        baseline_errors(4, 1.0, np.ones((2, 3)), 0.1)


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
    want = [
        0.4 + 0.64 * xq[i] @ X[i].T @ np.linalg.solve(0.64 * X[i] @ X[i].T + rho * np.eye(ell), y[i] - 0.4)
        for i in range(n)
    ]
    assert_allclose(got, want, rtol=1e-10)
    # linear teacher: the same as the Bayes ridge predictor
    assert_allclose(
        baselines.gaussian_equivalent_predict(X, y, xq, None, rho),
        baselines.bayes_ridge_predict(X, y, xq, rho),
        rtol=1e-12,
    )
    # a1 = 0: the constant a0
    assert_allclose(baselines.gaussian_equivalent_predict(X, y, xq, "h2", rho), 0.0, atol=1e-12)


def test_context_ridge_errors_match_theory():
    out = baselines.context_ridge_errors(60, 3.0, 0.1, "relu", n_test=4000, rng=1)
    assert set(out) == {"ridge", "ge", "ge_intercept"}
    for name, kw in (("ridge", dict(ridge=0.1)), ("ge", None), ("ge_intercept", None)):
        if kw is None:
            intercept = name == "ge_intercept"
            kw = dict(
                ridge=teachers.gaussian_equivalent_ridge("relu", 0.1, intercept=intercept)[1], intercept=intercept
            )
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


# --------------------------------------------------------------------------------------
# dMMSE weights, second test
# --------------------------------------------------------------------------------------
def test_dmmse_is_bayes_rule_with_gaussian_likelihoods():
    """Posterior over the task set by Bayes' rule with scipy's normal densities, token by
    token (no log-sum-exp): the prediction is the posterior mean of f(x_q^T w)."""
    rng = np.random.default_rng(21)
    d, ell, k, rho = 3, 4, 3, 0.5
    tasks = sample_tasks(k, d, rng=rng)
    f = get_link("tanh")
    ctx = sample_contexts(6, d, ell, tasks, f, rho, rng=rng)
    pred = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, f, rho)
    for m in range(6):
        post = np.full(k, 1.0 / k)
        for i in range(ell):
            post = post * stats.norm.pdf(ctx.y[m, i], loc=f(tasks @ ctx.X[m, i]), scale=np.sqrt(rho))
            post /= post.sum()
        assert_allclose(pred[m], post @ f(tasks @ ctx.x_query[m]), rtol=1e-9)


def test_dmmse_with_tiny_noise_is_finite():
    tasks = samplers.sample_tasks(5, 4, rng=0)
    ctx = sample_contexts(30, 4, 6, tasks, rho=0.1, rng=1)
    for rho in (1e-320, 5e-324, 1e-300):
        pred = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, rho=rho)
        assert np.all(np.isfinite(pred))
        assert_allclose(pred, dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, rho=0.0))


# --- issue 19, item 4: a rank-deficient context at tiny rho ------------------------------
@pytest.mark.parametrize("ell", [12, 3])
def test_bayes_ridge_is_continuous_in_rho_down_to_zero_on_a_rank_deficient_context(ell):
    rng = np.random.default_rng(0)
    n, d = 4, 6
    X = rng.standard_normal((n, ell, d)) / np.sqrt(d)
    X[:, :, -1] = X[:, :, 0]  # two equal columns: X^T X is singular
    y, xq = rng.standard_normal((n, ell)), rng.standard_normal((n, d)) / np.sqrt(d)
    at_zero = bayes_ridge_predict(X, y, xq, 0.0)
    for rho in (1e-300, 1e-100, 1e-14, 1e-8):
        # the ridge fit moves by O(rho) from the pseudo-inverse fit
        assert np.max(np.abs(bayes_ridge_predict(X, y, xq, rho) - at_zero)) <= 1e3 * rho + 1e-12


def test_context_ridge_errors_exact_query():
    """The exact average over the query agrees with sampled queries and with the theory."""
    exact = baselines.context_ridge_errors(40, 3.0, 0.1, "relu", n_test=300, rng=4, exact_query=True)
    sampled = baselines.context_ridge_errors(40, 3.0, 0.1, "relu", n_test=6000, rng=5)
    for name in ("ridge", "ge", "ge_intercept"):
        (m_e, se_e), (m_s, se_s) = exact[name], sampled[name]
        assert se_e < 0.5 * se_s  # far smaller scatter with 20 times fewer contexts
        assert abs(m_e - m_s) < 4 * np.hypot(se_e, se_s)
    want = theory.context_ridge_error("relu", 3.0, 0.1, 0.1)
    assert abs(exact["ridge"][0] - want) < 0.03 * want  # O(1/d) bias at d = 40
    with pytest.raises(TypeError, match="exact_query"):
        baselines.context_ridge_errors(10, 2.0, 0.1, "relu", n_test=4, exact_query=1)


def test_context_ridge_twin_errors():
    """Teacher and twin on shared draws: equal for a linear teacher, close for ReLU."""
    e, e_twin = baselines.context_ridge_twin_errors(20, 2.0, 0.1, None, 0.3, n_test=5, rng=1)
    assert_allclose(e, e_twin, rtol=0, atol=1e-12)  # the linear teacher is its own twin
    for intercept in (False, True):
        e, e_twin = baselines.context_ridge_twin_errors(
            60, 3.0, 0.1, "relu", 0.5, intercept=intercept, n_test=300, rng=2
        )
        assert e.shape == e_twin.shape == (300,)
        assert np.all(e > 0) and np.all(e_twin > 0)
        diff = e - e_twin
        assert np.std(diff) < np.std(e)  # independent draws would give sqrt(2) std(e)
        want = theory.context_ridge_error("relu", 3.0, 0.1, 0.5, intercept=intercept)
        assert abs(e_twin.mean() - want) < 4 * e_twin.std() / np.sqrt(300) + 0.02 * want
    with pytest.raises(ValueError, match="ridge"):
        baselines.context_ridge_twin_errors(10, 2.0, 0.1, "relu", 0.0, n_test=4)
    with pytest.raises(TypeError, match="intercept"):
        baselines.context_ridge_twin_errors(10, 2.0, 0.1, "relu", 0.1, intercept=1, n_test=4)


def test_context_ridge_exact_query_formula():
    """One context: the closed-form average over the query against 2e5 sampled queries."""
    rng = np.random.default_rng(8)
    d, ell, rho = 6, 15, 0.2
    ctx = sample_contexts(1, d, ell, None, "relu", rho, rng)
    c, ridge = teachers.gaussian_equivalent_ridge("relu", rho)
    v = baselines._ridge_weights(ctx.X, ctx.y - c, ridge)[0]
    w = ctx.w[0]
    a0, a1, ef2 = teachers.teacher_moments("relu")
    exact = rho + ef2 - 2 * a0 * c + c * c - 2 * a1 * (w @ v) / d + (v @ v) / d
    xq = rng.standard_normal((200_000, d)) / np.sqrt(d)
    yq = np.maximum(xq @ w, 0.0) + np.sqrt(rho) * rng.standard_normal(200_000)
    err = (yq - c - xq @ v) ** 2
    assert abs(err.mean() - exact) < 4 * err.std() / np.sqrt(err.size)
