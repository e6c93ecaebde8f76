"""Tests for lib.samplers: laws of tokens, tasks and labels; the two feature samplers agree."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from lib.samplers import (
    Contexts,
    FeatureBatch,
    context_features,
    feature_matrix,
    sample_contexts,
    sample_features,
    sample_labels,
    sample_task_set,
    sample_tasks,
    sample_tokens,
)

# (teacher, E[f(z) z] = a_1, E[f(z)^2])
TEACHERS = [
    (None, 1.0, 1.0),
    ("relu", 0.5, 0.5),
    ("h2", 0.0, 1.0),
]


def assert_same_moments(sa: np.ndarray, sb: np.ndarray, zmax: float = 5.0) -> None:
    """Two-sample check that the columns of sa and sb (n, m) have equal means and second moments.

    Every mean and every mixed second moment E[s_i s_j] is compared with a z-score built
    from the two samples' own standard errors.
    """
    m = sa.shape[1]
    iu = np.triu_indices(m)
    pa = np.concatenate([sa, (sa[:, :, None] * sa[:, None, :])[:, iu[0], iu[1]]], axis=1)
    pb = np.concatenate([sb, (sb[:, :, None] * sb[:, None, :])[:, iu[0], iu[1]]], axis=1)
    se = np.sqrt(pa.var(axis=0, ddof=1) / len(pa) + pb.var(axis=0, ddof=1) / len(pb))
    zscores = np.abs(pa.mean(axis=0) - pb.mean(axis=0)) / se
    assert zscores.max() < zmax, f"moments differ: z-scores {np.round(zscores, 2)}"


def assert_mean(sample: np.ndarray, expected: float, zmax: float = 5.0) -> None:
    se = sample.std(ddof=1) / np.sqrt(len(sample))
    assert abs(sample.mean() - expected) < zmax * se, (sample.mean(), expected, se)


def context_statistics(fb: FeatureBatch, w: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Per-context statistics of H_Z for one fixed task w (n, 6)."""
    d = w.size
    h, q = fb.features[:, :d], fb.features[:, d]
    along = h @ w / d
    perp = np.einsum("nd,nd->n", h, h) / d - along**2  # ||P h||^2 / d when ||w||^2 = d
    pred = np.einsum("nd,de,ne->n", fb.queries, gamma, fb.features)
    return np.column_stack([along, perp, q, pred, fb.targets, fb.queries @ w])


# ----------------------------------------------------------------------------------------
# tokens, tasks, labels
# ----------------------------------------------------------------------------------------


def test_tokens_have_covariance_identity_over_d():
    d, n = 4, 50_000
    x = sample_tokens(n, d, rng=0)
    assert x.shape == (n, d)
    assert_allclose(x.mean(axis=0), 0.0, atol=5 / np.sqrt(n * d))
    assert_allclose(np.cov(x.T), np.eye(d) / d, atol=5 * np.sqrt(2 / n) / d)


def test_tasks_lie_on_the_sphere_and_are_uniform():
    tasks = sample_tasks(1000, 7, rng=1)
    assert_allclose(np.sum(tasks**2, axis=1), 7.0, rtol=1e-12)
    # In d = 3 a coordinate of a uniform point on the unit sphere is uniform on [-1, 1].
    w = sample_tasks(20_000, 3, rng=2)
    assert stats.kstest(w[:, 0] / np.sqrt(3), stats.uniform(loc=-1, scale=2).cdf).pvalue > 1e-3
    assert_allclose(w.T @ w / len(w), np.eye(3), atol=0.04)


@given(k=st.integers(1, 20), d=st.integers(1, 30), seed=st.integers(0, 2**31))
@settings(max_examples=30, deadline=None)
def test_task_norms_property(k, d, seed):
    w = sample_tasks(k, d, rng=seed)
    assert w.shape == (k, d)
    assert_allclose(np.linalg.norm(w, axis=1), np.sqrt(d), rtol=1e-12)


def test_task_set_size_and_infinite_kappa():
    assert sample_task_set(20, 0.5, rng=0).shape == (10, 20)
    assert sample_task_set(20, 0.51, rng=0).shape == (10, 20)
    assert sample_task_set(20, np.inf, rng=0) is None
    with pytest.raises(ValueError, match="kappa"):
        sample_task_set(20, 0.01, rng=0)
    with pytest.raises(ValueError, match="kappa"):
        sample_task_set(20, 0.0, rng=0)
    with pytest.raises(ValueError, match="kappa"):
        sample_task_set(20, -1.0, rng=0)


def test_preactivation_is_standard_normal():
    ctx = sample_contexts(4000, 9, 5, None, rng=3)
    z = np.einsum("nld,nd->nl", ctx.X, ctx.w).ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert_allclose(np.sum(ctx.w**2, axis=1), 9.0, rtol=1e-12)
    # the query's pre-activation too
    assert stats.kstest(np.einsum("nd,nd->n", ctx.x_query, ctx.w), "norm").pvalue > 1e-3


def test_labels_linear_noise_free_and_noise_variance():
    z = np.linspace(-2, 2, 11)
    assert_allclose(sample_labels(z, None, 0.0, rng=0), z)
    z = np.zeros(40_000)
    y = sample_labels(z, None, 0.3, rng=0)
    assert_mean(y**2, 0.3)
    assert_allclose(sample_labels(np.array([-1.0, 2.0]), "relu", 0.0), [0.0, 2.0])


def test_labels_do_not_alias_the_input():
    z = np.ones(5)
    y = sample_labels(z, None, 0.5, rng=0)
    assert_allclose(z, 1.0)
    assert not np.shares_memory(y, z)


def test_contexts_shapes_and_task_choice():
    tasks = sample_tasks(3, 6, rng=0)
    ctx = sample_contexts(50, 6, 4, tasks, "relu", 0.1, rng=1)
    assert isinstance(ctx, Contexts)
    assert ctx.X.shape == (50, 4, 6) and ctx.y.shape == (50, 4)
    assert ctx.x_query.shape == (50, 6) and ctx.y_query.shape == (50,) and ctx.w.shape == (50, 6)
    # every context uses one of the given tasks, and all of them get used
    match = np.all(np.isclose(ctx.w[:, None, :], tasks[None]), axis=2)
    assert np.all(match.sum(axis=1) == 1)
    assert np.all(match.any(axis=0))
    # noise-free labels are exactly f(x^T w)
    ctx = sample_contexts(5, 6, 4, tasks, "relu", 0.0, rng=1)
    assert_allclose(ctx.y, np.maximum(np.einsum("nld,nd->nl", ctx.X, ctx.w), 0))


# ----------------------------------------------------------------------------------------
# features
# ----------------------------------------------------------------------------------------


def test_context_features_formula():
    rng = np.random.default_rng(0)
    n, ell, d = 3, 5, 4
    X, y = rng.normal(size=(n, ell, d)), rng.normal(size=(n, ell))
    f = context_features(X, y)
    assert f.shape == (n, d + 1)
    for mu in range(n):
        h = sum(y[mu, i] * X[mu, i] for i in range(ell)) * d / ell
        assert_allclose(f[mu, :d], h)
        assert_allclose(f[mu, d], np.mean(y[mu] ** 2))


def test_feature_matrix_is_the_outer_product():
    rng = np.random.default_rng(1)
    q, f = rng.normal(size=(4, 3)), rng.normal(size=(4, 4))
    H = feature_matrix(q, f)
    assert H.shape == (4, 3, 4)
    assert_allclose(H[2], np.outer(q[2], f[2]))
    gamma = rng.normal(size=(3, 4))
    assert_allclose(np.einsum("de,nde->n", gamma, H), np.einsum("nd,de,ne->n", q, gamma, f))


@pytest.mark.parametrize("method", ["sufficient", "direct"])
@pytest.mark.parametrize("rho", [0.0, 0.5])
def test_first_two_moments_of_h_linear_teacher(method, rho):
    """E[h | w] = w and E[h h^T | w] = ((1 + rho)/alpha) I + (1 + 1/ell) w w^T (book section 2.1)."""
    d, ell, n = 5, 10, 40_000
    w = sample_tasks(1, d, rng=10)
    fb = sample_features(n, d, ell, w, None, rho, rng=11, method=method)
    h = fb.features[:, :d]
    se = h.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(h.mean(axis=0) - w[0]) < 5 * se)
    second = h[:, :, None] * h[:, None, :]
    expected = (1 + rho) * d / ell * np.eye(d) + (1 + 1 / ell) * np.outer(w[0], w[0])
    se2 = second.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(second.mean(axis=0) - expected) < 5 * se2)
    assert_mean(fb.features[:, d], 1 + rho)


@pytest.mark.parametrize("teacher,a1,ef2", TEACHERS)
def test_samplers_agree_for_one_task(teacher, a1, ef2):
    """Sufficient vs direct sampler, one fixed task: means and covariances of H_Z statistics."""
    d, ell, n, rho = 6, 12, 30_000, 0.2
    w = sample_tasks(1, d, rng=20)
    gamma = np.random.default_rng(21).normal(size=(d, d + 1)) / np.sqrt(d)
    fs = sample_features(n, d, ell, w, teacher, rho, rng=22, method="sufficient")
    fd = sample_features(n, d, ell, w, teacher, rho, rng=23, method="direct")
    ss, sd = context_statistics(fs, w[0], gamma), context_statistics(fd, w[0], gamma)
    assert_same_moments(ss, sd)
    # and both against the theory: E[h.w/d] = a_1, E q = E f^2 + rho,
    # E ||P h||^2 / d = (E f^2 + rho)(d - 1)/ell, z_query ~ N(0, 1)
    for s in (ss, sd):
        assert_mean(s[:, 0], a1)
        assert_mean(s[:, 2], ef2 + rho)
        assert_mean(s[:, 1], (ef2 + rho) * (d - 1) / ell)
        assert_mean(s[:, 5] ** 2, 1.0)
    for fb in (fs, fd):  # query tokens ~ N(0, I/d), drawn in full
        assert_allclose(d * np.cov(fb.queries.T), np.eye(d), atol=5 * np.sqrt(2 / n))


@pytest.mark.parametrize("teacher", ["relu", "h2"])
def test_samplers_agree_for_fresh_tasks_and_task_sets(teacher):
    """Rotation-invariant statistics for fresh tasks, and general-norm task sets."""
    d, ell, n, rho = 5, 8, 30_000, 0.1
    gamma = np.random.default_rng(30).normal(size=(d, d + 1)) / np.sqrt(d)

    def invariants(fb):
        h, q = fb.features[:, :d], fb.features[:, d]
        return np.column_stack(
            [
                np.sum(h**2, axis=1),
                q,
                np.einsum("nd,nd->n", fb.queries, h),
                np.einsum("nd,de,ne->n", fb.queries, gamma, fb.features),
                fb.targets,
            ]
        )

    fs = sample_features(n, d, ell, None, teacher, rho, rng=31)
    fd = sample_features(n, d, ell, None, teacher, rho, rng=32, method="direct")
    assert_same_moments(invariants(fs), invariants(fd))
    # task sets whose norms are not sqrt(d): the sufficient sampler is exact for any norm
    tasks = sample_tasks(3, d, rng=33) * np.array([[0.5], [1.0], [1.7]])
    fs = sample_features(n, d, ell, tasks, teacher, rho, rng=34)
    fd = sample_features(n, d, ell, tasks, teacher, rho, rng=35, method="direct")
    assert_same_moments(invariants(fs), invariants(fd))
    assert_same_moments(fs.features @ np.vstack([tasks.T, np.ones(3)]), fd.features @ np.vstack([tasks.T, np.ones(3)]))


@pytest.mark.slow
@pytest.mark.parametrize("teacher,a1,ef2", TEACHERS)
def test_samplers_agree_larger_d(teacher, a1, ef2):
    d, ell, n, rho = 30, 60, 60_000, 0.1
    w = sample_tasks(1, d, rng=40)
    gamma = np.random.default_rng(41).normal(size=(d, d + 1)) / np.sqrt(d)
    fs = sample_features(n, d, ell, w, teacher, rho, rng=42)
    fd = sample_features(n, d, ell, w, teacher, rho, rng=43, method="direct")
    assert_same_moments(context_statistics(fs, w[0], gamma), context_statistics(fd, w[0], gamma))


def test_reproducible_with_a_seed_and_batching_keeps_shapes():
    a = sample_features(100, 5, 7, None, "relu", 0.1, rng=5)
    b = sample_features(100, 5, 7, None, "relu", 0.1, rng=5)
    c = sample_features(100, 5, 7, None, "relu", 0.1, rng=6)
    for u, v in zip(a, b):
        assert_allclose(u, v)
    assert not np.allclose(a.features, c.features)
    # a generator is consumed (two calls with one generator differ)
    g = np.random.default_rng(5)
    assert not np.allclose(sample_tokens(3, 2, g), sample_tokens(3, 2, g))
    for method in ("sufficient", "direct"):
        fb = sample_features(103, 5, 7, None, None, 0.1, rng=5, method=method, batch_size=10)
        assert fb.queries.shape == (103, 5) and fb.features.shape == (103, 6) and fb.targets.shape == (103,)
        assert np.all(np.isfinite(fb.features))
        r = sample_features(103, 5, 7, None, None, 0.1, rng=5, method=method, batch_size=10)
        assert_allclose(fb.features, r.features)


@pytest.mark.slow
def test_memory_stays_linear_in_n():
    n, d, ell = 100_000, 20, 400
    tracemalloc.start()
    fb = sample_features(n, d, ell, None, "relu", 0.1, rng=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    outputs = fb.queries.nbytes + fb.features.nbytes + fb.targets.nbytes
    # the unbatched z and y alone would take 2 * 8 * n * ell = 640 MB
    assert peak < outputs + 260e6, peak


# ----------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        (dict(n=0), ValueError, "n"),
        (dict(n=2.0), TypeError, "n"),
        (dict(d=0), ValueError, "d"),
        (dict(ell=True), TypeError, "ell"),
        (dict(ell=0), ValueError, "ell"),
        (dict(rho=-0.1), ValueError, "rho"),
        (dict(rho=np.nan), ValueError, "rho"),
        (dict(tasks=np.ones(4)), ValueError, "tasks"),
        (dict(tasks=np.ones((2, 3))), ValueError, "tasks"),
        (dict(tasks=np.full((2, 4), np.nan)), ValueError, "tasks"),
        (dict(tasks=np.zeros((2, 4))), ValueError, "tasks"),
        (dict(method="exact"), ValueError, "method"),
        (dict(batch_size=0), ValueError, "batch_size"),
        (dict(teacher=lambda z: 1.0), ValueError, "teacher"),
        (dict(teacher=lambda z: np.full_like(z, np.inf)), ValueError, "teacher"),
        (dict(teacher=lambda z: z[..., :1]), ValueError, "teacher"),
        (dict(teacher=3.0), TypeError, "teacher"),
        (dict(rng="seed"), TypeError, "rng"),
    ],
)
def test_bad_input_is_named(kwargs, exc, word):
    args = dict(n=10, d=4, ell=3, tasks=None, teacher=None, rho=0.1, rng=0)
    args.update(kwargs)
    with pytest.raises(exc, match=word):
        sample_features(**args)


def test_bad_input_other_functions():
    with pytest.raises(ValueError, match="X"):
        context_features(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="y"):
        context_features(np.ones((2, 3, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="features"):
        feature_matrix(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="GB"):
        feature_matrix(np.ones((10, 4000)), np.ones((10, 4001)))
    with pytest.raises(ValueError, match="k"):
        sample_tasks(0, 3)
    with pytest.raises(TypeError, match="d"):
        sample_tokens(3, 2.5)
    with pytest.raises(ValueError, match="rho"):
        sample_labels(np.zeros(3), None, -1.0)
    with pytest.raises(ValueError, match="tasks"):
        sample_contexts(3, 4, 2, np.ones((2, 5)))


def test_task_set_rounds_half_integer_kappa_d_as_simulate_reports(monkeypatch):
    # Every kappa d in the book is an integer, so truncation (int) and rounding agree
    # there; at kappa d = 7.5 they do not: k must be round(7.5) = 8, the k simulate reports.
    import lib.samplers
    import lib.simulation
    from lib.simulation import simulate

    assert sample_task_set(15, 0.5, rng=0).shape == (8, 15)
    drawn = []
    real = lib.samplers.sample_task_set

    def spy(d, kappa, rng=None):
        tasks = real(d, kappa, rng)
        drawn.append(tasks)
        return tasks

    monkeypatch.setattr(lib.simulation, "sample_task_set", spy)
    out = simulate(15, 1.0, 0.5, 1.0, 0.1, rng=0)
    assert out["k"] == round(0.5 * 15) == 8
    assert len(drawn) == 1 and drawn[0].shape == (out["k"], 15)
