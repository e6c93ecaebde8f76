"""Input validation and random-number handling shared by every module of ``lib``.

Each public function of the library checks its arguments with one of these helpers,
so that bad input fails early with a message that names the argument, the value that
was given and what is allowed, instead of a NaN or a traceback from inside numpy.

Memory guard. Every public function that allocates large arrays (the samplers,
:func:`lib.attention.fit_gamma`, :func:`lib.attention.mc_error`,
:func:`lib.attention.simulate`) estimates its peak memory first and calls
:func:`check_memory`, which raises :class:`MemoryLimitError` (a ``MemoryError`` and a
``ValueError``) naming the argument, the estimate and the limit, before anything is
sampled. The limit is ``MEMORY_FRACTION`` = 0.8 of the memory available at the call
(``MemAvailable`` in ``/proc/meminfo``), or the environment variable
``LIB_MEMORY_LIMIT``: a number of bytes or a size with a unit (``"6GiB"``, ``"500MB"``),
or ``"none"`` to switch the guard off.
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
    "check_broadcast",
    "check_scalar",
    "MemoryLimitError",
    "memory_limit",
    "check_memory",
    "MEMORY_LIMIT_ENV",
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


def check_broadcast(*named: tuple[str, Any]) -> tuple[int, ...]:
    """Check that arrays broadcast together; name the first two that do not, in order.

    Parameters
    ----------
    *named : (str, array_like) pairs
        The arguments in the order of the user's call.

    Returns
    -------
    tuple of int
        The broadcast shape.

    Raises
    ------
    ValueError
        ``"alpha (shape (2,)) and kappa (shape (3,)) cannot be broadcast together"``:
        the first argument that does not fit, and the first earlier one it clashes with.
    """
    shape: tuple[int, ...] = ()
    for j, (name, value) in enumerate(named):
        sj = np.shape(value)
        try:
            shape = np.broadcast_shapes(shape, sj)
        except ValueError:
            for other, ovalue in named[:j]:
                try:
                    np.broadcast_shapes(np.shape(ovalue), sj)
                except ValueError:
                    break
            else:  # pragma: no cover - some earlier argument must clash
                other, ovalue = named[0]
            raise ValueError(
                f"{other} (shape {np.shape(ovalue)}) and {name} (shape {sj}) cannot be "
                "broadcast together; give scalars or arrays of compatible shapes"
            ) from None
    return shape


def check_scalar(name: str, value: Any, **bounds: Any) -> float:
    """:func:`check_real` for an argument that must be a single number; returns a float.

    Raises
    ------
    TypeError
        If ``value`` is an array or list with more than zero dimensions (the message
        names the argument and the shape), or not a real number.
    ValueError
        As :func:`check_real`.
    """
    arr = check_real(name, value, **bounds)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a single real number, not an array; got shape {arr.shape}: {value!r}")
    return float(arr)


# --------------------------------------------------------------------------------------
# memory guard
# --------------------------------------------------------------------------------------
#: Environment variable that sets the memory limit of the guard, in bytes or with a unit
#: (``"6GiB"``, ``"500MB"``, ``"0.5TiB"``); ``"none"`` or ``"inf"`` switches it off.
MEMORY_LIMIT_ENV = "LIB_MEMORY_LIMIT"
#: Default limit: this fraction of the memory available when the call starts.
MEMORY_FRACTION = 0.8
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


class MemoryLimitError(MemoryError, ValueError):
    """A call would need more memory than the limit of :func:`memory_limit`.

    Raised before anything large is allocated or sampled. It is both a
    :class:`MemoryError` and a :class:`ValueError` (the input asks for too much).
    """


def _parse_bytes(text: str) -> float:
    t = text.strip().lower().replace(" ", "")
    if t in ("none", "inf", "off", "unlimited"):
        return float("inf")
    num = t.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = t[len(num):]
    try:
        value = float(num)
    except ValueError:
        value = float("nan")
    if unit not in _UNITS or not value > 0:
        raise ValueError(
            f"environment variable {MEMORY_LIMIT_ENV} must be a positive number of bytes, "
            f"optionally with a unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), or 'none'; got {text!r}"
        )
    return value * _UNITS[unit]


def _available_bytes() -> float:
    """Memory available now: ``MemAvailable`` of /proc/meminfo, else os.sysconf, else inf."""
    import os

    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:  # pragma: no cover - not Linux
        pass
    try:  # pragma: no cover - not Linux
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return float("inf")


def memory_limit() -> float:
    """The memory limit, in bytes, that :func:`check_memory` enforces.

    ``$LIB_MEMORY_LIMIT`` if set (bytes or with a unit, ``"none"`` for no limit),
    otherwise ``MEMORY_FRACTION`` (0.8) of the memory available now (``MemAvailable``
    of ``/proc/meminfo`` on Linux, ``os.sysconf`` elsewhere).
    """
    import os

    text = os.environ.get(MEMORY_LIMIT_ENV)
    if text is not None and text.strip():
        return _parse_bytes(text)
    return MEMORY_FRACTION * _available_bytes()


def _fmt_bytes(n: float) -> str:
    if not np.isfinite(n):
        return "inf" if n > 0 else str(n)
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def check_memory(where: str, nbytes: float, argument: str) -> None:
    """Raise :class:`MemoryLimitError` if an estimated peak exceeds :func:`memory_limit`.

    Parameters
    ----------
    where : str
        The function (and call) whose peak was estimated, e.g. ``"simulate(d=3000)"``.
    nbytes : float
        The estimated peak memory, in bytes (may be inf).
    argument : str
        The argument(s) that drive the size, named in the message
        (e.g. ``"d and tau (n = tau d^2 = 18,000,000 contexts)"``).
    """
    import os

    limit = memory_limit()
    if nbytes > limit:
        if (os.environ.get(MEMORY_LIMIT_ENV) or "").strip():
            source = f"set by ${MEMORY_LIMIT_ENV}"
        else:
            source = f"{MEMORY_FRACTION:g} of the {_fmt_bytes(limit / MEMORY_FRACTION)} available now"
        raise MemoryLimitError(
            f"{where} would need about {_fmt_bytes(nbytes)} of memory (driven by {argument}), "
            f"more than the limit of {_fmt_bytes(limit)} ({source}); reduce "
            f"{argument.split(' (')[0]}, or raise the limit with the environment variable "
            f"{MEMORY_LIMIT_ENV} (e.g. '16GiB' or 'none')"
        )
