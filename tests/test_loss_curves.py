"""Tests of lib.loss_curves: the stored loss curves and the late loss drop (numpy only)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from lib import loss_curves
from lib.loss_curves import late_loss_drop, loss_curve


def _row(curve, every=5) -> dict:
    return {"loss_every": float(every), "loss_curve": json.dumps([float(v) for v in curve])}


def test_loss_curve():
    steps, loss = loss_curve({"loss_every": 5.0, "loss_curve": "[1.0, 0.5, 0.25]"})
    assert list(steps) == [5, 10, 15] and list(loss) == [1.0, 0.5, 0.25]
    with pytest.raises(ValueError, match="loss_curve"):
        loss_curve({"icl": 1.0})


def test_late_loss_drop_by_hand():
    # m = 10 points 10, 9, ..., 1: the fourth fifth is points 6, 7 (values 4, 3), the last
    # fifth points 8, 9 (values 2, 1): Q4 = 3.5, Q5 = 1.5, drop = 2 / 3.5 = 4/7
    down = np.arange(10.0, 0.0, -1.0)
    assert late_loss_drop([down]) == pytest.approx(4 / 7, rel=1e-15)
    # m = 7: floor(21/5) = 4, floor(28/5) = 5: Q4 = point 4 alone, Q5 = points 5, 6
    seven = [9.0, 8.0, 7.0, 6.0, 5.0, 3.0, 1.0]
    assert late_loss_drop([seven]) == pytest.approx(float(Fraction(5 - 2, 5)), rel=1e-15)
    # a flat curve does not drop; a rising one drops by a negative amount
    assert late_loss_drop([np.ones(20)]) == 0.0
    assert late_loss_drop([np.arange(1.0, 11.0)]) == pytest.approx((7.5 - 9.5) / 7.5, rel=1e-15)


def test_late_loss_drop_averages_the_seeds_on_the_shortest_length():
    a = np.arange(10.0, 0.0, -1.0)
    b = np.concatenate([2 * a, [100.0, 100.0]])  # longer: its last two points are cut
    mean = (a + b[:10]) / 2  # 15, 13.5, ..., 1.5
    q4, q5 = mean[6:8].mean(), mean[8:].mean()
    assert late_loss_drop([a, b]) == pytest.approx((q4 - q5) / q4, rel=1e-15)
    assert late_loss_drop([b, a]) == late_loss_drop([a, b])
    # the mean of the curves, not the mean of the per-seed drops (these differ here)
    c = np.array([1.0, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5])
    # mean curve ends 2.5, 2 | 1.25, 0.75: Q4 = 2.25, Q5 = 1, drop 5/9 (per seed: 4/7 and 1/2)
    assert late_loss_drop([a, c]) == pytest.approx(5 / 9, rel=1e-15)
    assert late_loss_drop([a, c]) != pytest.approx((late_loss_drop([a]) + late_loss_drop([c])) / 2)


def test_late_loss_drop_reads_stored_rows_like_arrays():
    a, b = np.linspace(2.0, 1.0, 12), np.linspace(3.0, 1.2, 15)
    assert late_loss_drop([_row(a), _row(b, every=2)]) == late_loss_drop([a, b])
    assert late_loss_drop((_row(a), b)) == late_loss_drop([a, b])
    assert isinstance(late_loss_drop([a]), float)


@pytest.mark.parametrize(
    "runs, exc, message",
    [
        ([], ValueError, r"^runs must hold at least one run"),
        (_row([1.0] * 5), TypeError, r"^runs must be a sequence of rows or of 1-D loss arrays; got dict"),
        ("relu", TypeError, r"^runs must be a sequence"),
        (3.0, TypeError, r"^runs must be a sequence"),
        ([[1.0, 0.9, 0.8, 0.7]], ValueError, r"at least 5 points .*the shortest has 4"),
        ([np.ones(10), np.ones(4)], ValueError, r"the shortest has 4"),
        ([[1.0, np.nan, 1.0, 1.0, 1.0]], ValueError, r"^runs\[0\] \(its loss curve\) must be finite"),
        ([np.ones(10), np.ones((2, 5))], ValueError, r"^runs\[1\] \(its loss curve\) must have 1 dimensions"),
        ([["a", "b", "c", "d", "e"]], TypeError, r"^runs\[0\] \(its loss curve\) must be an array of real"),
        ([np.zeros(10)], ValueError, r"fourth fifth must be positive; got 0.0"),
        ([{"icl": 1.0}], ValueError, r"loss_every and loss_curve"),
    ],
)
def test_late_loss_drop_refuses_bad_input(runs, exc, message):
    with pytest.raises(exc, match=message):
        late_loss_drop(runs)


def test_the_loss_curve_has_one_address():
    from lib import training_runs

    assert training_runs.load_control_runs  # the sweep reader stays
    with pytest.raises(AttributeError, match=r"lib.training_runs.loss_curve has moved to lib.loss_curves.loss_curve"):
        training_runs.loss_curve  # noqa: B018
    assert loss_curves.MIN_POINTS == 5
