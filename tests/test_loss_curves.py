"""Tests of lib.loss_curves: the stored loss curves and the late loss drop (numpy only)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from lib import loss_curves, training_runs
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
        ([["a", "b", "c", "d", "e"]], TypeError, r"^runs\[0\] \(its loss curve\) must be a 1-D array of real"),
        ([np.zeros(10)], ValueError, r"fourth fifth must be positive; got 0.0"),
        ([{"icl": 1.0}], ValueError, r"loss_every and loss_curve"),
    ],
)
def test_late_loss_drop_refuses_bad_input(runs, exc, message):
    with pytest.raises(exc, match=message):
        late_loss_drop(runs)


@pytest.mark.parametrize(
    "row, message",
    [
        (None, r"^row must have the columns .*; got NoneType"),
        ({"loss_every": 5}, r"^row must have the columns .*; got the columns \['loss_every'\]"),
        ({"loss_every": "nan", "loss_curve": "[1]"}, r"^row: loss_every must be a positive integer .*got 'nan'"),
        ({"loss_every": "inf", "loss_curve": "[1]"}, r"loss_every must be a positive integer .*got 'inf'"),
        ({"loss_every": 1e300, "loss_curve": "[1]"}, r"loss_every must be a positive integer .*at most 1e\+12"),
        ({"loss_every": 0, "loss_curve": "[1]"}, r"loss_every must be a positive integer .*got 0"),
        ({"loss_every": -5, "loss_curve": "[1]"}, r"loss_every .*got -5"),
        ({"loss_every": "2.5", "loss_curve": "[1]"}, r"loss_every .*got '2.5'"),  # was silently 2
        ({"loss_every": True, "loss_curve": "[1]"}, r"loss_every .*got True"),
        ({"loss_every": 5, "loss_curve": "[NaN, 1]"}, r"^row: loss_curve entry 0 is nan; every loss must be"),
        ({"loss_every": 5, "loss_curve": "[1, Infinity]"}, r"loss_curve entry 1 is inf"),
        ({"loss_every": 5, "loss_curve": "[null, 1]"}, r"loss_curve entry 0 is None"),
        ({"loss_every": 5, "loss_curve": "[-1, 1]"}, r"loss_curve entry 0 is -1"),
        ({"loss_every": 5, "loss_curve": "[true, 1]"}, r"loss_curve entry 0 is True"),
        ({"loss_every": 5, "loss_curve": "[[1, 2], [3, 4]]"}, r"loss_curve entry 0 is \[1, 2\]"),
        ({"loss_every": 5, "loss_curve": "[]"}, r"^row: loss_curve must be the JSON text of a non-empty list"),
        ({"loss_every": 5, "loss_curve": "3"}, r"loss_curve must be the JSON text .*got '3'"),
        ({"loss_every": 5, "loss_curve": "[1, 2"}, r"loss_curve must be the JSON text .*got '\[1, 2'"),
        ({"loss_every": 5, "loss_curve": [1, 2]}, r"loss_curve must be the JSON text .*got \[1, 2\]"),
    ],
)
def test_loss_curve_refuses_a_bad_row(row, message):
    # each used to return NaN, a 2-D or 0-d curve, wrong step numbers, or raise OverflowError
    with pytest.raises(ValueError, match=message):
        loss_curve(row)


@pytest.mark.parametrize(
    "runs, exc, message",
    [
        (np.array(3.0), TypeError, r"^runs must be a sequence .*got a 0-d array"),
        ([["1"] * 5], TypeError, r"^runs\[0\] \(its loss curve\) must be a 1-D array of real .*dtype <U1"),
        ([[True] * 5], TypeError, r"runs\[0\] .*dtype bool"),
        ([[1 + 1j] * 5], TypeError, r"runs\[0\] .*dtype complex128"),
        ([None], TypeError, r"runs\[0\] .*got NoneType"),
        ([[1.0, [2.0]] * 3], TypeError, r"runs\[0\] .*got a ragged list"),
        ([[1e308] * 5, [1e308] * 5], ValueError, r"^runs: the mean loss overflows float64"),  # was NaN
        # a negative loss (before: a drop computed from it, e.g. 6.0 for a curve ending at -5)
        ([[1.0, 1.0, 1.0, 1.0, -5.0]], ValueError, r"^runs\[0\] \(its loss curve\) must hold losses >= 0; entry 4"),
        ([np.ones(8), -np.ones(8)], ValueError, r"^runs\[1\] .*must hold losses >= 0; entry 0 is -1.0"),
    ],
)
def test_late_loss_drop_refuses_more_bad_input(runs, exc, message):
    with pytest.raises(exc, match=message):
        late_loss_drop(runs)
    # exact rationals are real numbers: accepted
    assert late_loss_drop([[Fraction(v) for v in (5, 4, 3, 2, 1)]]) == 0.5


def test_the_loss_curve_has_one_address():
    from lib import training_runs

    assert training_runs.load_control_runs  # the sweep reader stays
    with pytest.raises(AttributeError, match=r"lib.training_runs.loss_curve has moved to lib.loss_curves.loss_curve"):
        training_runs.loss_curve  # noqa: B018
    assert loss_curves.MIN_POINTS == 5


def _plateau_row(values, every=100):
    return {"loss_every": every, "loss_curve": json.dumps(values)}


def test_plateau_exit_is_the_end_of_the_first_block_below_the_level():
    row = _plateau_row([1.0, 1.02, 0.98, 1.0, 0.9, 0.5, 0.4, 0.3])
    # blocks of 200 steps: 1.01, 0.99, 0.7, 0.35 -> first below 1 - 0.05 is the third
    assert loss_curves.plateau_exit(row, level=1.0, block=200) == 600
    assert loss_curves.plateau_exit(row, level=1.0, margin=0.5, block=200) == 800
    assert loss_curves.plateau_exit(row, level=0.2, block=200) is None
    # one window per block: the noisy window at 0.98 is not an exit, 0.9 is
    assert loss_curves.plateau_exit(row, level=1.0, block=100) == 500
    # a last partial block is dropped
    assert loss_curves.plateau_exit(_plateau_row([1.0, 1.0, 1.0, 0.1]), level=1.0, block=300) is None


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"level": float("nan")}, ValueError, "level must be a finite number"),
        ({"level": "1"}, TypeError, "level must be a finite number"),
        ({"level": 1.0, "margin": 0.0}, ValueError, "margin must be > 0"),
        ({"level": 1.0, "margin": float("inf")}, ValueError, "margin must be a finite"),
        ({"level": 1.0, "block": 150}, ValueError, r"multiple of the row's loss_every \(100\)"),
        ({"level": 1.0, "block": 0}, ValueError, "block must be a positive multiple"),
        ({"level": 1.0, "block": 900}, ValueError, r"at most 800"),
        ({"level": 1.0, "block": 200.0}, TypeError, "block must be an integer"),
        ({"level": 1.0, "block": True}, TypeError, "block must be an integer"),
        ({"level": np.bool_(True)}, TypeError, "level must be a finite number"),
        ({"level": np.array([1.0, 2.0])}, TypeError, "level must be a finite number"),
        # a threshold level - margin <= 0, which no loss can cross (before: None, silently)
        ({"level": -1.0}, ValueError, r"level - margin must be > 0: .*got level = -1.0, margin = 0.05"),
        ({"level": 0.05}, ValueError, r"level - margin must be > 0"),
        ({"level": 1.0, "margin": 2.0}, ValueError, r"level - margin must be > 0: .*margin = 2.0"),
    ],
)
def test_plateau_exit_refuses_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        loss_curves.plateau_exit(_plateau_row([1.0] * 8), **kwargs)


def test_plateau_exit_takes_0d_arrays():
    # a 0-d array (a numpy reduction's result) is a number (before: TypeError)
    row = _plateau_row([1.0] * 4 + [0.5] * 4)
    assert loss_curves.plateau_exit(row, level=np.array(1.0), margin=np.float32(0.1), block=100) == 500


def test_plateau_exit_reads_a_stored_row():
    ctl = training_runs.load_control_runs("controls")
    (row,) = training_runs.select_runs(ctl, d=16, teacher="relu", alpha=16.0, kind="linear", draw=0)
    assert loss_curves.plateau_exit(row, level=0.4358) == 400


def test_summed_step_size_is_the_transformers_schedule():
    """The numpy sum equals the sum of the optax schedule lib.transformers trains with."""
    pytest.importorskip("optax")
    import lib.transformers as tf

    lr, steps = 3e-3, 250
    # Adam on a constant gradient moves by the step size at each step: the sum of the
    # moves of the transformers' own optimizer is the summed step size
    import jax.numpy as jnp

    opt = tf._tf_optimizer(lr, steps).tx
    params = jnp.zeros(1)
    state = opt.init(params)
    moved = 0.0
    for _ in range(137):
        update, state = opt.update(jnp.ones(1), state, params)
        moved -= float(update[0])
    row = {"kind": "linear", "lr": lr, "steps": steps}
    assert loss_curves.summed_step_size(row, 137) == pytest.approx(moved, rel=1e-5)
    assert loss_curves.summed_step_size(row, 0) == 0.0
    # the whole run: lr * steps * (1 + LR_FLOOR) / 2 up to the discrete sum's end effect
    full = loss_curves.summed_step_size(row, steps)
    assert full == pytest.approx(lr * steps * (1 + loss_curves.LR_FLOOR) / 2, rel=1e-2)


@pytest.mark.parametrize(
    ("row", "step", "exc", "match"),
    [
        ([1, 2], 3, TypeError, "row must be a mapping"),
        ({"kind": "la_full", "lr": 0.1, "steps": 10}, 3, ValueError, r"row\['kind'\]"),
        ({"kind": "softmax", "lr": 0.0, "steps": 10}, 3, ValueError, r"row\['lr'\]"),
        ({"kind": "softmax", "lr": float("nan"), "steps": 10}, 3, ValueError, r"row\['lr'\]"),
        ({"kind": "softmax", "lr": 0.1, "steps": 2.5}, 1, ValueError, r"row\['steps'\]"),
        ({"kind": "softmax", "lr": 0.1, "steps": 10}, 1.0, TypeError, "step must be an integer"),
        ({"kind": "softmax", "lr": 0.1, "steps": 10}, 11, ValueError, r"step must be in \[0, 10\]"),
        ({"kind": "softmax", "lr": 0.1, "steps": 10}, -1, ValueError, r"step must be in \[0, 10\]"),
    ],
)
def test_summed_step_size_refuses_bad_input(row, step, exc, match):
    with pytest.raises(exc, match=match):
        loss_curves.summed_step_size(row, step)
