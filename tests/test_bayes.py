"""Tests for lib.bayes: the sampler against quadrature on the circle (d = 2), the
linear teacher against the Bayes ridge, the bracket rho < e_Bayes < e_cf, the stored
values of scripts/make_bayes.py, and input validation."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from lib import bayes
from lib.hermite import LINKS
from lib.theory import context_free_error

RHO = 0.1
ROOT = Path(__file__).resolve().parent.parent


def _circle_variances(X, y, x_query, f, rho, n_grid=20_000):
    """The posterior variance of f(x_q . w) at d = 2 by quadrature over the angle of w."""
    theta = np.linspace(0.0, 2 * np.pi, n_grid, endpoint=False)
    W = math.sqrt(2.0) * np.stack([np.cos(theta), np.sin(theta)], axis=1)  # (G, 2)
    out = np.empty(x_query.shape[:2])
    for i in range(X.shape[0]):
        sse = ((y[i][:, None] - f(X[i] @ W.T)) ** 2).sum(axis=0)
        logp = -sse / (2 * rho)
        p = np.exp(logp - logp.max())
        p /= p.sum()
        F = f(x_query[i] @ W.T)  # (Q, G)
        m = F @ p
        out[i] = (F**2) @ p - m**2
    return out


@pytest.mark.parametrize("teacher", ["h2", "linear", "relu"])
def test_posterior_variances_match_quadrature_on_the_circle(teacher):
    # at d = 2 the sphere is a circle and the posterior a density of one angle: the
    # sampler's variances must match quadrature, context by context (short contexts
    # make the h2 posterior multimodal beyond w <-> -w)
    f = LINKS[teacher].f
    rng = np.random.default_rng(5)
    n, ell, Q = 12, 6, 8
    X = rng.standard_normal((n, ell, 2)) / math.sqrt(2)
    w = rng.standard_normal((n, 2))
    w *= math.sqrt(2) / np.linalg.norm(w, axis=1, keepdims=True)
    y = f(np.einsum("nld,nd->nl", X, w)) + math.sqrt(RHO) * rng.standard_normal((n, ell))
    xq = rng.standard_normal((n, Q, 2)) / math.sqrt(2)
    betas = 1e-3 ** (np.arange(5, -1, -1) / 5)
    var, rhat, acc = bayes.posterior_variances(
        X, y, xq, f, RHO, np.random.default_rng(6), n_chains=4, n_burn=1000, n_keep=6000, betas=betas
    )
    exact = _circle_variances(X, y, xq, f, RHO)
    # the per-context means: Monte Carlo error of a few per cent of the mean variance
    scale = exact.mean()
    np.testing.assert_allclose(var.mean(axis=1), exact.mean(axis=1), atol=0.08 * scale)
    assert abs(var.mean() - exact.mean()) < 0.03 * scale
    assert rhat.max() < 1.1
    assert 0.1 < acc < 0.5


def test_linear_teacher_below_and_near_the_bayes_ridge():
    # the linear teacher: the Bayes ridge x_q^T (X^T X + rho I)^{-1} X^T y is the posterior
    # mean under the Gaussian prior N(0, I); its error depends on w only through
    # E[w w^T] = I, so under the sphere prior it is rho + E tr((I + X^T X / rho)^{-1}) / d.
    # The sphere's Bayes error is below it (the ridge is one predictor among all) and, at
    # d = 8, alpha = 2, within 15 % of it (the sphere fixes |w|, which the Gaussian prior
    # leaves free)
    d, alpha, n = 8, 2.0, 100
    est = bayes.bayes_error("linear", d, alpha, RHO, n_contexts=n, rng=3, n_burn=500, n_keep=2000, n_temps=4)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((4000, round(alpha * d), d)) / math.sqrt(d)
    G = np.einsum("nli,nlj->nij", X, X) / RHO + np.eye(d)
    ridge = RHO + np.trace(np.linalg.inv(G), axis1=1, axis2=2).mean() / d
    assert est.error < ridge + 3 * est.se
    assert est.error > 0.85 * ridge
    assert est.rhat_q99 < 1.15


@pytest.mark.parametrize("teacher, alpha", [("h2", 4.0), ("relu", 2.0)])
def test_between_rho_and_the_context_free_error(teacher, alpha):
    est = bayes.bayes_error(teacher, 8, alpha, RHO, n_contexts=40, rng=7, n_burn=400, n_keep=400, n_temps=6)
    assert RHO < est.error - 3 * est.se
    assert est.error + 3 * est.se < context_free_error(teacher, 8, RHO)
    assert est.per_context.shape == (40,)
    assert np.all(est.per_context >= RHO)
    assert est.se == pytest.approx(est.per_context.std(ddof=1) / math.sqrt(40))


def test_reproducible_from_the_seed():
    a, b = (bayes.bayes_error("h2", 4, 2.0, RHO, n_contexts=4, rng=1, n_burn=20, n_keep=20) for _ in range(2))
    assert a.error == b.error
    c = bayes.bayes_error("h2", 4, 2.0, RHO, n_contexts=4, rng=np.random.default_rng(2), n_burn=20, n_keep=20)
    assert c.error != a.error


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"d": 1}, ValueError, "d"),
        ({"d": 8.5}, TypeError, "d"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": 0.01}, ValueError, "alpha"),
        ({"rho": 0.0}, ValueError, "rho"),
        ({"rho": "a"}, (TypeError, ValueError), "rho"),
        ({"n_contexts": 1}, ValueError, "n_contexts"),
        ({"n_chains": 1}, ValueError, "n_chains"),
        ({"n_keep": 3}, ValueError, "n_keep"),
        ({"n_temps": 0}, ValueError, "n_temps"),
        ({"beta_min": 2.0}, ValueError, "beta_min"),
        ({"rng": np.random.RandomState(0)}, TypeError, "rng"),
        ({"teacher": "nope"}, ValueError, "teacher"),
    ],
)
def test_bad_input(kwargs, exc, match):
    args = {"teacher": "h2", "d": 8, "alpha": 2.0, "rho": RHO, "n_contexts": 4, "rng": 0, "n_burn": 2, "n_keep": 4}
    args |= kwargs
    with pytest.raises(exc, match=match):
        bayes.bayes_error(args.pop("teacher"), args.pop("d"), args.pop("alpha"), args.pop("rho"), **args)


def _script():
    spec = importlib.util.spec_from_file_location("make_bayes", ROOT / "scripts" / "make_bayes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stored_values_are_the_scripts_points_and_converged():
    rows = bayes.load_bayes()
    mb = _script()
    assert set(rows) == {p[:3] for p in mb.POINTS}
    for (teacher, d, alpha, n_ctx), r in zip(mb.POINTS, (rows[p[:3]] for p in mb.POINTS)):
        assert r["seed"] == mb.seed_of(teacher, d, alpha)
        assert r["n_contexts"] == n_ctx and r["rho"] == mb.RHO
        assert all(r[k] == v for k, v in mb.SETTINGS.items())
        assert r["e_cf"] == pytest.approx(context_free_error(teacher, d, r["rho"]), rel=1e-12)
        assert r["rho"] < r["error"] - 3 * r["se"] and r["error"] + 3 * r["se"] < r["e_cf"]
        assert r["rhat_max"] < 1.2, (teacher, d, alpha)


def test_load_bayes_refuses_a_bad_path_type():
    with pytest.raises(TypeError, match="path"):
        bayes.load_bayes(3)
