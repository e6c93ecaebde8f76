"""Executable claims: the checks that hold the book's sentences to its numbers.

A qualitative sentence in a chapter ("agrees to within 1 %", "grows with
:math:`\\rho_{\\mathrm{nl}}`", "extrapolates to zero") is followed by a hidden cell that
calls one of these functions with the numbers the sentence is about and the tolerance it
states. If the numbers stop supporting the sentence (a formula in ``lib`` broke, a data
file changed), the call raises :class:`ClaimError` with a message that quotes the claim,
and the chapter fails to execute, in the book build and in the notebook tests alike.

Every function returns ``None`` when the claim holds; the tolerance is the one the prose
states, never a looser one.

Used in: every chapter (hidden check cells).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "ClaimError",
    "claim",
    "claim_close",
    "claim_below",
    "claim_between",
    "claim_monotone",
    "claim_consistent",
]


class ClaimError(AssertionError):
    """A sentence of the book is no longer supported by the numbers next to it."""


def _fail(what: str, detail: str) -> None:
    raise ClaimError(f"claim no longer holds: {what!r}: {detail}")


def _values(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array: non-empty, real numbers (not bools or strings), finite."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must be real numbers (int or float, scalar or array); got {value!r} of dtype {arr.dtype}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty; got {value!r}")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf); got {value!r}")
    return arr


def _scalar(name: str, value: Any) -> float:
    """``value`` as a float: one real number (not a bool, a string or an array)."""
    arr = np.asarray(value)
    if arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a single real number (int or float); got {value!r}")
    return float(arr)


def _tolerance(name: str, value: Any) -> float:
    """A tolerance, margin or number of standard errors: a finite real number >= 0."""
    t = _scalar(name, value)
    if not (np.isfinite(t) and t >= 0):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return t


def _flag(name: str, value: Any) -> bool:
    """A keyword switch: a Python or NumPy bool, not a truthy stand-in such as a string."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def claim(condition: Any, what: str) -> None:
    """Check a claim that is already a boolean (or an array of them, all true).

    Parameters
    ----------
    condition : bool or array_like of bool
        Python or NumPy booleans, a scalar or a non-empty array of them. Anything else
        (a string such as ``'False'``, a number, NaN, an empty list) raises
        :class:`TypeError` or :class:`ValueError` instead of being read as true or false.
    what : str
        The sentence or clause being checked, quoted in the error message.

    Raises
    ------
    TypeError
        If ``condition`` is not made of booleans.
    ValueError
        If ``condition`` is empty.
    ClaimError
        If any entry of ``condition`` is false.
    """
    arr = np.asarray(condition)
    if arr.dtype.kind != "b":
        raise TypeError(
            f"condition must be a bool or an array of bools (Python or NumPy); got {condition!r} of dtype {arr.dtype}"
        )
    if arr.size == 0:
        raise ValueError(f"condition must not be empty; got {condition!r}")
    if not bool(np.all(arr)):
        _fail(what, f"condition is false ({condition!r})")


def claim_close(actual: Any, expected: Any, what: str, *, rel: float | None = None, abs: float | None = None) -> None:
    """Check ``|actual - expected| <= abs + rel * |expected|`` elementwise.

    Give the tolerance the sentence states: ``rel=0.01`` for "within 1 %",
    ``abs=0.005`` for "to 0.005".

    Parameters
    ----------
    actual, expected : float or array_like (broadcastable)
    what : str
        The claim, quoted in the error message.
    rel, abs : float, optional
        Relative and absolute tolerances (at least one is required; each a finite
        number >= 0: NaN or inf would make the check vacuous).
    """
    if rel is None and abs is None:
        raise ValueError("claim_close needs a tolerance: give rel=, abs= or both")
    rel_t = 0.0 if rel is None else _tolerance("rel", rel)
    abs_t = 0.0 if abs is None else _tolerance("abs", abs)
    a, e = _values("actual", actual), _values("expected", expected)
    err = np.abs(a - e)
    tol = abs_t + rel_t * np.abs(e)
    if np.any(err > tol):
        i = int(np.argmax(err - tol))
        ab = np.broadcast_arrays(a, e, err, tol)
        _fail(
            what,
            (
                f"|{ab[0].flat[i]:.6g} - {ab[1].flat[i]:.6g}| = {ab[2].flat[i]:.3g} "
                f"exceeds the tolerance {ab[3].flat[i]:.3g} (rel={rel}, abs={abs})"
            ),
        )


def claim_below(smaller: Any, larger: Any, what: str, *, margin: float = 0.0) -> None:
    """Check ``smaller + margin < larger`` elementwise (an ordering claim).

    ``smaller`` and ``larger`` are finite, non-empty and broadcastable; ``margin`` is a
    finite number >= 0.

    Parameters
    ----------
    smaller, larger : float or array_like
        The two sides of the ordering.
    what : str
        The sentence being checked, quoted in the error.
    margin : float, keyword-only
        How much smaller (default 0: strictly smaller).

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind described (the message names it).
    ClaimError
        If the claim does not hold (the message starts with ``what``).
    """
    margin = _tolerance("margin", margin)
    s, g = _values("smaller", smaller), _values("larger", larger)
    bad = ~(s + margin < g)
    if np.any(bad):
        i = int(np.argmax(np.broadcast_to(bad, np.broadcast(s, g).shape)))
        sb, gb = np.broadcast_arrays(s, g)
        _fail(what, f"{sb.flat[i]:.6g} + {margin:g} is not below {gb.flat[i]:.6g}")


def claim_between(value: Any, low: float, high: float, what: str) -> None:
    """Check ``low <= value <= high`` elementwise.

    ``low`` and ``high`` are single numbers with ``low <= high``; they may be
    ``-np.inf`` / ``np.inf`` for a one-sided claim, but not NaN (every comparison with
    NaN is false, so the claim would hold for any value).

    Parameters
    ----------
    value : float or array_like
        The values to check.
    low, high : float
        The bounds (inclusive).
    what : str
        The sentence being checked, quoted in the error.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind described (the message names it).
    ClaimError
        If the claim does not hold (the message starts with ``what``).
    """
    lo, hi = _scalar("low", low), _scalar("high", high)
    for name, bound, given in (("low", lo, low), ("high", hi, high)):
        if np.isnan(bound):
            raise ValueError(f"{name} must be a number or +-inf, not NaN; got {given!r}")
    if lo > hi:
        raise ValueError(f"low must be <= high; got low={low!r}, high={high!r}")
    v = _values("value", value)
    if np.any(v < lo) or np.any(v > hi):
        _fail(what, f"values {np.round(v, 6).tolist()} are not all in [{lo:g}, {hi:g}]")


def claim_monotone(values: Any, what: str, *, increasing: bool = True, strict: bool = True) -> None:
    """Check that a sequence increases (or decreases), strictly unless ``strict=False``.

    ``values`` are finite with at least two entries; ``increasing`` and ``strict`` are
    bools.

    Parameters
    ----------
    values : array_like
        The sequence, in order.
    what : str
        The sentence being checked, quoted in the error.
    increasing : bool, keyword-only
        Increasing (default) or decreasing.
    strict : bool, keyword-only
        Strictly (default), or allowing equal neighbours.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind described (the message names it).
    ClaimError
        If the claim does not hold (the message starts with ``what``).
    """
    increasing, strict = _flag("increasing", increasing), _flag("strict", strict)
    v = _values("values", values).ravel()
    if v.size < 2:
        raise ValueError("values must have at least two entries to be monotone")
    dv = np.diff(v) if increasing else -np.diff(v)
    ok = dv > 0 if strict else dv >= 0
    if not np.all(ok):
        i = int(np.argmin(ok))
        word = "increase" if increasing else "decrease"
        _fail(what, f"does not {word} from entry {i} to {i + 1}: {v[i]:.6g} -> {v[i + 1]:.6g}")


def claim_consistent(estimate: Any, se: Any, target: Any, what: str, *, z: float = 3.0) -> None:
    """Check that ``estimate`` is within ``z`` standard errors of ``target``.

    For statistical claims ("agrees with the theory within its error bars"): the
    tolerance is ``z * se``, with ``se`` the estimate's standard error (finite and
    >= 0) and ``z`` a finite number >= 0.

    Parameters
    ----------
    estimate : float or array_like
        The measured values.
    se : float or array_like
        Their standard errors (>= 0).
    target : float or array_like
        The values they should agree with (for instance the theory).
    what : str
        The sentence being checked, quoted in the error.
    z : float, keyword-only
        Number of standard errors allowed (default 3).

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind described (the message names it).
    ClaimError
        If the claim does not hold (the message starts with ``what``).
    """
    z = _tolerance("z", z)
    e, s, t = _values("estimate", estimate), _values("se", se), _values("target", target)
    if np.any(s < 0):
        raise ValueError(f"se must be >= 0; got {se!r}")
    dev = np.abs(e - t) - z * s
    if np.any(dev > 0):
        i = int(np.argmax(dev))
        eb, sb, tb = np.broadcast_arrays(e, s, t)
        _fail(
            what,
            (
                f"{eb.flat[i]:.6g} ± {sb.flat[i]:.3g} is "
                f"{abs(eb.flat[i] - tb.flat[i]) / max(sb.flat[i], 1e-300):.1f} standard "
                f"errors from {tb.flat[i]:.6g} (allowed: {z:g})"
            ),
        )
