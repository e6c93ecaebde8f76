"""Input validation and random-number handling shared by every module of ``lib``.

Each public function of the library checks its arguments with one of these helpers,
so that bad input fails early with a message that names the argument, the value that
was given and what is allowed, instead of a NaN or a traceback from inside numpy.

The memory guard (``check_memory``) and the progress report of long loops
(``Progress``) live in :mod:`lib._limits`; they are imported here for the modules
that use them.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, NamedTuple

import numpy as np

from lib._limits import MEMORY_LIMIT_ENV as MEMORY_LIMIT_ENV  # re-exported for the modules that use them
from lib._limits import MemoryLimitError as MemoryLimitError
from lib._limits import Progress as Progress
from lib._limits import check_memory as check_memory
from lib._limits import memory_limit as memory_limit
from lib._usercall import callee_name
from lib._usercall import check_returned as check_returned  # re-exported: its home is lib._usercall
from lib._usercall import user_call as user_call

__all__ = [
    "as_rng",
    "scalar_or_array",
    "check_vectorized",
    "user_call",
    "check_returned",
    "Interval",
    "PARAMETERS",
    "check_param",
    "check_real",
    "check_int",
    "check_range",
    "check_callable",
    "check_broadcast",
    "check_scalar",
    "check_result",
    "check_choice",
    "check_rho",
    "check_tasks",
    "check_contexts",
    "check_teacher_values",
]


def scalar_or_array(value: Any) -> float | np.ndarray:
    """A Python ``float`` for a 0-d result, the ``float`` array otherwise.

    Parameters
    ----------
    value : array_like
        A computed result.

    Returns
    -------
    float or numpy.ndarray
        ``float(value)`` if it is 0-d, else ``value`` as a float array.
    """
    value = np.asarray(value, dtype=float)
    return float(value) if value.ndim == 0 else value


def check_vectorized(
    name: str,
    f: Callable[[np.ndarray], Any],
    z: np.ndarray,
    *,
    call_error: type[Exception] = ValueError,
    what: str = "its input",
    check_finite: bool = True,
    quiet: bool = False,
    hint: str = "",
) -> np.ndarray:
    """Call a user's vectorized function on an array and check what it returns.

    :func:`user_call` around ``f(z)``, then :func:`check_returned`. Every call ``lib``
    makes of a function a user supplies (a teacher, a link, a label preprocessing) goes
    through this function, or through those two where the caller makes the call itself
    (:func:`lib.teachers.as_link`).

    Parameters
    ----------
    name : str
        The argument's name, used in the messages (``"teacher"``, ``"link"``).
    f : callable
        The user's function; called once as ``f(z)``.
    z : numpy.ndarray
        The input array (not modified by ``lib``; ``f`` gets it as it is).
    call_error, quiet : type of Exception and bool, keyword-only
        As in :func:`user_call` (defaults ``ValueError``, ``False``).
    what, check_finite, hint : str, bool and str, keyword-only
        As in :func:`check_returned` (defaults ``"its input"``, ``True``, ``""``).

    Returns
    -------
    numpy.ndarray
        What :func:`check_returned` returns: ``f(z)`` as a float array of ``z``'s shape.

    Raises
    ------
    ValueError
        As in :func:`check_returned`.
    call_error
        If calling ``f`` raises.
    """
    with user_call(name, z, callee=callee_name(f), call_error=call_error, quiet=quiet):
        out = f(z)
    return check_returned(name, out, z, what=what, check_finite=check_finite, hint=hint)


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
        A generator: ``rng`` itself if it is one, else a new one seeded from it.

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
        Bounds (None: no bound).
    low_open, high_open : bool
        Make the bounds strict (``value > low`` instead of ``value >= low``).
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
    if isinstance(value, numbers.Integral) and not isinstance(value, np.integer):
        try:  # a Python int beyond int64 (10**30) is a real number too; numpy would store an object
            value = float(value)
        except OverflowError:
            raise ValueError(
                f"{name} must be finite; got an integer of {len(str(abs(value)))} digits, beyond float64"
            ) from None
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - exotic objects
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {value!r}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {value!r} (dtype {arr.dtype})")
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


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """Validate an integer (a Python or numpy integer, not a bool or a float).

    Parameters
    ----------
    name : str
        The argument's name, used in the messages.
    value : int
        The value to check.
    low, high : int, optional
        Smallest and largest allowed values.

    Returns
    -------
    int
        ``value`` as a Python ``int``.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value < low`` or ``value > high``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            allowed = f">= {low}"
        elif low is None:
            allowed = f"<= {high}"
        else:
            allowed = f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {allowed}; got {value!r}")
    return value


def check_range(name: str, value: Any, **bounds: Any) -> tuple[float, float]:
    """Validate a plotted range ``(low, high)``: two real numbers with ``low < high``.

    Parameters
    ----------
    name : str
        The argument's name, used in the messages.
    value : pair of float
        The range.
    **bounds
        ``low``, ``high``, ``low_open``, ``high_open``, ``allow_inf`` of :func:`check_real`,
        applied to both ends.

    Returns
    -------
    (float, float)
        The two ends.

    Raises
    ------
    TypeError
        If ``value`` is not a pair of real numbers.
    ValueError
        If an end is out of bounds or NaN, or ``low >= high``.
    """
    arr = check_real(name, value, **bounds)
    if arr.shape != (2,):
        raise TypeError(f"{name} must be a pair (min, max) of real numbers; got {value!r}")
    if not arr[0] < arr[1]:
        raise ValueError(f"{name} must be a pair (min, max) with min < max; got {value!r}")
    return float(arr[0]), float(arr[1])


def check_callable(name: str, value: Any) -> Callable:
    """Validate that ``value`` is callable and return it.

    Parameters
    ----------
    name : str
        The argument's name, used in the message.
    value : callable
        The value to check.

    Returns
    -------
    callable
        ``value`` itself.

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

    Parameters
    ----------
    name : str
        The argument's name, used in the messages.
    value : float
        The value to check.
    **bounds
        ``low``, ``high``, ``low_open``, ``high_open``, ``allow_inf`` of :func:`check_real`.

    Returns
    -------
    float
        ``value`` as a Python ``float``.

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


def check_result(where: str, out: Any, **named: Any) -> Any:
    """Refuse a NaN computed from valid arguments (a formula evaluated outside float64).

    Parameters
    ----------
    where : str
        The public function, named in the message.
    out : array_like
        Its result.
    **named
        The arguments (name=value), quoted in the message.

    Returns
    -------
    array_like
        ``out`` unchanged when it holds no NaN.

    Raises
    ------
    ValueError
        If ``out`` holds a NaN: the arguments lie where the formula cannot be evaluated
        in double precision.
    """
    if np.any(np.isnan(np.asarray(out, dtype=float))):
        args = ", ".join(
            f"{k} = {np.asarray(v).tolist()!r}" if np.size(v) <= 8 else f"{k} (shape {np.shape(v)})"
            for k, v in named.items()
        )
        raise ValueError(
            f"{where}: the formula cannot be evaluated in double precision at {args} (it gives NaN); "
            "use arguments of moderate size"
        )
    return out


# --------------------------------------------------------------------------------------
# the model's parameters, declared once
# --------------------------------------------------------------------------------------
class Interval(NamedTuple):
    """The allowed range of a real parameter (in the spirit of scikit-learn's ``Interval``).

    Attributes
    ----------
    low, high : float or None
        The bounds; None for no bound.
    low_open, high_open : bool
        Whether the bound itself is excluded.
    allow_inf : bool
        Whether ``+inf`` is a valid value (``kappa = inf``: a fresh task per context).
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False


#: Largest noise variance accepted: the labels' squares (about rho^2 in the sums of squared
#: errors) must stay finite in float64.
RHO_MAX = 1e100

#: The ranges of the model's parameters (the book's notation page), declared once and
#: checked by :func:`check_param` wherever a public function takes one of them.
PARAMETERS: dict[str, Interval] = {
    "alpha": Interval(0.0, low_open=True),
    "kappa": Interval(0.0, low_open=True, allow_inf=True),
    "tau": Interval(0.0, low_open=True),
    "rho": Interval(0.0, RHO_MAX),
    "rho_nl": Interval(0.0, RHO_MAX),
    "lam": Interval(0.0),
    "ridge": Interval(0.0, low_open=True),
}


def check_param(name: str, value: Any, *, scalar: bool = False) -> Any:
    """Validate a model parameter against its range in :data:`PARAMETERS`.

    Parameters
    ----------
    name : str
        A key of :data:`PARAMETERS` (``"alpha"``, ``"kappa"``, ...), also the argument's
        name in the messages.
    value : float or array_like
        The value to check.
    scalar : bool, default False
        Require a single number (then a ``float`` is returned).

    Returns
    -------
    numpy.ndarray or float
        The value as a float array (:func:`check_real`), or a ``float`` with ``scalar``.

    Raises
    ------
    ValueError
        If a value lies outside the parameter's range, or is NaN.
    TypeError
        If the value is not real, or (with ``scalar``) not a single number.
    KeyError
        If ``name`` is not a declared parameter (a programming error in ``lib``).

    See Also
    --------
    check_real : the check with explicit bounds.
    """
    bounds = PARAMETERS[name]._asdict()
    return check_scalar(name, value, **bounds) if scalar else check_real(name, value, **bounds)


def check_rho(rho: Any) -> float:
    """The label-noise variance ``rho``: one finite number ``>= 0`` (:data:`PARAMETERS`).

    The single validator of ``rho``: every public function calls it once and passes the
    returned float to workers that trust it (``tests/test_simulation.py`` counts the calls).

    Parameters
    ----------
    rho : float
        The value to check.

    Returns
    -------
    float
        ``rho`` as a float.
    """
    return check_param("rho", rho, scalar=True)


def check_choice(name: str, value: Any, choices: Any, *, also: str = "", hint: str = "") -> Any:
    """A value that must be one of a few allowed options (a string option, usually).

    The one way ``lib`` checks a choice: the message names the argument, lists the
    options and shows the value given.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object
        The value to check; it is returned unchanged when allowed.
    choices : iterable
        The allowed values (compared with ``==``; an unhashable value is refused).
    also : str, keyword-only
        Other values the argument accepts, put before the list (``"None, "``).
    hint : str, keyword-only
        Appended to the list of options (``" or a callable T(y)"``).

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ValueError
        If ``value`` is not one of ``choices``.
    """
    options = tuple(choices)
    try:
        ok = isinstance(value, str) == all(isinstance(c, str) for c in options) and value in options
    except (TypeError, ValueError):  # e.g. an array, whose == is elementwise
        ok = False
    if not ok:
        shown = sorted(options) if all(isinstance(c, str) for c in options) else list(options)
        raise ValueError(f"{name} must be {also}one of {shown}{hint}; got {value!r}")
    return value


def check_teacher_values(f: Callable, z: np.ndarray) -> np.ndarray:
    """Evaluate an already-resolved teacher on ``z``; finite values of ``z``'s shape.

    Parameters
    ----------
    f : callable
        The teacher (a :class:`lib.hermite.Link`, resolved by :func:`lib.teachers.as_link`).
    z : numpy.ndarray
        Gaussian inputs ``x^T w``, any shape.

    Returns
    -------
    numpy.ndarray
        ``f(z)``, a new float array (never ``z`` itself, so the caller may add noise in place).
    """
    return check_vectorized("teacher", f, z, what="its input (Gaussian inputs)")


# --------------------------------------------------------------------------------------
# arrays of the model: Gamma, a batch of contexts, a task set
# --------------------------------------------------------------------------------------


def as_matrix(name: str, value: Any, ndim: int) -> np.ndarray:
    """A real array with ``ndim`` dimensions; float64 arrays that are all finite are used
    without a copy (pretraining sets are large), anything else goes through check_real."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64 and np.isfinite(value).all():
        arr = value
    else:
        arr = check_real(name, value)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {arr.shape}")
    return arr


def check_gamma(gamma: Any, d: int | None = None) -> np.ndarray:
    """``Gamma`` of shape (d, d + 1), with ``d`` checked if given."""
    gamma = as_matrix("gamma", gamma, 2)
    dd = gamma.shape[0]
    if dd < 1 or gamma.shape[1] != dd + 1:
        raise ValueError(f"gamma must have shape (d, d + 1) with d >= 1; got shape {gamma.shape}")
    if d is not None and dd != d:
        raise ValueError(f"gamma must have shape (d, d + 1) = {(d, d + 1)}; got shape {gamma.shape}")
    return gamma


def check_batch(queries: Any, features: Any, targets: Any | None = None):
    """Validate ``queries (n, d)``, ``features (n, d + 1)`` and optionally ``targets (n,)``."""
    queries = as_matrix("queries", queries, 2)
    n, d = queries.shape
    if n < 1 or d < 1:
        raise ValueError(f"queries must have shape (n, d) with n, d >= 1; got shape {queries.shape}")
    features = as_matrix("features", features, 2)
    if features.shape != (n, d + 1):
        raise ValueError(
            f"features must have shape (n, d + 1) = {(n, d + 1)} to match queries of shape "
            f"{queries.shape}; got shape {features.shape}"
        )
    if targets is None:
        return queries, features
    targets = as_matrix("targets", targets, 1)
    if targets.shape != (n,):
        raise ValueError(f"targets must have shape (n,) = {(n,)} to match queries; got shape {targets.shape}")
    return queries, features, targets


def check_unit_tasks(tasks: Any, d: int) -> np.ndarray:
    """Tasks of shape (k, d) whose rows have squared norm d (as :func:`lib.samplers.sample_tasks`)."""
    tasks = as_matrix("tasks", tasks, 2)
    if tasks.shape[0] < 1 or tasks.shape[1] != d:
        raise ValueError(f"tasks must have shape (k, d) = (k, {d}) with k >= 1; got shape {tasks.shape}")
    sq = np.einsum("kd,kd->k", tasks, tasks)
    if not np.allclose(sq, d, rtol=1e-8, atol=0.0):
        worst = sq[np.argmax(np.abs(sq - d))]
        raise ValueError(
            f"tasks must have rows of squared norm d = {d} (tasks on the sphere of radius sqrt(d), "
            f"as lib.samplers.sample_tasks draws them); found a row with squared norm {worst:.6g}"
        )
    return tasks


def check_tasks(tasks: Any, d: int | None = None, name: str = "tasks") -> np.ndarray | None:
    """``None`` or a task array of shape (k, d) with finite, non-zero rows.

    Parameters
    ----------
    tasks : None or array_like, shape (k, d)
        The task set (``None``: a fresh task per context).
    d : int, optional
        The required number of columns.
    name : str
        The argument's name, for the messages.

    Returns
    -------
    numpy.ndarray or None
        The tasks as a float array.
    """
    if tasks is None:
        return None
    arr = check_real(name, tasks)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be None or a 2-D array of shape (k, d) with k >= 1; got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"{name} must have d = {d} columns; got shape {arr.shape}")
    if np.any(np.einsum("kd,kd->k", arr, arr) == 0.0):
        raise ValueError(f"{name} must not contain a zero row (a task vector of norm 0)")
    return arr


def check_contexts(X: Any, y: Any, x_query: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts ``X (n, ell, d)``, labels ``y (n, ell)`` and queries ``x_query (n, d)``.

    Parameters
    ----------
    X, y, x_query : array_like
        The contexts, their labels and the query tokens.

    Returns
    -------
    (X, y, x_query) : tuple of numpy.ndarray
        Float arrays of matching shapes.
    """
    X = check_real("X", X)
    y = check_real("y", y)
    x_query = check_real("x_query", x_query)
    if X.ndim != 3 or min(X.shape) < 1:
        raise ValueError(f"X must have shape (n, ell, d) with n, ell, d >= 1; got shape {X.shape}")
    n, ell, d = X.shape
    if y.shape != (n, ell):
        raise ValueError(f"y must have shape (n, ell) = {(n, ell)} to match X; got shape {y.shape}")
    if x_query.shape != (n, d):
        raise ValueError(f"x_query must have shape (n, d) = {(n, d)} to match X; got shape {x_query.shape}")
    return X, y, x_query


def as_float_array(name: str, value: Any, ndim: int) -> np.ndarray:
    """``value`` as a finite float array with ``ndim`` dimensions (``name`` in the messages)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers; got {type(value).__name__}") from exc
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf entries)")
    return arr


def check_context_arrays(X: Any, y: Any, x_query: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts as arrays: tokens ``X`` (n, ell, d), labels ``y`` (n, ell), queries (n, d)."""
    X = as_float_array("X", X, 3)
    n, ell, d = X.shape
    if n < 1 or ell < 1 or d < 1:
        raise ValueError(f"X must have shape (n, ell, d) with n, ell, d >= 1; got shape {X.shape}")
    y = as_float_array("y", y, 2)
    if y.shape != (n, ell):
        raise ValueError(f"y must have shape (n, ell) = {(n, ell)} to match X; got shape {y.shape}")
    x_query = as_float_array("x_query", x_query, 2)
    if x_query.shape != (n, d):
        raise ValueError(f"x_query must have shape (n, d) = {(n, d)} to match X; got shape {x_query.shape}")
    return X, y, x_query
