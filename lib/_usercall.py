"""The calls ``lib`` makes of a function a user supplies (a teacher, a link, a label map).

:func:`user_call` is the context of one call (it reports a failure, naming the function
and the argument, and keeps the function from writing into its input array);
:func:`check_returned` checks what the call returned. :func:`lib._checks.check_vectorized`
combines them; :func:`lib.teachers.as_link` uses them directly (it makes the call itself).
Both are re-exported by :mod:`lib._checks`.
"""

from __future__ import annotations

import contextlib
import reprlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["MAX_CALLEE", "callee_name", "check_returned", "user_call"]

#: The longest name of a user's function in a message (a longer ``repr`` is cut).
MAX_CALLEE = 120


def callee_name(f: Any) -> str:
    """``repr(f)``, cut to :data:`MAX_CALLEE` characters; a ``repr`` that raises is replaced."""
    try:
        text = reprlib.Repr(maxother=MAX_CALLEE).repr(f)
    except Exception:  # noqa: BLE001 - a user's __repr__ may raise anything
        text = f"<{type(f).__name__} object (its repr raised)>"
    return text if len(text) <= MAX_CALLEE else text[: MAX_CALLEE - 3] + "..."


@contextlib.contextmanager
def user_call(
    name: str, z: np.ndarray, *, callee: str = "it", call_error: type[Exception] = ValueError, quiet: bool = False
) -> Iterator[None]:
    """The context of one call of a user's vectorized function on an array.

    The caller makes the call in the ``with`` block, so the function does not travel here
    (:func:`lib.teachers.as_link`); shared are the report of a failure and ``quiet``.

    Parameters
    ----------
    name : str
        The argument's name, used in the message (``"teacher"``, ``"f"``).
    z : numpy.ndarray
        The array the function is called on (its shape is named in the message).
    callee : str, default "it"
        How the message names the function (its ``repr``).
    call_error : type of Exception, default ValueError
        Raised, from the original exception, when the call raises.
    quiet : bool, default False
        Run the block with floating-point warnings silenced.

    Yields
    ------
    None
        Control to the caller's block; an exception there becomes ``call_error``. While
        the block runs, ``z`` (a numpy array) is read-only: a function that writes into
        its input raises, and the caller's array is left as it was.

    Raises
    ------
    TypeError
        If ``call_error`` is not an ``Exception`` class.
    """
    if not (isinstance(call_error, type) and issubclass(call_error, Exception)):
        raise TypeError(f"user_call: call_error must be an Exception class; got {call_error!r}")
    callee = str(callee)
    if len(callee) > MAX_CALLEE:
        callee = callee[: MAX_CALLEE - 3] + "..."
    # the function must not write into its input: lib may use the array again (the probe
    # grid of lib.teachers.as_link is shared by every later probe in the process)
    frozen = isinstance(z, np.ndarray) and z.flags.writeable
    if frozen:
        z.flags.writeable = False
    try:
        if quiet:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        else:
            yield
    except Exception as exc:
        hint = ""
        if frozen and isinstance(exc, ValueError) and "read-only" in str(exc):
            hint = " (it writes into its input; compute a new array instead, e.g. np.maximum(z, 0))"
        raise call_error(
            f"{name} must be a vectorized function of a numpy array; calling {callee} on an array of "
            f"shape {np.shape(z)} raised {type(exc).__name__}: {exc}{hint}"
        ) from exc
    finally:
        if frozen:
            z.flags.writeable = True


def check_returned(
    name: str, out: Any, z: np.ndarray, *, what: str = "its input", check_finite: bool = True, hint: str = ""
) -> np.ndarray:
    """Check what a user's vectorized function returned on an array.

    Parameters
    ----------
    name : str
        The argument's name, used in the messages (``"teacher"``, ``"link"``).
    out : object
        What the function returned.
    z : numpy.ndarray
        The array it was called on.
    what : str, default "its input"
        How the messages name ``z`` (``"the labels"``).
    check_finite : bool, default True
        Whether NaN and inf are an error (else the caller reports them, with context).
    hint : str, default ""
        Appended to the message about a wrong shape.

    Returns
    -------
    numpy.ndarray
        ``out`` as a float array of ``z``'s shape that shares no memory with ``z``.

    Raises
    ------
    ValueError
        If ``out`` has another shape, is not real (bool, int pass; time deltas and masked
        entries do not) or is not finite.
    """
    if isinstance(out, np.ma.MaskedArray) and np.ma.is_masked(out):
        raise ValueError(f"{name} returned a masked array with masked entries; it must return plain numbers")
    try:
        out = np.asarray(out)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise ValueError(
            f"{name} must return an array of real numbers; np.asarray of its result failed: {exc}"
        ) from None
    if out.shape != np.shape(z):
        raise ValueError(
            f"{name} must return an array of the same shape as {what} (a vectorized "
            f"function); given shape {np.shape(z)} it returned shape {out.shape}{hint}"
        )
    if out.dtype.kind not in "biuf":  # numpy counts time deltas as integers
        raise ValueError(f"{name} must return real numbers; it returned dtype {out.dtype}")
    out = out.astype(float, copy=False)
    if np.may_share_memory(out, z):
        out = out.copy()
    if check_finite and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} returned non-finite values (NaN or inf) on {what}")
    return out
