"""Tests of the spectral in-context estimator (lib.spectral) and its theory (lib.theory.spectral_limits)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import hermite, samplers, spectral
from lib.theory import spectral_limits


def _brute_direction(X, y, preprocess=None):
    """Loop over contexts, form M = (1/ell) sum_i T_i (d x_i x_i^T - I), full eig."""
    n, ell, d = X.shape
    T = spectral.spectral_preprocess(y, preprocess)
    out = np.empty((n, d))
    for j in range(n):
        M = np.zeros((d, d))
        for i in range(ell):
            M += T[j, i] * (d * np.outer(X[j, i], X[j, i]) - np.eye(d))
        M /= ell
        vals, vecs = np.linalg.eig(M)
        v = np.real(vecs[:, np.argmax(np.real(vals))])
        out[j] = v / np.linalg.norm(v)
    return out


def _brute_predict(X, y, x_query, preprocess=None, degree=4):
    n, _, d = X.shape
    W = _brute_direction(X, y, preprocess)
    pred = np.empty(n)
    for j in range(n):
        s = np.sqrt(d) * X[j] @ W[j]
        H = np.stack([hermite.hermite_function(k, s) for k in range(degree + 1)], axis=1)
        b = np.linalg.lstsq(H, y[j], rcond=None)[0]
        sq = np.sqrt(d) * x_query[j] @ W[j]
        pred[j] = sum(b[k] * hermite.hermite_function(k, sq) for k in range(degree + 1))
    return pred


@pytest.fixture(scope="module")
def ctx():
    return samplers.sample_contexts(5, 12, 40, None, "h2", 0.1, np.random.default_rng(3))


@pytest.mark.parametrize("pre", [None, "clip", "square", lambda y: np.tanh(y)])
def test_direction_matches_brute_force(ctx, pre):
    fast = spectral.spectral_direction(ctx.X, ctx.y, pre)
    slow = _brute_direction(ctx.X, ctx.y, pre)
    assert_allclose(np.abs(np.einsum("nd,nd->n", fast, slow)), 1.0, atol=1e-10)
    assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-12)


def test_predict_matches_brute_force(ctx):
    fast = spectral.spectral_predict(ctx.X, ctx.y, ctx.x_query)
    slow = _brute_predict(ctx.X, ctx.y, ctx.x_query)
    assert_allclose(fast, slow, rtol=1e-8, atol=1e-10)


def test_given_link_sign_is_fixed_from_the_data():
    rng = np.random.default_rng(5)
    c = samplers.sample_contexts(4, 20, 400, None, "cubic", 0.01, rng)
    link = hermite.get_link("cubic")
    pred = spectral.spectral_predict(c.X, c.y, c.x_query, preprocess="square", link=link)
    # with a good direction the prediction is close to the truth f(x^T w)
    truth = link(np.einsum("nd,nd->n", c.x_query, c.w))
    assert np.mean((pred - truth) ** 2) < 0.3 * np.var(truth)


def test_exact_test_error_matches_monte_carlo():
    rng = np.random.default_rng(11)
    c = samplers.sample_contexts(3, 30, 120, None, "relu", 0.1, rng)
    exact = spectral.spectral_test_error(c.X, c.y, c.w, "relu", 0.1)
    w_hat, coef = spectral.spectral_fit(c.X, c.y)
    xq = rng.standard_normal((200_000, 30)) / np.sqrt(30)
    for j in range(3):
        yq = np.maximum(xq @ c.w[j], 0.0) + np.sqrt(0.1) * rng.standard_normal(xq.shape[0])
        s = np.sqrt(30) * xq @ w_hat[j]
        g = hermite.partial_sum(coef[j], s)
        err = (yq - g) ** 2
        assert abs(err.mean() - exact[j]) < 5 * err.std() / np.sqrt(err.size)


def test_validation_messages(ctx):
    with pytest.raises(ValueError, match="preprocess must be None"):
        spectral.spectral_predict(ctx.X, ctx.y, ctx.x_query, preprocess="cube")
    with pytest.raises(TypeError, match="preprocess"):
        spectral.spectral_direction(ctx.X, ctx.y, preprocess=3)
    with pytest.raises(ValueError, match="y must have shape"):
        spectral.spectral_direction(ctx.X, ctx.y[:, :-1])
    with pytest.raises(ValueError, match="x_query must have shape"):
        spectral.spectral_predict(ctx.X, ctx.y, ctx.x_query[:, :-1])
    with pytest.raises(TypeError, match="link must be None"):
        spectral.spectral_predict(ctx.X, ctx.y, ctx.x_query, link=2.0)
    with pytest.raises(ValueError, match="degree = 50 needs"):
        spectral.spectral_predict(ctx.X, ctx.y, ctx.x_query, degree=50)
    with pytest.raises(ValueError, match="non-finite"):
        spectral.spectral_preprocess(ctx.y, lambda y: np.full_like(y, np.inf))
    with pytest.raises(ValueError, match="alpha must be >"):
        spectral_limits.spectral_overlap(0.0, "h2", 0.1)
    with pytest.raises(ValueError, match="rho must be >="):
        spectral_limits.spectral_overlap(1.0, "h2", -0.1)
    with pytest.raises(ValueError, match="sup T"):
        spectral_limits.spectral_overlap(1.0, "h2", 0.1, preprocess=lambda y: -np.abs(y) - 1.0)
    with pytest.raises(ValueError, match="rho must be >"):
        spectral_limits.optimal_preprocess("h2", 0.0)


def test_threshold_and_limits():
    a_c = spectral_limits.spectral_threshold("h2", 0.1)
    q = spectral_limits.spectral_overlap(np.array([0.5 * a_c, 0.99 * a_c, 1.01 * a_c, 1e4]), "h2", 0.1)
    assert q[0] == 0.0 and q[1] == 0.0
    assert 0.0 < q[2] < 0.05
    assert q[3] > 0.999
    qs = spectral_limits.spectral_overlap(np.logspace(0, 3, 12), "h2", 0.1)
    assert np.all(np.diff(qs) > 0)
    # tanh of the labels of the linear teacher: the recovery margin never turns positive
    assert spectral_limits.spectral_threshold("linear", 0.1, "tanh") == np.inf


def test_error_formula_limits():
    rho = 0.1
    e = spectral_limits.spectral_error(np.array([0.1, 1e5]), "h2", rho)
    assert_allclose(e[0], rho + 1.0)  # q = 0: the label variance
    assert e[1] < rho + 1e-3  # q -> 1: only the noise is left
    # degree restriction adds the tail of the Hermite series
    e_d2 = spectral_limits.spectral_error(1e5, "relu", rho, degree=2)
    relu = hermite.get_link("relu")
    tail = relu.second_moment - np.sum(hermite.coefficients(relu, 2) ** 2)
    assert_allclose(e_d2, rho + tail, atol=2e-3)


def test_optimal_preprocess_reaches_the_weak_recovery_threshold():
    T = spectral_limits.optimal_preprocess("h2", 0.1)
    a_opt = spectral_limits.spectral_threshold("h2", 0.1, T)
    assert_allclose(a_opt, spectral_limits.weak_recovery_threshold("h2", 0.1), rtol=1e-4)
    assert a_opt < spectral_limits.spectral_threshold("h2", 0.1)  # below the default's threshold
    assert spectral_limits.weak_recovery_threshold("relu", 0.1) == 0.0  # E[z | y] != 0


def test_overlap_against_simulation():
    rng = np.random.default_rng(2024)
    d, rho, n = 150, 0.1, 12
    for alpha in (1.5, 4.0):
        c = samplers.sample_contexts(n, d, int(alpha * d), None, "h2", rho, rng)
        W = spectral.spectral_direction(c.X, c.y)
        q_sim = np.einsum("nd,nd->n", W, c.w) ** 2 / d
        q_th = spectral_limits.spectral_overlap(alpha, "h2", rho)
        se = q_sim.std(ddof=1) / np.sqrt(n)
        assert abs(q_sim.mean() - q_th) < 4 * se + 0.03


# The spectral theory standardises y by its standard deviation, not sqrt(E y^2): the two
# agree when a_0 = 0 (every teacher above), so test a teacher with a_0 != 0, |z| + z
# (chapter 6's "mixed", a_0 = sqrt(2/pi)), and the invariance the standardisation exists
# for: a constant shift of y changes nothing.
_A0_ABS = float(np.sqrt(2.0 / np.pi))
_MIXED = hermite.Link("abs_plus_z", lambda z: np.abs(z) + z, r"$|z| + z$", "|z| + z")
_MIXED_CENTRED = hermite.Link("abs_plus_z_centred", lambda z: np.abs(z) + z - _A0_ABS, r"$|z| + z - a_0$", "centred")


def test_spectral_overlap_is_shift_invariant_for_a_teacher_with_a0():
    a = spectral_limits.spectral_overlap(3.5, _MIXED, 0.1)
    assert a > 0.0
    assert_allclose(a, spectral_limits.spectral_overlap(3.5, _MIXED_CENTRED, 0.1), rtol=1e-8)
    # alpha_c = 2.96 lies between 2.7 and 3.5 (sqrt(E y^2) would move it to 2.48)
    assert spectral_limits.spectral_overlap(2.7, _MIXED, 0.1) == 0.0


@pytest.mark.slow
def test_spectral_threshold_of_abs_plus_z_is_shift_invariant():
    a_c = spectral_limits.spectral_threshold(_MIXED, 0.1)
    assert round(a_c, 2) == 2.96
    assert_allclose(a_c, spectral_limits.spectral_threshold(_MIXED_CENTRED, 0.1), rtol=1e-8)


# --- issue 19, item 4: numerics at the edges of the spectral theory --------------------
@pytest.mark.parametrize("bad", [lambda z: z * np.nan, lambda z: z[:3], lambda z: z + 1j])
def test_weak_recovery_threshold_refuses_a_bad_teacher(bad):
    with pytest.raises(ValueError, match="f must"):
        spectral_limits.weak_recovery_threshold(bad, 0.1)


@pytest.mark.parametrize("rho", [1e-300, 1e-40, 1e-20, 1e-16])
def test_weak_recovery_threshold_h2_small_rho_tends_to_one_half(rho):
    # rho -> 0: E[z^2 | y] = sqrt(2) y + 1, so alpha_u = 1 / E[(z^2 - 1)^2] = 1/2
    assert spectral_limits.weak_recovery_threshold("h2", rho) == pytest.approx(0.5, abs=1e-3)


def test_spectral_overlap_at_huge_alpha_is_one_and_refused_beyond_the_bound():
    alpha = np.array([1e20, 1e50, 1e150, 1e300])
    assert_allclose(spectral_limits.spectral_overlap(alpha, "h2", 0.1), 1.0)
    # a preprocessing independent of z^2 never recovers, at any alpha
    assert_allclose(spectral_limits.spectral_overlap(1e300, "h2", 0.1, lambda y: np.ones_like(y)), 0.0)
    with pytest.raises(ValueError, match="SPECTRAL_OVERLAP_ALPHA_MAX"):
        spectral_limits.spectral_overlap(1e301, "h2", 0.1)


@pytest.mark.parametrize("pre", [lambda y: y, lambda y: y**2, lambda y: np.abs(y) + y, lambda y: np.log1p(np.abs(y))])
def test_spectral_theory_refuses_a_preprocessing_unbounded_above(pre):
    with pytest.raises(ValueError, match="preprocess must be bounded above"):
        spectral_limits.spectral_threshold("h2", 0.1, pre)


def test_spectral_theory_wraps_a_raising_preprocessing_and_accepts_unbounded_below():
    with pytest.raises(ValueError, match="preprocess must be a vectorized function.*ZeroDivisionError"):
        spectral_limits.spectral_overlap(2.0, "h2", 0.1, lambda y: 1 / 0)
    t_opt = spectral_limits.optimal_preprocess("h2", 0.1)  # unbounded below, bounded above
    assert np.isfinite(spectral_limits.spectral_threshold("h2", 0.1, t_opt))


def test_spectral_predict_refuses_a_complex_link():
    ctx = samplers.sample_contexts(3, 5, 20, None, "h2", 0.1, 0)
    with pytest.raises(ValueError, match="link must return real numbers"):
        spectral.spectral_predict(ctx.X, ctx.y, ctx.x_query, link=lambda s: s + 1j)


def test_clip_level_is_three_label_standard_deviations():
    """The ``clip`` and ``square`` preprocessings cut at SPECTRAL_CLIP = 3 standardized units,
    and chapter 6's printed consequence: the h3 threshold with ``clip`` is 3.3 at rho = 0.1
    (a level of 2 would move it to 5.1)."""
    assert spectral_limits.SPECTRAL_CLIP == 3.0
    y = np.array([[0.0] * 98 + [100.0, -100.0]])  # standardized: +-7.07 at the two outliers
    u = (y - y.mean()) / y.std()
    assert_allclose(spectral.spectral_preprocess(y, "clip"), np.clip(u, -3.0, 3.0), rtol=1e-15)
    assert_allclose(spectral.spectral_preprocess(y, "square"), np.minimum(u**2, 9.0), rtol=1e-15)
    assert spectral.spectral_preprocess(y, "clip")[0, -2] == 3.0
    assert f"{spectral_limits.spectral_threshold('h3', 0.1, 'clip'):.1f}" == "3.3"
