"""Tests for lib.bayes: the sampler against quadrature on the circle (d = 2), the
linear teacher against the Bayes ridge, the bracket rho < e_Bayes < e_cf, the stored
values of scripts/make_bayes.py, and input validation."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

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


# ------------------------------------------------------------------ the audit of issue 33
@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"d": 10**6}, "n_contexts, n_chains"),  # numpy's "array is too big" / MemoryError before
        ({"n_contexts": 10**12}, "n_contexts"),
        ({"n_chains": 10**12}, "n_contexts"),
        ({"n_query": 10**9}, "n_contexts"),
        ({"n_temps": 10**12}, "n_contexts"),
        ({"alpha": 1e12}, "n_contexts"),
    ],
)
def test_huge_sizes_are_refused_before_any_allocation(kwargs, argument):
    from lib._checks import MemoryLimitError

    args = {"teacher": "h2", "d": 4, "alpha": 2.0, "rho": RHO, "n_contexts": 4, "rng": 0, "n_burn": 2, "n_keep": 4}
    args |= kwargs
    with pytest.raises(MemoryLimitError, match=rf"^bayes_error\(d=.*would need about .*driven by {argument}"):
        bayes.bayes_error(args.pop("teacher"), args.pop("d"), args.pop("alpha"), args.pop("rho"), **args)


def test_a_long_burn_in_does_not_overflow_the_step_size():
    # a hot replica accepts nearly every move, so its adapted step grew without bound: after
    # about 6000 burn-in steps its square overflowed and the sampler stopped with
    # "f must return finite values ...; got f(nan) = nan". The log step is now bounded
    est = bayes.bayes_error("h2", 4, 2.0, RHO, n_contexts=2, rng=0, n_burn=30_000, n_keep=4, n_temps=2, n_query=2)
    assert np.isfinite(est.error) and RHO < est.error


def test_the_bound_on_the_step_leaves_the_books_runs_unchanged():
    # the book's runs burn in for 2000 steps: a log step moves by less than 200 < MAX_LOG_STEP,
    # so the stored values stay reproducible (this value is the sampler's before the bound)
    est = bayes.bayes_error("linear", 8, 2.0, RHO, n_contexts=4, rng=1, n_burn=2000, n_keep=100, n_temps=8)
    # to the last bits: numpy's floor version (requirements-min.txt) rounds one sum differently
    assert est.error == pytest.approx(0.21454462432398155, rel=1e-12, abs=0)
    assert 0.75 * 20 * (math.sqrt(1 + 2000 / 10) - 1) < bayes.MAX_LOG_STEP


def test_a_teacher_too_large_for_float64_is_refused():
    # coefficients 1e150: E f^2 is finite, but the squared residuals overflow; the estimate
    # came back as 1.6e299 with se = inf
    with pytest.raises(ValueError, match=r"^teacher: its values are too large for float64"):
        bayes.bayes_error([0.0, 1e150], 4, 2.0, RHO, n_contexts=2, rng=0, n_burn=2, n_keep=4)


def _worker_args(**kw):
    rng = np.random.default_rng(0)
    args = {
        "X": rng.standard_normal((2, 3, 4)),
        "y": np.zeros((2, 3)),
        "x_query": np.zeros((2, 2, 4)),
        "f": LINKS["linear"].f,
        "rho": RHO,
        "rng": np.random.default_rng(1),
        "n_chains": 2,
        "n_burn": 2,
        "n_keep": 4,
        "betas": np.array([0.1, 1.0]),
    }
    return args | kw


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [  # before: a silent result (rho <= 0, NaN labels, bad betas, one chain), NaN R-hat
        # (n_keep < 4), ZeroDivisionError, or AttributeError / broadcasting errors from numpy
        ({"rho": 0.0}, ValueError, r"^rho must be > 0"),
        ({"rho": -1.0}, ValueError, r"^rho must be > 0"),
        ({"rho": math.nan}, ValueError, r"^rho must not be NaN"),
        ({"y": np.full((2, 3), np.nan)}, ValueError, r"^y must be finite"),
        ({"y": np.zeros((2, 4))}, ValueError, r"^y must have shape \(n, ell\) = \(2, 3\)"),
        ({"x_query": np.zeros((2, 2, 5))}, ValueError, r"^x_query must have shape \(n, Q, d\) = \(2, Q >= 1, 4\)"),
        ({"x_query": np.zeros((2, 0, 4))}, ValueError, r"^x_query must have shape"),
        ({"X": np.zeros((3, 4))}, ValueError, r"^X must have 3 dimensions"),
        ({"X": "abc"}, TypeError, r"^X must be an array of real numbers"),
        ({"X": np.zeros((0, 3, 4)), "y": np.zeros((0, 3)), "x_query": np.zeros((0, 2, 4))}, ValueError, r"^X must"),
        ({"rng": 0}, TypeError, r"^rng must be a numpy.random.Generator; got 0"),
        ({"f": "relu"}, TypeError, r"f"),
        ({"n_chains": 1}, ValueError, r"^n_chains must be an integer >= 2"),
        ({"n_keep": 3}, ValueError, r"^n_keep must be an integer >= 4"),
        ({"n_keep": 0}, ValueError, r"^n_keep must be an integer >= 4"),
        ({"n_burn": -1}, ValueError, r"^n_burn must be an integer >= 0"),
        ({"n_burn": 2.5}, TypeError, r"^n_burn must be an integer"),
        ({"betas": np.array([0.1, 0.5])}, ValueError, r"^betas must increase strictly in \(0, 1\] and end at 1"),
        ({"betas": np.array([1.0, 0.1])}, ValueError, r"^betas must increase"),
        ({"betas": np.array([-1.0, 1.0])}, ValueError, r"^betas must increase"),
        ({"betas": np.array([])}, ValueError, r"^betas must increase"),
        ({"betas": [[1.0]]}, ValueError, r"^betas must have 1 dimensions"),
    ],
)
def test_posterior_variances_checks_its_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        bayes.posterior_variances(**_worker_args(**kwargs))


def test_posterior_variances_takes_lists():
    args = _worker_args()
    var, rhat, acc = bayes.posterior_variances(**(args | {"X": args["X"].tolist(), "betas": [0.1, 1.0]}))
    assert var.shape == rhat.shape == (2, 2) and 0 <= acc <= 1


def _stored_copy(tmp_path, edit_row=None, edit_meta=None, sidecar=True):
    """A copy of the stored file (and its sidecar) with one edit, in tmp_path."""
    src = ROOT / "lib" / "data" / "bayes_error.csv"
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    if edit_row is not None:
        fields = lines[1].rstrip("\n").split(",")
        for column, text in edit_row.items():
            fields[bayes.BAYES_COLUMNS.index(column)] = text
        lines[1] = ",".join(fields) + "\n"
    path = tmp_path / "bayes_error.csv"
    path.write_text("".join(lines), encoding="utf-8")
    if sidecar:
        meta = src.with_suffix(".json").read_text(encoding="utf-8")
        for old, new in (edit_meta or {}).items():
            assert old in meta
            meta = meta.replace(old, new)
        path.with_suffix(".json").write_text(meta, encoding="utf-8")
    return path


#: Edits of one row of the stored copy, each loaded silently before, and the error each raises.
BAD_ROWS = [
    ({"teacher": "quartic"}, r":2: teacher: 'quartic' is not one of \['abs'"),
    ({"teacher": "H2"}, r":2: teacher: 'H2' is not one of"),
    ({"d": "1"}, r":2: d: 1 is not allowed; it must be >= 2"),
    ({"n_contexts": "1"}, r":2: n_contexts: 1 is not allowed; it must be >= 2"),
    ({"n_keep": "0"}, r":2: n_keep: 0 is not allowed; it must be >= 4"),
    ({"alpha": "0"}, r":2: alpha: 0.0 is not allowed; it must be > 0"),
    ({"rho": "0"}, r":2: rho: 0.0 is not allowed; it must be > 0"),
    ({"beta_min": "2"}, r":2: beta_min: 2.0 is not allowed; it must be <= 1"),
    ({"acceptance": "1.5"}, r":2: acceptance: 1.5 is not allowed; it must be <= 1"),
    ({"ell": "17"}, r":2: ell: 17 is not round\(alpha \* d\) = 16"),
    ({"error": "0.05"}, r":2: error: 0.05 is below rho = 0.1"),
    ({"seed": "1"}, r"bayes_error.csv:2: seed: 1 at the point h2:8:2.0, but bayes_error.json records 20269226"),
    ({"n_temps": "1"}, r"bayes_error.csv:2: n_temps: 1 at the point h2:8:2.0, but bayes_error.json records 8"),
    (
        {"alpha": "2.0000000001"},
        r"bayes_error.csv:2: teacher, d, alpha: the point h2:8:2.0000000001 is not one bayes_error.json records",
    ),
]
#: Edits of the sidecar (old text: new text) that disagree with the rows or corrupt it.
BAD_SIDECARS = [
    (
        {'"seed": 20269226': '"seed": 20269227'},
        r"bayes_error.csv:2: seed: 20269226 at .*, but bayes_error.json records 20269227",
    ),
    ({'"n_keep": 6000': '"n_keep": 600'}, r"bayes_error.csv:2: n_keep: 6000 at .*, but bayes_error.json records 600"),
    ({'"rho": 0.1': '"rho": 0.2'}, r"bayes_error.csv:2: rho: 0.1 at .*, but bayes_error.json records 0.2"),
    ({'"points": [': '"points": [3, '}, r"bayes_error.json:1: settings/points: .* the sidecar is corrupt"),
    ({"{": "{,"}, r"bayes_error.json:1: \(json\): the sidecar of bayes_error.csv is not valid JSON"),
]


@pytest.mark.parametrize(
    "edit, match",
    [({"edit_row": e}, m) for e, m in BAD_ROWS] + [({"edit_meta": e}, m) for e, m in BAD_SIDECARS],
)
def test_load_bayes_refuses_a_row_off_its_record_or_a_sidecar_that_disagrees(tmp_path, edit, match):
    with pytest.raises(ValueError, match=match):
        bayes.load_bayes(_stored_copy(tmp_path, **edit))


def test_load_bayes_names_the_line_of_a_row_its_sidecar_disagrees_with(tmp_path):
    # before, a disagreement with the sidecar named "row <k>" of the parsed rows, not the
    # file's line: a blank line before it put the reader on the wrong line
    path = _stored_copy(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = lines[3].split(",")
    fields[bayes.BAYES_COLUMNS.index("seed")] = "7"
    path.write_text("".join(lines[:2] + ["\n", lines[2], ",".join(fields)] + lines[4:]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"bayes_error.csv:5: seed: 7 at the point "):
        bayes.load_bayes(path)


def test_load_bayes_reads_a_good_copy_and_a_file_without_a_record(tmp_path):
    assert bayes.load_bayes(_stored_copy(tmp_path)) == bayes.load_bayes()
    (tmp_path / "bare").mkdir()
    bare = bayes.load_bayes(_stored_copy(tmp_path / "bare", sidecar=False))  # a user's own file
    assert bare == bayes.load_bayes()


def test_split_rhat_of_chains_that_never_move():
    # two chains, each constant over its halves: within-chain variance 0. They disagree: R-hat
    # is infinite (it was sqrt(pooled / tiny), about 1e153); they agree: 1
    m = 3
    s1 = np.zeros((2, 1, 2, 1))
    s1[:, 0, 0, 0], s1[:, 0, 1, 0] = m * 1.0, m * 2.0  # chain values 1 and 2
    s2 = s1**2 / m
    assert bayes._split_rhat(s1, s2, m)[0, 0] == np.inf
    same = np.full((2, 1, 2, 1), m * 1.0)
    assert bayes._split_rhat(same, same**2 / m, m)[0, 0] == 1.0


def test_gap_share_matches_monte_carlo_propagation():
    # a gain with a 95 % half-width, a gap with a standard error: the share's interval
    # against the 2.5 and 97.5 % quantiles of the ratio of the two simulated
    gain, half, gap, gap_se = 0.3, 0.05, 0.6, 0.02
    out = bayes.gap_share(gain, gap, half, gap_se)
    assert_allclose(out["share"], 0.5)
    z = stats.norm.ppf(0.975)
    assert_allclose(out["half_gain"], half / gap)
    assert_allclose(out["half_gap"], z * 0.5 * gap_se / gap)
    assert_allclose(out["half"], np.hypot(out["half_gain"], out["half_gap"]))
    rng = np.random.default_rng(3)
    g = gain + half / z * rng.standard_normal(400_000)
    d = gap + gap_se * rng.standard_normal(400_000)
    lo, hi = np.quantile(g / d, [0.025, 0.975])
    assert_allclose((hi - lo) / 2, out["half"], rtol=0.02)
    # no uncertainty in the gap: the gain's interval scaled; arrays broadcast
    per_seed = bayes.gap_share([0.1, 0.2, -0.05], 0.5, 0.0, 0.01, level=0.9)
    assert per_seed["share"].shape == (3,)
    assert_allclose(per_seed["half"], stats.norm.ppf(0.95) * np.abs([0.2, 0.4, -0.1]) * 0.01 / 0.5)
    assert_allclose(bayes.gap_share(0.2, 0.5, 0.04)["half"], 0.08)


def test_gap_share_bad_input():
    with pytest.raises(ValueError, match="gap"):
        bayes.gap_share(0.1, 0.0)
    with pytest.raises(ValueError, match="gain_half"):
        bayes.gap_share(0.1, 0.5, -0.01)
    with pytest.raises(ValueError, match="gap_se"):
        bayes.gap_share(0.1, 0.5, 0.0, -1.0)
    with pytest.raises(ValueError, match="level"):
        bayes.gap_share(0.1, 0.5, level=1.0)
    with pytest.raises(ValueError, match="broadcast"):
        bayes.gap_share([0.1, 0.2], [0.5, 0.5, 0.5])
    with pytest.raises(TypeError, match="gain"):
        bayes.gap_share("a lot", 0.5)


@pytest.mark.parametrize(
    "args",
    [  # before, each returned inf silently: a share or half-width beyond float64
        (1e308, 0.5),  # the share overflows
        (0.3, 1e-320),  # a subnormal gap: the share overflows
        (0.3, 0.5, 1e308, 0.0),  # h_G / D overflows
        (1e300, 1e-300, 0.0, 1e300),  # z s sigma_D / D overflows
        ([0.1, 1e308], [0.5, 1e-10], 0.0, 0.0),  # one entry of an array
    ],
)
def test_gap_share_refuses_a_share_beyond_float64(args):
    with pytest.raises(ValueError, match=r"gap_share: .* beyond float64 .* gain = "):
        bayes.gap_share(*args)
