"""Input validation and random-number handling shared by every module of ``lib``.

Each public function of the library checks its arguments with one of these helpers,
so that bad input fails early with a message that names the argument, the value that
was given and what is allowed, instead of a NaN or a traceback from inside numpy.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

__all__ = [
    "as_rng",
    "check_real",
    "check_int",
    "check_callable",
]

RngLike = "int | np.random.Generator | np.random.SeedSequence | None"


def as_rng(rng: Any = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` built from ``rng``.

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        A generator is returned unchanged (so that a caller can thread one generator
        through several calls); an integer seed or a seed sequence builds a new
        generator; ``None`` builds one from fresh operating-system entropy, which is
        not reproducible. The book always passes a seed.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        If ``rng`` is of any other type (for instance the legacy
        ``numpy.random.RandomState``).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng: a seed must be a non-negative integer; got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        "rng must be a numpy.random.Generator, a non-negative integer seed, a "
        f"numpy.random.SeedSequence or None; got {rng!r} of type {type(rng).__name__}"
    )


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> np.ndarray:
    """Validate a real number or an array of real numbers and return it as a float array.

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : float or array_like
        The value to check. Booleans, strings, complex numbers and NaN are rejected.
    low, high : float, optional
        Bounds; ``low_open``/``high_open`` make them strict.
    allow_inf : bool
        Whether ``+inf`` is allowed (for instance ``kappa = inf``).

    Returns
    -------
    numpy.ndarray
        ``np.asarray(value, dtype=float)``, of the same shape as ``value``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number or an array of them.
    ValueError
        If any entry is NaN, infinite (unless allowed) or outside the bounds.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {value!r}")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - exotic objects
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {value!r}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(
            f"{name} must be a real number or an array of real numbers; got {value!r} "
            f"(dtype {arr.dtype})"
        )
    arr = arr.astype(float)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not be NaN; got {value!r}")
    if np.any(np.isneginf(arr)) or (not allow_inf and np.any(np.isinf(arr))):
        allowed = "finite or +inf" if allow_inf else "finite"
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    if low is not None:
        bad = arr <= low if low_open else arr < low
        if np.any(bad):
            rel = ">" if low_open else ">="
            raise ValueError(f"{name} must be {rel} {low}; got {value!r}")
    if high is not None:
        bad = arr >= high if high_open else arr > high
        if np.any(bad):
            rel = "<" if high_open else "<="
            raise ValueError(f"{name} must be {rel} {high}; got {value!r}")
    return arr


def check_int(name: str, value: Any, *, low: int | None = None) -> int:
    """Validate an integer (a Python or numpy integer, not a bool or a float).

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value < low``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
    return value


def check_callable(name: str, value: Any) -> Callable:
    """Validate that ``value`` is callable and return it.

    Raises
    ------
    TypeError
        If ``value`` is not callable.
    """
    if not callable(value):
        raise TypeError(f"{name} must be a callable (a vectorized function of z); got {value!r}")
    return value
