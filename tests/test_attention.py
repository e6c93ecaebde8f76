"""Tests of lib.attention: the reduction of linear attention to Gamma, the three ridge
solvers, the exact finite-d error and simulate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from lib.attention import (
    AUTO_DENSE_MAX_P,
    AUTO_DUAL_MAX_N,
    ConvergenceError,
    _auto_method,
    embed,
    exact_error,
    fit_gamma,
    gamma_from_weights,
    linear_attention,
    predict,
    weights_from_gamma,
)
from lib.samplers import context_features, feature_matrix, sample_features, sample_task_set, sample_tasks
from lib.simulation import mc_error

SOLVERS = ("dense", "dual", "matfree")


def random_contexts(rng, n, ell, d):
    X = rng.standard_normal((n, ell, d)) / np.sqrt(d)
    y = rng.standard_normal((n, ell))
    xq = rng.standard_normal((n, d)) / np.sqrt(d)
    return X, y, xq


def random_weights(rng, d):
    W_kq = rng.standard_normal((d + 1, d + 1))
    W_pv = rng.standard_normal((d + 1, d + 1))
    W_pv[d, :d] = 0.0  # the block v21 of the reduced model
    return W_kq, W_pv


# ----------------------------------------------------------------------------------------
# the attention layer and its reduction
# ----------------------------------------------------------------------------------------


def test_embed_layout():
    rng = np.random.default_rng(0)
    X, y, xq = random_contexts(rng, 3, 4, 2)
    Z = embed(X, y, xq)
    assert Z.shape == (3, 3, 5)
    assert_allclose(Z[1, :2, 2], X[1, 2])
    assert_allclose(Z[1, 2, :4], y[1])
    assert_allclose(Z[:, :2, 4], xq)
    assert np.all(Z[:, 2, 4] == 0.0)
    assert_allclose(embed(X[0], y[0], xq[0]), Z[0])


@settings(max_examples=40, deadline=None)
@given(
    d=st.integers(1, 6),
    ell=st.integers(1, 7),
    n=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_attention_equals_reduced_model(d, ell, n, seed):
    """LSA forward pass == <Gamma, H_Z> for random weights (v21 = 0) and random data."""
    rng = np.random.default_rng(seed)
    X, y, xq = random_contexts(rng, n, ell, d)
    W_kq, W_pv = random_weights(rng, d)
    full = linear_attention(embed(X, y, xq), W_kq, W_pv)
    gamma = gamma_from_weights(W_kq, W_pv)
    assert gamma.shape == (d, d + 1)
    f = context_features(X, y)
    reduced = predict(gamma, xq, f)
    assert_allclose(full, reduced, rtol=1e-10, atol=1e-12)
    # the same through the explicit matrix feature H_Z = x_q f^T
    H = feature_matrix(xq, f)
    assert_allclose(np.einsum("nij,ij->n", H, gamma), reduced, rtol=1e-10, atol=1e-12)


def test_attention_matches_literal_matrix_formula():
    """linear_attention == entry (d+1, ell+1) of W_pv Z M (Z^T W_kq Z) / ell, written out."""
    rng = np.random.default_rng(1)
    d, ell = 3, 5
    X, y, xq = random_contexts(rng, 2, ell, d)
    W_kq, W_pv = rng.standard_normal((2, d + 1, d + 1))  # any weights, v21 included
    Z = embed(X, y, xq)
    M = np.diag(np.r_[np.ones(ell), 0.0])
    literal = [(Zi + W_pv @ Zi @ M @ (Zi.T @ W_kq @ Zi) / ell)[d, ell] for Zi in Z]
    assert_allclose(linear_attention(Z, W_kq, W_pv), literal, rtol=1e-12)


def test_dropped_blocks_never_reach_the_prediction():
    rng = np.random.default_rng(2)
    d, ell = 4, 6
    Z = embed(*random_contexts(rng, 5, ell, d))
    W_kq, W_pv = random_weights(rng, d)
    before = linear_attention(Z, W_kq, W_pv)
    W_kq2, W_pv2 = W_kq.copy(), W_pv.copy()
    W_kq2[:, d] = rng.standard_normal(d + 1)  # acts on the query's zero label
    W_pv2[:d, :] = rng.standard_normal((d, d + 1))  # writes to the token slots only
    assert_allclose(linear_attention(Z, W_kq2, W_pv2), before, rtol=1e-12)
    assert_allclose(gamma_from_weights(W_kq2, W_pv2), gamma_from_weights(W_kq, W_pv))


def test_gamma_from_weights_rejects_v21():
    rng = np.random.default_rng(3)
    W_kq, W_pv = random_weights(rng, 3)
    W_pv[3, 0] = 0.5
    with pytest.raises(ValueError, match="v21"):
        gamma_from_weights(W_kq, W_pv)


def test_weights_from_gamma_round_trip():
    rng = np.random.default_rng(4)
    d, ell = 5, 7
    gamma = rng.standard_normal((d, d + 1))
    W_kq, W_pv = weights_from_gamma(gamma)
    assert_allclose(gamma_from_weights(W_kq, W_pv), gamma, rtol=1e-14)
    X, y, xq = random_contexts(rng, 4, ell, d)
    assert_allclose(
        linear_attention(embed(X, y, xq), W_kq, W_pv), predict(gamma, xq, context_features(X, y)), rtol=1e-10
    )


def test_attention_input_validation():
    rng = np.random.default_rng(5)
    X, y, xq = random_contexts(rng, 2, 3, 2)
    with pytest.raises(ValueError, match="y must have shape"):
        embed(X, y[:, :2], xq)
    with pytest.raises(ValueError, match="x_query"):
        embed(X, y, xq[:, :1])
    with pytest.raises(ValueError, match="W_kq"):
        linear_attention(embed(X, y, xq), np.eye(4), np.eye(4))
    with pytest.raises(ValueError, match="W_pv"):
        gamma_from_weights(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="gamma"):
        predict(np.zeros((2, 2)), xq, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="features"):
        predict(np.zeros((2, 3)), xq, np.zeros((2, 2)))


# ----------------------------------------------------------------------------------------
# the solvers
# ----------------------------------------------------------------------------------------


def small_problem(n, d=5, seed=0):
    """A pretraining set from the book's sampler (linear teacher, 3 tasks)."""
    rng = np.random.default_rng(seed)
    tasks = sample_tasks(3, d, rng)
    return sample_features(n, d, 2 * d, tasks, None, 0.2, rng)


def reference_gamma(batch, lam):
    """Independent reference: explicit H_Z flattened in C order, numpy solve / lstsq."""
    X, F, y = batch
    n, d = X.shape
    H = feature_matrix(X, F).reshape(n, -1)
    if lam > 0:
        theta = np.linalg.solve(H.T @ H + n / d * lam * np.eye(H.shape[1]), H.T @ y)
    else:
        theta = np.linalg.lstsq(H, y, rcond=None)[0]  # minimum-norm least squares
    return theta.reshape(d, d + 1)


@pytest.mark.parametrize("n", [12, 90])  # p = 30: n < p and n > p
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_solvers_agree(n, lam):
    batch = small_problem(n)
    ref = reference_gamma(batch, lam)
    for method in SOLVERS:
        gamma, info = fit_gamma(*batch, lam=lam, method=method, return_info=True)
        tol = 1e-6 if method == "matfree" else 1e-9
        assert_allclose(gamma, ref, rtol=0, atol=tol * np.abs(ref).max(), err_msg=f"{method}: {info}")


def test_min_norm_interpolator_when_n_below_p():
    """lam = 0, n < p: Gamma interpolates, lies in the row space of Phi, has the smallest norm."""
    batch = small_problem(14, d=5, seed=1)
    X, F, y = batch
    H = feature_matrix(X, F).reshape(len(y), -1)  # rows of Phi (C-order flattening)
    rng = np.random.default_rng(0)
    null = np.linalg.svd(H)[2][len(y) :]  # orthonormal basis of the null space of Phi
    for method in SOLVERS:
        gamma = fit_gamma(*batch, lam=0.0, method=method)
        theta = gamma.ravel()
        assert_allclose(H @ theta, y, atol=1e-7)  # an interpolator
        assert np.linalg.norm(null @ theta) < 1e-6 * np.linalg.norm(theta)  # in the row space
        for _ in range(5):  # any other interpolator is longer
            other = theta + null.T @ rng.standard_normal(null.shape[0]) * 0.1
            assert_allclose(H @ other, y, atol=1e-7)
            assert np.linalg.norm(other) > np.linalg.norm(theta)
        # and it is the limit lam -> 0+
        assert_allclose(fit_gamma(*batch, lam=1e-9, method="dual"), gamma, rtol=0, atol=1e-5 * np.abs(gamma).max())


@pytest.mark.parametrize("method", SOLVERS)
def test_noiseless_recovery(method):
    """Targets generated exactly by some Gamma (n > p) are fitted back exactly."""
    rng = np.random.default_rng(7)
    X, F, _ = small_problem(120, d=4, seed=3)
    truth = rng.standard_normal((4, 5))
    y = predict(truth, X, F)
    assert_allclose(fit_gamma(X, F, y, method=method), truth, rtol=0, atol=1e-6)


def test_matfree_equals_dense_on_book_data():
    """Realistic sizes (d = 12, tau = 2, alpha = 2): Gamma to 1e-6, test error to 1e-7."""
    d = 12
    rng = np.random.default_rng(11)
    tasks = sample_task_set(d, 1.5, rng)
    batch = sample_features(2 * d * d, d, 2 * d, tasks, None, 0.1, rng)
    dense = fit_gamma(*batch, method="dense")
    free, info = fit_gamma(*batch, method="matfree", return_info=True)
    assert info["iterations"] > 1
    assert np.linalg.norm(free - dense) / np.linalg.norm(dense) < 1e-6
    for t in (None, tasks):
        e_dense, e_free = exact_error(dense, 2 * d, 0.1, t), exact_error(free, 2 * d, 0.1, t)
        assert abs(e_free - e_dense) < 1e-7 * e_dense


def test_auto_rule():
    assert _auto_method(AUTO_DENSE_MAX_P, AUTO_DENSE_MAX_P) == "dense"
    assert _auto_method(AUTO_DENSE_MAX_P + 1, AUTO_DENSE_MAX_P + 1) == "matfree"
    assert _auto_method(AUTO_DUAL_MAX_N, AUTO_DUAL_MAX_N + 1) == "dual"
    assert _auto_method(AUTO_DUAL_MAX_N + 1, AUTO_DUAL_MAX_N + 2) == "matfree"
    _, info = fit_gamma(*small_problem(50), return_info=True)
    assert info["method"] == "dense"
    _, info = fit_gamma(*small_problem(10), return_info=True)
    assert info["method"] == "dual"


def test_rank_deficient_design():
    """lam = 0, n > p but F has two equal columns: the direct solvers return the minimum-norm
    least-squares solution; matfree (which would not) refuses."""
    X, F, y = small_problem(90)
    F = F.copy()
    F[:, -1] = F[:, 0]
    ref = reference_gamma((X, F, y), 0.0)
    for method in ("dense", "dual"):
        assert_allclose(fit_gamma(X, F, y, method=method), ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    with pytest.raises(ValueError, match="features are linearly dependent|columns of features"):
        fit_gamma(X, F, y, method="matfree")
    fit_gamma(X, F, y, lam=0.1, method="matfree")  # a ridge makes the problem well posed


@pytest.mark.parametrize("n", [12, 90])
def test_convergence_failure_raises(n):
    batch = small_problem(n)
    with pytest.raises(ConvergenceError, match="maxiter = 1"):
        fit_gamma(*batch, method="matfree", maxiter=1)
    assert issubclass(ConvergenceError, RuntimeError)


def test_fit_gamma_validation():
    X, F, y = small_problem(20)
    with pytest.raises(ValueError, match="features"):
        fit_gamma(X, F[:, :-1], y)
    with pytest.raises(ValueError, match="targets"):
        fit_gamma(X, F, y[:-1])
    with pytest.raises(ValueError, match="queries"):
        fit_gamma(X[0], F, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="queries must not be NaN"):
        fit_gamma(Xn, F, y)
    with pytest.raises(ValueError, match="lam"):
        fit_gamma(X, F, y, lam=-1.0)
    with pytest.raises(ValueError, match="method"):
        fit_gamma(X, F, y, method="cholesky")
    with pytest.raises(TypeError, match="maxiter"):
        fit_gamma(X, F, y, maxiter=2.5)


# ----------------------------------------------------------------------------------------
# test errors
# ----------------------------------------------------------------------------------------


def test_exact_error_of_zero_is_one_plus_rho():
    d = 6
    tasks = sample_tasks(4, d, 0)
    for rho in (0.0, 0.3):
        assert exact_error(np.zeros((d, d + 1)), 9, rho) == pytest.approx(1 + rho, abs=1e-15)
        assert exact_error(np.zeros((d, d + 1)), 9, rho, tasks) == pytest.approx(1 + rho, abs=1e-15)


@pytest.mark.parametrize("idg", [False, True])
def test_exact_error_against_direct_monte_carlo(idg):
    """exact_error vs squared errors on fully drawn contexts (no sufficient statistics).

    Gamma is random with a large last column and, for IDG, two tasks so that mu is far from
    0: every term of the formula matters. Tolerance 4 standard errors.
    """
    d, ell, rho = 4, 3, 0.3
    rng = np.random.default_rng(21)
    gamma = rng.standard_normal((d, d + 1)) * 0.5
    tasks = sample_tasks(2, d, rng) if idg else None
    batch = sample_features(200_000, d, ell, tasks, None, rho, rng, method="direct")
    err = (batch.targets - predict(gamma, batch.queries, batch.features)) ** 2
    se = err.std() / np.sqrt(err.size)
    assert abs(err.mean() - exact_error(gamma, ell, rho, tasks)) < 4 * se


def test_exact_error_validation():
    gamma = np.zeros((3, 4))
    with pytest.raises(ValueError, match="squared norm"):
        exact_error(gamma, 5, 0.1, np.ones((2, 3)) * 2.0)
    with pytest.raises(ValueError, match="tasks"):
        exact_error(gamma, 5, 0.1, np.ones((2, 4)))
    with pytest.raises(ValueError, match="gamma"):
        exact_error(np.zeros((3, 3)), 5, 0.1)
    with pytest.raises(ValueError, match="rho"):
        exact_error(gamma, 5, -0.1)
    with pytest.raises(ValueError, match="ell"):
        exact_error(gamma, 0, 0.1)
    with pytest.raises(ValueError, match="n_test"):
        mc_error(gamma, 5, None, None, 0.1, 1, 0)


# ----------------------------------------------------------------------------------------
# simulate
# ----------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# slow: statistics of whole simulations
# ----------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# simulate_many
# ----------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# ridge scaling (n/d) lam, second test
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["dense", "dual", "matfree"])
@pytest.mark.parametrize("n", [20, 120])  # p = 30 at d = 5: both sides of n = p
def test_ridge_penalty_is_n_over_d_lam(method, n):
    """Two properties that hold only for the penalty (n/d) lam ||Gamma||^2:
    the stationarity condition Phi^T (y - Phi theta) = (n/d) lam theta, and invariance
    under duplicating every context (the data term and the penalty both double)."""
    d, lam = 5, 0.37
    X, F, y = sample_features(n, d, 10, None, "tanh", 0.2, rng=n)
    gamma = fit_gamma(X, F, y, lam=lam, method=method, rtol=1e-12)
    resid = y - np.einsum("nd,de,ne->n", X, gamma, F)
    grad = X.T @ (resid[:, None] * F)  # Phi^T r as a d x (d+1) matrix
    assert_allclose(grad, n / d * lam * gamma, rtol=1e-6, atol=1e-9 * np.abs(grad).max())
    twice = fit_gamma(np.vstack([X, X]), np.vstack([F, F]), np.concatenate([y, y]), lam=lam, method=method, rtol=1e-12)
    assert_allclose(twice, gamma, rtol=1e-6, atol=1e-9)


# --- issue 19, item 4: data far from unit scale ------------------------------------------
@pytest.mark.parametrize("method", ["dense", "dual", "matfree"])
@pytest.mark.parametrize("scale", [1e160, 1e-160, 1e300])
@pytest.mark.parametrize("lam", [0.0, 0.1])
def test_fit_gamma_rescales_extreme_queries(method, scale, lam):
    from lib.samplers import sample_features

    n = 20 if method == "dual" else 300
    b = sample_features(n, 4, 8, None, rho=0.1, rng=np.random.default_rng(1))
    g = fit_gamma(b.queries * scale, b.features, b.targets, lam, method=method)
    if scale > 1 or lam == 0.0:  # the ridge is negligible (scale > 1) or absent
        ref = fit_gamma(b.queries, b.features, b.targets, 0.0, method=method) / scale
    else:  # the ridge dominates: Gamma = X^T diag(y) F / ((n / d) lam)
        ref = np.einsum("nd,n,nk->dk", b.queries * scale, b.targets, b.features) / (n / 4 * lam)
    assert np.all(ref != 0.0)
    assert_allclose(g, ref, rtol=1e-6)
