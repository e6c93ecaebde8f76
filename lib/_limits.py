"""The limits of the machine that ``lib`` respects: memory, time and the float64 range.

Memory guard. Every public function that allocates large arrays (the samplers,
:func:`lib.attention.fit_gamma`, :func:`lib.simulation.mc_error`,
:func:`lib.simulation.simulate`, the baselines' Monte Carlo) estimates its peak memory
first and calls :func:`check_memory`, which raises :class:`MemoryLimitError` (a
``MemoryError`` and a ``ValueError``) naming the argument, the estimate and the limit,
before anything is sampled. The limit is ``MEMORY_FRACTION`` = 0.8 of the memory the
process may still use at the call (the smallest of ``MemAvailable`` in
``/proc/meminfo``, the room under the cgroup's memory limit and under ``RLIMIT_AS``), or
the environment variable ``LIB_MEMORY_LIMIT``: a number of bytes or a size with a unit
(``"6GiB"``, ``"500MB"``), or ``"none"`` to switch the guard off.

Time. Monte Carlo loops report their estimated time when it exceeds a minute
(:class:`Progress`).

Range. :func:`solve_rescaled` solves a ridge problem on data rescaled by exact powers of
two, for data far from unit scale.

Iterations. An iterative solver that stops short of its tolerance raises
:class:`ConvergenceError` rather than return an inaccurate answer.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

import numpy as np

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None

__all__ = [
    "MEMORY_LIMIT_ENV",
    "MEMORY_FRACTION",
    "MemoryLimitError",
    "memory_limit",
    "check_memory",
    "Progress",
    "RESCALE_EXPONENT",
    "solve_rescaled",
    "ConvergenceError",
]


# --------------------------------------------------------------------------------------
# memory guard
# --------------------------------------------------------------------------------------
#: Environment variable that sets the memory limit of the guard, in bytes or with a unit
#: (``"6GiB"``, ``"500MB"``, ``"0.5TiB"``); ``"none"`` or ``"inf"`` switches it off.
MEMORY_LIMIT_ENV = "LIB_MEMORY_LIMIT"
#: Default limit: this fraction of the memory available when the call starts.
MEMORY_FRACTION = 0.8
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


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
    unit = t[len(num) :]
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


def _read_number(path: str) -> float | None:
    """The integer in a one-line file (``max`` is inf), or None if it cannot be read."""
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if text == "max":
        return float("inf")
    try:
        return float(text)
    except ValueError:
        return None


def _cgroup_free_bytes() -> float:
    """Memory left under this process's cgroup limit (v2 ``memory.max`` minus
    ``memory.current``, v1 ``memory.limit_in_bytes`` minus ``memory.usage_in_bytes``); inf
    without a limit or a readable cgroup."""
    v1 = v2 = ""
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "":
                    v2 = path
                elif "memory" in controllers.split(","):
                    v1 = path
    except (OSError, ValueError):
        pass
    free = float("inf")
    candidates = [
        (f"/sys/fs/cgroup{v2}".rstrip("/"), "memory.max", "memory.current"),
        ("/sys/fs/cgroup", "memory.max", "memory.current"),
        (f"/sys/fs/cgroup/memory{v1}".rstrip("/"), "memory.limit_in_bytes", "memory.usage_in_bytes"),
        ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"),
    ]
    for base, limit_file, usage_file in candidates:
        limit = _read_number(f"{base}/{limit_file}")
        if limit is None or limit >= 2.0**60:  # no limit (v1 writes 2^63 rounded to pages)
            continue
        usage = _read_number(f"{base}/{usage_file}") or 0.0
        free = min(free, max(limit - usage, 0.0))
    return free


def _address_space_free_bytes() -> float:
    """Address space left under ``RLIMIT_AS`` (``ulimit -v``): the soft limit minus the
    process's virtual size (``/proc/self/statm``); inf without a limit."""
    if resource is None:  # pragma: no cover - not POSIX
        return float("inf")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return float("inf")
    used = 0.0
    try:
        with open("/proc/self/statm") as fh:
            used = float(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        pass
    return max(float(soft) - used, 0.0)


def _available_bytes() -> float:
    """Memory this process may still use: the smallest of ``MemAvailable`` (the machine),
    the room under the cgroup limit and the room under ``RLIMIT_AS``."""
    return min(_machine_available_bytes(), _cgroup_free_bytes(), _address_space_free_bytes())


def _machine_available_bytes() -> float:
    """Memory available now: ``MemAvailable`` of /proc/meminfo, else os.sysconf, else inf."""
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
    otherwise ``MEMORY_FRACTION`` (0.8) of the memory this process may still use: the
    smallest of the machine's available memory (``MemAvailable`` of ``/proc/meminfo`` on
    Linux, ``os.sysconf`` elsewhere), the room under the cgroup's limit (v2
    ``memory.max - memory.current``, v1 ``memory.limit_in_bytes - memory.usage_in_bytes``)
    and the room under the address-space limit ``RLIMIT_AS`` (``ulimit -v``).

    Returns
    -------
    float
        The limit in bytes (``inf`` for no limit).
    """
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
    limit = memory_limit()
    if nbytes > limit:
        if (os.environ.get(MEMORY_LIMIT_ENV) or "").strip():
            source = f"set by ${MEMORY_LIMIT_ENV}"
        else:
            source = (
                f"{MEMORY_FRACTION:g} of the {_fmt_bytes(limit / MEMORY_FRACTION)} this process may "
                "still use: machine, cgroup and ulimit -v"
            )
        raise MemoryLimitError(
            f"{where} would need about {_fmt_bytes(nbytes)} of memory (driven by {argument}), "
            f"more than the limit of {_fmt_bytes(limit)} ({source}); reduce "
            f"{argument.split(' (')[0]}, or raise the limit with the environment variable "
            f"{MEMORY_LIMIT_ENV} (e.g. '16GiB' or 'none')"
        )


# --------------------------------------------------------------------------------------
# progress of long Monte Carlo loops
# --------------------------------------------------------------------------------------
class Progress:
    """Progress report of a loop over batches that may run for a long time.

    After the first batch the total time is estimated from it; if the estimate exceeds
    ``after`` seconds (default 60), a line with the estimate is written to ``stderr``,
    then one line at most every ``every`` seconds (default 30) with the fraction done
    and the time left. Short loops (every call in the book) print nothing.

    Parameters
    ----------
    where : str
        The call, named in the lines (``"baseline_errors(n_test=2000000000)"``).
    total : int
        Number of items (test contexts) the loop processes.
    after, every : float
        Seconds, as above.
    stream : file-like, optional
        Where the lines go (default ``sys.stderr``).
    """

    def __init__(self, where: str, total: int, *, after: float = 60.0, every: float = 30.0, stream: Any = None):
        self.where, self.total, self.after, self.every = where, int(total), float(after), float(every)
        self.stream = stream
        self.start = time.perf_counter()
        self.active = False
        self.last = self.start

    def _write(self, text: str) -> None:
        print(f"{self.where}: {text}", file=self.stream or sys.stderr, flush=True)

    def update(self, done: int) -> None:
        """Report that ``done`` of ``total`` items are finished."""
        now = time.perf_counter()
        elapsed = now - self.start
        if done <= 0 or done >= self.total:
            return
        left = elapsed * (self.total - done) / done
        if not self.active:
            if elapsed + left <= self.after:
                return
            self.active = True
            self._write(f"estimated time {_fmt_seconds(elapsed + left)} ({done:,} of {self.total:,} done)")
            self.last = now
        elif now - self.last >= self.every:
            self._write(f"{100.0 * done / self.total:.1f} % done, about {_fmt_seconds(left)} left")
            self.last = now


def _fmt_seconds(t: float) -> str:
    if t < 120:
        return f"{t:.0f} s"
    if t < 7200:
        return f"{t / 60:.1f} min"
    return f"{t / 3600:.1f} h"


# --------------------------------------------------------------------------------------
# the float64 range: ridge problems on data far from unit scale
# --------------------------------------------------------------------------------------
#: Data whose largest entry lies beyond 2^+-RESCALE_EXPONENT are rescaled (by powers of
#: two, exactly) before a ridge solve; the solvers square the scales.
RESCALE_EXPONENT = 64


def _exponent(a: np.ndarray) -> int:
    """The binary exponent of the largest entry of ``a`` (0 for an all-zero array)."""
    m = float(np.max(np.abs(a)))
    return int(np.frexp(m)[1]) if m > 0.0 else 0


def solve_rescaled(
    solve: Callable[[np.ndarray, np.ndarray, np.ndarray, float], np.ndarray],
    X: np.ndarray,
    F: np.ndarray,
    y: np.ndarray,
    ridge: float,
    info: dict,
) -> np.ndarray:
    r"""``solve(X, F, y, ridge)`` for :math:`\min_\Gamma \sum_\mu (y_\mu - x_\mu^\top \Gamma
    \psi_\mu)^2 + r \|\Gamma\|_F^2`, safe for data far from unit scale.

    With :math:`X = 2^{e_x} X'`, :math:`F = 2^{e_f} F'`, :math:`y = 2^{e_y} y'` (exact),
    :math:`\Gamma = 2^{e_y - e_x - e_f}\,\Gamma'` where :math:`\Gamma'` solves the
    problem on the primed data with ridge :math:`r\,2^{-2(e_x + e_f)}`. When that ridge
    exceeds :math:`2^{200}`, :math:`\Phi^\top\Phi` is negligible against it and
    :math:`\Gamma = X^\top \mathrm{diag}(y) F / r` (``info["solver"] =
    "ridge-dominated"``). Data within :math:`2^{\pm 64}` are solved as they are.

    Parameters
    ----------
    solve : callable
        ``solve(X, F, y, ridge) -> Gamma``, a solver of the problem on unit-scale data.
    X : numpy.ndarray, shape (n, d)
        Queries.
    F : numpy.ndarray, shape (n, d + 1)
        Context features.
    y : numpy.ndarray, shape (n,)
        Targets.
    ridge : float
        The ridge :math:`r \ge 0`.
    info : dict
        Filled by ``solve`` (and with ``"solver"`` in the ridge-dominated case).

    Returns
    -------
    numpy.ndarray, shape (d, d + 1)
        :math:`\Gamma` on the scale of the data.

    Raises
    ------
    ValueError
        If the solution is not representable in float64.
    """
    ex, ef, ey = (_exponent(a) for a in (X, F, y))
    if max(abs(ex), abs(ef), abs(ey)) <= RESCALE_EXPONENT:
        return solve(X, F, y, ridge)
    X, F, y = np.ldexp(X, -ex), np.ldexp(F, -ef), np.ldexp(y, -ey)
    with np.errstate(over="ignore"):
        scaled_ridge = float(np.ldexp(ridge, -2 * (ex + ef)))
    if scaled_ridge > 2.0**200:  # Gamma = X^T diag(y) F / ridge, in the unscaled ridge
        gamma, shift = np.einsum("nd,n,nk->dk", X, y, F) / ridge, ey + ex + ef
        info["solver"] = "ridge-dominated"
    else:
        gamma, shift = solve(X, F, y, scaled_ridge), ey - ex - ef
    with np.errstate(over="ignore"):
        gamma = np.ldexp(gamma, shift)
    if not np.all(np.isfinite(gamma)):
        raise ValueError(
            "queries, features and targets: the fitted Gamma is not representable in float64 "
            f"(its scale is about 2^{shift}); rescale the data"
        )
    return gamma


class ConvergenceError(RuntimeError):
    """The iterative solver of :func:`lib.attention.fit_gamma` did not reach its tolerance.

    Raised instead of returning an inaccurate ``Gamma``. Typical causes: ``tau`` close to
    1 with ``lam = 0`` (the interpolation peak, where the normal equations are nearly
    singular) or a too small ``maxiter``. Remedies: a small ridge ``lam > 0``, a larger
    ``maxiter``, or ``method="dense"``/``"dual"`` when the problem fits in memory.
    Re-exported as ``lib.attention.ConvergenceError``.
    """
