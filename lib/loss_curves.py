"""The stored training-loss curves of chapter 7's sweeps, and what the book reads from them.

- :func:`loss_curve`: the loss curve stored in a row of the ``controls`` or ``full_la``
  sweep (:func:`lib.training_runs.load_control_runs`);
- :func:`late_loss_drop`: how much the seed-averaged loss still falls at the end of
  training, the number chapter 7 uses to tell a network that has stopped learning from
  one that is still descending;
- :func:`plateau_exit`: the step at which a run's loss leaves a plateau (chapter 7: the
  context-free level, where the networks on h2 at d = 16 sit before they learn);
- :func:`summed_step_size`: the sum of a run's step sizes up to a step, a clock that
  compares runs with different step sizes.

Numpy only, no JAX.

Used in: :doc:`chapter 7 </book/trained/networks>`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Union

import numpy as np

from lib._checks import as_float_array

__all__ = [
    "CurveLike",
    "LR_FLOOR",
    "MIN_POINTS",
    "SCHEDULED_KINDS",
    "late_loss_drop",
    "loss_curve",
    "plateau_exit",
    "summed_step_size",
]

#: What :func:`late_loss_drop` accepts for one run: a row of a stored sweep (read with
#: :func:`loss_curve`) or the loss values themselves, a 1-D array.
CurveLike = Union[Mapping[str, Any], Sequence[float], np.ndarray]

#: Largest ``loss_every`` :func:`loss_curve` accepts (its step numbers stay exact int64).
MAX_STEPS = 10**12

#: Fewest points of a curve for :func:`late_loss_drop`: each fifth must hold one.
MIN_POINTS = 5


def loss_curve(row: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The stored training-loss curve of a ``controls`` / ``full_la`` row.

    Parameters
    ----------
    row : dict
        A :func:`lib.training_runs.load_control_runs` row with the columns
        ``loss_every`` (``k``) and ``loss_curve`` (the loss averaged over consecutive
        windows of ``k`` steps, as JSON).

    Returns
    -------
    steps, loss : numpy.ndarray
        The last step of each window and the window's mean loss.

    Raises
    ------
    ValueError
        If ``row`` is not a mapping with the two columns, ``loss_every`` is not a positive
        integer, or ``loss_curve`` is not a non-empty JSON list of finite losses ``>= 0``.

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>`.
    """
    if not isinstance(row, Mapping) or "loss_every" not in row or "loss_curve" not in row:
        got = f"the columns {sorted(map(str, row))[:8]}" if isinstance(row, Mapping) else type(row).__name__
        raise ValueError(f"row must have the columns loss_every and loss_curve (a controls or full_la row); got {got}")
    k = _window(row["loss_every"])
    loss = _stored_curve(row["loss_curve"])
    return k * np.arange(1, loss.size + 1), loss


def _window(value: Any) -> int:
    """``loss_every``: a positive integer (an int, or a float or text holding one)."""
    k = value
    if isinstance(value, str):
        try:
            k = float(value)
        except ValueError:
            k = None
    ok = isinstance(k, (int, float, np.integer, np.floating)) and not isinstance(k, (bool, np.bool_))
    if not (ok and math.isfinite(k) and k == int(k) and 1 <= k <= MAX_STEPS):
        raise ValueError(
            f"row: loss_every must be a positive integer (steps per window, at most {MAX_STEPS:.0e}); got {value!r}"
        )
    return int(k)


def _stored_curve(text: Any) -> np.ndarray:
    """``loss_curve``: JSON text of a non-empty flat list of finite losses >= 0."""
    shown = repr(text)[:60]
    try:
        values = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        values = None
    if not isinstance(values, list) or not values:
        raise ValueError(f"row: loss_curve must be the JSON text of a non-empty list of losses; got {shown}")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"row: loss_curve entry {i} is {v!r}; every loss must be a finite number >= 0")
    return np.asarray(values, dtype=float)


def late_loss_drop(runs: Sequence[CurveLike]) -> float:
    r"""Relative fall of the seed-averaged loss from the fourth fifth to the last fifth.

    The curves of the runs (one per seed) are cut to the shortest length :math:`m` and
    averaged point by point into :math:`\bar L_1, \dots, \bar L_m`. With :math:`Q_4` the
    mean of :math:`\bar L` over the points :math:`\lfloor 3m/5 \rfloor \le j <
    \lfloor 4m/5 \rfloor` (counted from 0) and :math:`Q_5` its mean over
    :math:`j \ge \lfloor 4m/5 \rfloor`, the drop is :math:`(Q_4 - Q_5)/Q_4`. It is
    near 0 for a network that has stopped learning (up to the fluctuation of the
    mini-batch loss) and positive for one still descending.

    Parameters
    ----------
    runs : sequence of dict or of array_like
        One run per entry: a row of a stored sweep (its curve read by
        :func:`loss_curve`) or a 1-D array of loss values in the order of training.

    Returns
    -------
    float
        :math:`(Q_4 - Q_5)/Q_4`; negative when the loss rose at the end.

    Raises
    ------
    TypeError
        If ``runs`` is not a sequence (a single row or a string), or a curve is not an
        array of real numbers.
    ValueError
        If ``runs`` is empty, a curve is not 1-D and finite or holds a negative loss, the
        shortest curve has fewer than :data:`MIN_POINTS` points, or :math:`Q_4 \le 0`.

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>` (the audit of the
    control sweep at :math:`d = 8` and :math:`d = 16`).

    Examples
    --------
    >>> late_loss_drop([[5.0, 4.0, 3.0, 2.0, 1.0], [5.0, 4.0, 3.0, 2.0, 1.0]])
    0.5
    """
    if isinstance(runs, (str, bytes, Mapping)) or not isinstance(runs, (Sequence, np.ndarray)):
        raise TypeError(f"runs must be a sequence of rows or of 1-D loss arrays; got {type(runs).__name__}")
    if isinstance(runs, np.ndarray) and runs.ndim == 0:
        raise TypeError(f"runs must be a sequence of rows or of 1-D loss arrays; got a 0-d array {runs!r}")
    if len(runs) == 0:
        raise ValueError("runs must hold at least one run; got an empty sequence")
    curves = [_run_curve(i, r) for i, r in enumerate(runs)]
    m = min(c.size for c in curves)
    if m < MIN_POINTS:
        raise ValueError(
            f"runs: every loss curve must have at least {MIN_POINTS} points (one per fifth); the shortest has {m}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        mean_curve = np.mean([c[:m] for c in curves], axis=0)
        q4, q5 = mean_curve[3 * m // 5 : 4 * m // 5].mean(), mean_curve[4 * m // 5 :].mean()
    if not (math.isfinite(q4) and math.isfinite(q5)):
        raise ValueError(f"runs: the mean loss overflows float64 (largest loss {max(c.max() for c in curves):.3g})")
    if not q4 > 0:
        raise ValueError(f"runs: the mean loss over the fourth fifth must be positive; got {float(q4)!r}")
    return float((q4 - q5) / q4)


def _run_curve(i: int, run: Any) -> np.ndarray:
    """The loss curve of ``runs[i]``: a stored row's, or a 1-D array of real numbers."""
    name = f"runs[{i}] (its loss curve)"
    if isinstance(run, Mapping):
        return loss_curve(run)[1]
    try:
        seq = isinstance(run, (Sequence, np.ndarray)) and not isinstance(run, (str, bytes))
        arr = np.asarray(run) if seq else None
    except ValueError:  # ragged
        raise TypeError(f"{name} must be a 1-D array of real numbers; got a ragged {type(run).__name__}") from None
    if arr is not None and arr.dtype == object:  # ragged, None, Fraction entries: convert only numbers
        try:
            arr = np.asarray(run, dtype=float) if arr is not None else None
        except (TypeError, ValueError):
            arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        kind = type(run).__name__ if arr is None else f"dtype {arr.dtype}"
        raise TypeError(f"{name} must be a 1-D array of real numbers (not bool, str or complex); got {kind}")
    curve = as_float_array(name, arr, 1)
    negative = np.nonzero(curve < 0)[0]
    if negative.size:
        j = int(negative[0])
        raise ValueError(f"{name} must hold losses >= 0; entry {j} is {float(curve[j])!r}")
    return curve


def plateau_exit(row: Mapping[str, Any], level: float, margin: float = 0.05, block: int = 400) -> int | None:
    r"""The step at which a run's training loss leaves the plateau at ``level``.

    The stored curve (:func:`loss_curve`) is averaged over blocks of ``block`` steps
    (whole windows; a last partial block is dropped), which smooths the mini-batch noise.
    The exit is the last step of the first block whose mean loss is below
    ``level - margin``; ``None`` if no block is.

    Parameters
    ----------
    row : dict
        A row of a stored ``controls`` or ``full_la`` sweep.
    level : float
        The plateau's loss (chapter 7: the context-free error :math:`e_{cf}(d)`), finite
        and ``> margin``.
    margin : float, default 0.05
        How far below ``level`` a block must be, finite and ``> 0``.
    block : int, default 400
        Steps per block, a positive multiple of the row's ``loss_every``.

    Returns
    -------
    int or None
        The exit step, or ``None`` if the loss never left the plateau.

    Raises
    ------
    TypeError
        If ``level`` or ``margin`` is not a number, or ``block`` not an integer.
    ValueError
        If the row's curve is invalid (:func:`loss_curve`), ``level`` or ``margin`` is
        not finite (``margin`` not positive), ``level - margin <= 0`` (a threshold no
        loss can fall below), or ``block`` is not a positive multiple of ``loss_every``
        no longer than the curve.

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>` (the plateau at
    :math:`d = 16`).

    Examples
    --------
    >>> row = {"loss_every": 100, "loss_curve": "[1.0, 1.0, 1.0, 1.0, 0.5, 0.4]"}
    >>> plateau_exit(row, level=1.0, margin=0.1, block=200)
    600
    >>> plateau_exit(row, level=0.3, block=200) is None
    True
    """
    steps, loss = loss_curve(row)
    k = int(steps[0])
    for name, value in (("level", level), ("margin", margin)):
        number = value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value  # a 0-d array
        if isinstance(number, (bool, np.bool_)) or not isinstance(number, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a finite number; got {value!r}")
        if not math.isfinite(number):
            raise ValueError(f"{name} must be a finite number; got {value!r}")
    level, margin = float(level), float(margin)
    if margin <= 0:
        raise ValueError(f"margin must be > 0; got {margin!r}")
    if not level - margin > 0:
        raise ValueError(
            f"level - margin must be > 0: a loss is >= 0, so no block falls below {level - margin!r}; "
            f"got level = {level!r}, margin = {margin!r}"
        )
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)):
        raise TypeError(f"block must be an integer number of steps; got {block!r}")
    if not (block > 0 and block % k == 0 and block <= k * loss.size):
        raise ValueError(
            f"block must be a positive multiple of the row's loss_every ({k}) at most "
            f"{k * loss.size} (the curve's length); got {block!r}"
        )
    per = block // k
    means = loss[: loss.size // per * per].reshape(-1, per).mean(axis=1)
    below = np.nonzero(means < level - margin)[0]
    return int((below[0] + 1) * block) if below.size else None


#: The transformers' step size decays by a cosine from ``lr`` to ``LR_FLOOR * lr``
#: over the run (:func:`lib.transformers.train_transformer`; a test checks the two agree).
LR_FLOOR = 0.1

#: The kinds of rows trained with that schedule (``full_la`` rows use another).
SCHEDULED_KINDS = ("softmax", "linear", "none")


def summed_step_size(row: Mapping[str, Any], step: Any) -> float:
    r"""The sum of the step sizes of a transformer run over its first ``step`` steps.

    A transformer row of the ``controls`` sweep trains ``steps`` Adam steps whose step
    size follows a cosine from ``lr`` down to :data:`LR_FLOOR` times ``lr``:
    :math:`\eta_t = \mathrm{lr}\,\big(f + (1 - f)\tfrac12(1 + \cos(\pi t / T))\big)`
    with :math:`f` = ``LR_FLOOR`` and :math:`T` = ``steps``. This returns
    :math:`\sum_{t < \mathrm{step}} \eta_t`: how far the optimizer could move by then, a
    clock that compares runs with different step sizes or lengths (chapter 7 measures
    the plateau exits with it).

    Parameters
    ----------
    row : dict
        A ``controls`` row (:func:`lib.training_runs.load_control_runs`) of a kind in
        :data:`SCHEDULED_KINDS`, with its ``lr`` and ``steps``.
    step : int
        Number of steps summed, ``0 <= step <= steps``.

    Returns
    -------
    float
        The summed step size.

    Raises
    ------
    TypeError
        If ``row`` is not a mapping or ``step`` not an integer.
    ValueError
        If the row's kind is not scheduled this way, its ``lr`` is not a positive finite
        number or its ``steps`` not a positive integer, or ``step`` is outside
        ``[0, steps]``.

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>` (the plateau at fixed
    :math:`\tau`).

    Examples
    --------
    >>> row = {"kind": "softmax", "lr": 0.01, "steps": 4}
    >>> round(summed_step_size(row, 4), 6)  # 0.01 * (1 + 0.775 + 0.55 + 0.325)
    0.0265
    """
    if not isinstance(row, Mapping):
        raise TypeError(f"row must be a mapping (a stored controls row); got {type(row).__name__}")
    kind = row.get("kind")
    if kind not in SCHEDULED_KINDS:
        raise ValueError(f"row['kind'] must be one of {SCHEDULED_KINDS} (the cosine schedule); got {kind!r}")
    lr, steps = row.get("lr"), row.get("steps")
    if (
        isinstance(lr, bool)
        or not isinstance(lr, (int, float, np.integer, np.floating))
        or not (math.isfinite(lr) and lr > 0)
    ):
        raise ValueError(f"row['lr'] must be a positive finite number; got {lr!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"row['steps'] must be a positive integer; got {steps!r}")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise TypeError(f"step must be an integer; got {step!r}")
    if not 0 <= step <= steps:
        raise ValueError(f"step must be in [0, {steps}] (the row's steps); got {step!r}")
    t = np.arange(int(step))
    eta = LR_FLOOR + (1 - LR_FLOOR) * 0.5 * (1 + np.cos(np.pi * t / int(steps)))
    return float(lr * eta.sum())
