"""Tests of the sweep helpers of lib.training_runs (numpy only, no JAX)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from lib import training_runs as tr

ROWS = [
    {"kind": "softmax", "teacher": "h2", "d": 8.0, "icl": 1.0},
    {"kind": "softmax", "teacher": "h2", "d": 8.0, "icl": 1.2},
    {"kind": "softmax", "teacher": "h2", "d": 8.0, "icl": 1.4},
    {"kind": "softmax", "teacher": "h2", "d": 16.0, "icl": 2.0},
    {"kind": "softmax", "teacher": "h2", "d": 16.0, "icl": 2.2},
    {"kind": "linear", "teacher": "h2", "d": 8.0, "icl": 0.5},
]


def test_select_runs():
    assert tr.select_runs(ROWS, kind="linear") == [ROWS[-1]]
    assert len(tr.select_runs(ROWS, kind="softmax", d=8)) == 3  # int matches the float
    assert tr.select_runs(ROWS) == ROWS
    with pytest.raises(ValueError, match="columns"):
        tr.select_runs(ROWS, width=32)
    with pytest.raises(TypeError, match="rows"):
        tr.select_runs("rows")


def test_sweep_arrays_t_interval():
    out = tr.sweep_arrays(ROWS, "d", kind="softmax")
    assert_allclose(out["d"], [8.0, 16.0])
    assert_allclose(out["mean"], [1.2, 2.1])
    se8 = np.std([1.0, 1.2, 1.4], ddof=1) / np.sqrt(3)
    assert_allclose(out["se"][0], se8)
    assert list(out["count"]) == [3, 2]
    assert_allclose(out["half"][0], stats.t.ppf(0.975, 2) * se8)
    assert_allclose(out["half"][1], stats.t.ppf(0.975, 1) * out["se"][1])
    with pytest.raises(ValueError, match="no rows"):
        tr.sweep_arrays(ROWS, "d", kind="gru")
    with pytest.raises(ValueError, match="level"):
        tr.sweep_arrays(ROWS, "d", level=1.0, kind="softmax")


def test_welch_interval_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 4), rng.normal(0.0, 2.0, 6)
    out = tr.welch_interval(a.mean(), a.std(ddof=1) / 2, 4, b.mean(), b.std(ddof=1) / np.sqrt(6), 6)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert_allclose(out["t"], ref.statistic)
    assert_allclose(out["p"], ref.pvalue)
    # an infinitely well-measured second mean: one-sample t with n_a - 1 dof
    one = tr.welch_interval(1.0, 0.1, 3, 0.5, 0.01, np.inf)
    assert_allclose(one["dof"], 2.0 * (1 + 0.01**2 / 0.1**2) ** 2, rtol=1e-12)
    assert_allclose(one["half"], stats.t.ppf(0.975, one["dof"]) * np.hypot(0.1, 0.01))


def test_welch_interval_bad_input():
    with pytest.raises(ValueError, match="se_a"):
        tr.welch_interval(1.0, -0.1, 3, 0.0, 0.1, 3)
    with pytest.raises(ValueError, match="n_b"):
        tr.welch_interval(1.0, 0.1, 3, 0.0, 0.1, 1)
    with pytest.raises(ValueError, match="both be 0"):
        tr.welch_interval(1.0, 0.0, 3, 0.0, 0.0, 3)
