"""Coding labs: check a reader's implementation against the library's.

A coding lab is an exercise in which the reader writes one piece of the model (a Hermite
coefficient by quadrature, the sampler of the context feature, the ridge fit of the
reduced parameter, ...) as a function, and a check cell compares that function with the
reference implementation in ``lib`` on a list of inputs::

    labs.check(my_coefficient, hermite.coefficients, cases, name="a_m by quadrature")

The check prints its verdict: ``PASS: ...`` when every output agrees with the
reference, one ``FAIL: ...`` line per case that disagrees (naming the output and the
entry, or the exception the reader's function raised), or ``NOT ATTEMPTED: ...`` while
the function is still a skeleton that returns ``None``.

Two editions use the same cells. In the instructor edition (the normal book build) the
skeleton is filled in with the reference solution and the check is *strict*: a failure
raises :class:`LabError`, so a broken solution or a changed library fails the build. In
the student edition the check is lenient: it prints its verdict and never raises for
the reader's code, so a notebook with unfinished or wrong labs runs to the end. The
student notebooks that ``make student`` writes switch to it themselves: their hidden
first cells call :func:`set_student_mode` (no environment variable is needed); the
environment variable ``LIB_LABS_STUDENT=1`` does the same for a whole process (the
grader, ``scripts/grade_labs.py``, sets it for the kernels it starts).

Used in: the coding labs in the Exercises sections of every chapter.
"""

from __future__ import annotations

import copy
import math
import numbers
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "STUDENT_ENV",
    "LabDefinitionError",
    "LabError",
    "check",
    "set_student_mode",
    "student_mode",
]

#: Name of the environment variable that switches the checks to the student edition.
STUDENT_ENV = "LIB_LABS_STUDENT"

# Set by set_student_mode (the student notebooks' hidden cell); None: ask STUDENT_ENV.
_student_override: bool | None = None


class LabError(AssertionError):
    """A coding lab's function disagrees with the reference (raised in strict mode)."""


class LabDefinitionError(LabError):
    """The lab itself is broken: its cases do not fit the reference function.

    Raised by :func:`check` in both editions (also in the student edition), since
    the reader cannot fix it: the reference raises on every case, or a case does not
    match the reference's signature. It is the lab author's bug, not a ``FAIL``.
    """


def set_student_mode(on: bool | None = True) -> None:
    """Switch the checks of this Python process to the student edition (or back).

    Parameters
    ----------
    on : bool or None, optional
        ``True`` (the default): lenient checks that print their verdict and never
        raise for the reader's code; ``False``: strict checks (the instructor
        edition); ``None``: decided by the environment variable ``LIB_LABS_STUDENT``
        again (see :func:`student_mode`).

    Raises
    ------
    TypeError
        If ``on`` is not ``True``, ``False`` or ``None``.

    Notes
    -----
    Used in: the hidden cell that ``make student`` puts at the top of every student
    notebook, so that the notebooks handed out carry their edition with them.
    """
    global _student_override
    if on is not None and not isinstance(on, bool):
        raise TypeError(f"on must be True, False or None; got {on!r}")
    _student_override = on


def student_mode() -> bool:
    """Return whether the checks run in the student edition.

    Returns
    -------
    bool
        The value last given to :func:`set_student_mode` (the student notebooks call
        it in their hidden first cells); if none was given, ``True`` when the
        environment variable ``LIB_LABS_STUDENT`` is ``"1"``, ``False`` otherwise
        (the instructor edition).

    Used in: :func:`check`.
    """
    if _student_override is not None:
        return _student_override
    return os.environ.get(STUDENT_ENV, "").strip() == "1"


class _Mismatch(Exception):
    """Internal: carries the description of the first disagreement."""


def _describe(value: Any, limit: int = 60) -> str:
    """Short description of an argument or a result, for the messages."""
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            text = np.array2string(value, precision=6, separator=", ")
            return f"array({text})" if len(text) <= limit else f"array{value.shape}"
        return f"array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, np.random.Generator):
        return "Generator"
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v, limit) for v in value) + ")"
    try:
        text = repr(value)
    except Exception:  # a reader's object whose repr itself raises
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_case(case: tuple | dict) -> str:
    if isinstance(case, Mapping):
        return ", ".join(f"{k}={_describe(v)}" for k, v in case.items())
    return ", ".join(_describe(v) for v in case)


def _copied(case: tuple | dict) -> tuple | dict:
    """A deep copy of a case, so that both functions see the same inputs.

    A :class:`numpy.random.Generator` in a case is copied with its state, so the
    reader's function and the reference draw the same numbers; copying also keeps a
    function that modifies its inputs in place from changing the other call's inputs.
    """
    try:
        return copy.deepcopy(case)
    except Exception:  # an argument that cannot be copied is passed as it is
        return case


def _call(fn: Callable, case: tuple | dict) -> Any:
    args = _copied(case)
    if isinstance(args, Mapping):
        return fn(**args)
    return fn(*args)


def _where_raised(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if len(frames) < 2:
        return ""
    frame = frames[-1]
    line = (frame.line or "").strip()
    return f" (in {frame.name}, line {frame.lineno}: {line})" if line else ""


def _is_numeric(value: Any) -> bool:
    """Whether ``value`` is a number or an array of numbers (not strings or objects)."""
    if isinstance(value, (bool, np.bool_, numbers.Number)):
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind in "biufc"
    if isinstance(value, list):
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError):
            return False
        return arr.dtype.kind in "biufc"
    return False


def _exc_text(exc: BaseException) -> str:
    """``Type: message`` of an exception, even when its ``str`` itself raises."""
    try:
        message = str(exc)
    except Exception:
        message = "<message could not be shown>"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _binds(fn: Callable, case: tuple | dict) -> str | None:
    """``None`` if ``case`` fits the signature of ``fn`` (or it is unknown), else why."""
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: cannot tell
        return None
    try:
        if isinstance(case, Mapping):
            signature.bind(**case)
        else:
            signature.bind(*case)
    except TypeError as exc:
        return str(exc)
    return None


def _compare(got: Any, expected: Any, where: str, rtol: float, atol: float) -> float:
    """Raise :class:`_Mismatch` at the first disagreement; return the max abs error."""
    label = where or "the output"
    if expected is None:
        if got is not None:
            raise _Mismatch(f"{label} should be None; got {_describe(got)}")
        return 0.0
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            raise _Mismatch(f"{label} should be a dict; got {type(got).__name__}")
        if set(got) != set(expected):
            raise _Mismatch(f"{label} should have the keys {sorted(map(str, expected))}; got {sorted(map(str, got))}")
        return max([_compare(got[k], expected[k], f"{label}[{k!r}]", rtol, atol) for k in expected] + [0.0])
    if isinstance(expected, tuple) or (isinstance(expected, list) and not _is_numeric(expected)):
        if not isinstance(got, (tuple, list)):
            raise _Mismatch(f"{label} should be a tuple of {len(expected)} values; got {type(got).__name__}")
        if len(got) != len(expected):
            raise _Mismatch(f"{label} should have {len(expected)} entries; got {len(got)}")
        return max([_compare(g, e, f"{label}[{i}]", rtol, atol) for i, (g, e) in enumerate(zip(got, expected))] + [0.0])
    if isinstance(expected, (str, bytes)):
        if got != expected:
            raise _Mismatch(f"{label} should be {expected!r}; got {_describe(got)}")
        return 0.0
    if not _is_numeric(expected):
        if got != expected:
            raise _Mismatch(f"{label} should be {_describe(expected)}; got {_describe(got)}")
        return 0.0
    if got is None:
        raise _Mismatch(f"{label} is None; the reference returns a value here")
    if not _is_numeric(got):
        kind = type(got).__name__
        if isinstance(got, (np.ndarray, np.generic)):
            kind += f" of dtype {got.dtype}"
        raise _Mismatch(f"{label} should be a number or an array; got {kind} {_describe(got)}, which is not numeric")
    exp = np.asarray(expected)
    arr = np.asarray(got)
    if arr.shape != exp.shape:
        raise _Mismatch(f"{label} should have shape {exp.shape}; got shape {arr.shape}")
    if exp.size == 0:
        return 0.0
    exp_c = exp.astype(complex) if exp.dtype.kind == "c" else exp.astype(float)
    arr_c = arr.astype(complex) if arr.dtype.kind == "c" else arr.astype(float)
    nan_exp, nan_got = np.isnan(exp_c), np.isnan(arr_c)
    bad = nan_exp != nan_got
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(arr_c - exp_c)
        same_inf = np.isinf(exp_c) & (arr_c == exp_c)
        ok = (diff <= atol + rtol * np.abs(exp_c)) | same_inf | (nan_exp & nan_got)
    bad |= ~ok
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where_txt = f" at index {index}" if exp.ndim else ""
        g, e = arr_c[index], exp_c[index]
        finite = np.isfinite(diff) & ~(nan_exp | nan_got)
        worst = float(np.max(diff[finite])) if np.any(finite) else math.nan
        raise _Mismatch(
            f"{label} differs from the reference{where_txt}: got {g:.10g}, expected "
            f"{e:.10g} ({int(np.sum(bad))} of {exp.size} entries outside "
            f"|got - expected| <= {atol:g} + {rtol:g} |expected|; largest absolute "
            f"error {worst:.3g})"
        )
    finite = np.isfinite(diff)
    return float(np.max(diff[finite])) if np.any(finite) else 0.0


def _checked_cases(cases: Any) -> list[tuple | dict]:
    if isinstance(cases, (str, bytes, Mapping)) or not isinstance(cases, Sequence):
        raise TypeError(
            "cases must be a list of cases, each a tuple of positional arguments or a "
            f"dict of keyword arguments; got {type(cases).__name__}"
        )
    if len(cases) == 0:
        raise ValueError("cases must contain at least one case; got an empty list")
    out = []
    for i, case in enumerate(cases):
        if not isinstance(case, (tuple, Mapping)):
            raise TypeError(
                f"cases[{i}] must be a tuple of positional arguments or a dict of "
                f"keyword arguments; got {_describe(case)} of type "
                f"{type(case).__name__}"
                " (write a single argument x as (x,))"
            )
        out.append(case)
    return out


def _checked_tolerance(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number >= 0; got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return value


def check(
    student_fn: Callable[..., Any],
    reference_fn: Callable[..., Any],
    cases: Sequence[tuple | dict],
    *,
    name: str,
    rtol: float = 1e-8,
    atol: float = 0.0,
    strict: bool | None = None,
) -> None:
    r"""Compare a reader's function with the reference on every case; print a verdict.

    Each case is passed to both functions (a tuple as positional arguments, a dict as
    keyword arguments; each call gets its own deep copy, so a
    :class:`numpy.random.Generator` in a case gives both functions the same draws). The
    outputs agree when they have the same structure (tuples, lists and dicts are
    compared entry by entry), every array has the reference's shape, and every number
    satisfies

    .. math::

        |\mathrm{got} - \mathrm{expected}| \le \mathrm{atol}
        + \mathrm{rtol}\,|\mathrm{expected}|,

    with NaN matching NaN and an infinity matching the same infinity. When the
    reference raises on a case, the reader's function must raise an exception of the
    same type there.

    The verdict is printed as one line:

    - ``PASS: <name>: ...`` when every case agrees;
    - ``FAIL: <name>: case k of n (<arguments>): ...``, one line for every case that
      disagrees, naming the output and the entry, or the exception the reader's
      function raised and the line that raised it;
    - ``NOT ATTEMPTED: <name>: ...`` when the reader's function returned ``None`` on
      every case (the skeleton of the student edition).

    Parameters
    ----------
    student_fn : callable
        The reader's implementation (in the instructor edition, the reference solution
        written in the lab cell).
    reference_fn : callable
        The library function it must agree with, or a thin ``lambda`` around it.
    cases : sequence of tuple or dict
        At least one case; each a tuple of positional arguments or a dict of keyword
        arguments.
    name : str
        What the lab implements, quoted in the verdict.
    rtol, atol : float, optional
        Relative and absolute tolerances (>= 0); defaults ``1e-8`` and ``0``.
    strict : bool or None, optional
        Raise :class:`LabError` on ``FAIL`` and on ``NOT ATTEMPTED``. ``None`` (the
        default) means strict unless in the student edition (see
        :func:`student_mode`): the instructor edition must execute a correct
        solution, the student edition runs through unfinished and wrong labs.

    Returns
    -------
    None
        The verdict is printed.

    Raises
    ------
    LabError
        In strict mode, when the verdict is ``FAIL`` or ``NOT ATTEMPTED``.
    LabDefinitionError
        In both editions, when the lab itself is broken: a case does not fit the
        reference's signature, or the reference raises on every case.
    TypeError, ValueError
        If an argument is invalid (not callable, no cases, a case that is neither a
        tuple nor a dict, a negative tolerance, an empty name).

    Examples
    --------
    >>> import numpy as np
    >>> check(lambda x: 2.0 * x, lambda x: x + x, [(1.0,), (np.arange(3.0),)],
    ...       name="doubling")
    PASS: doubling: agrees with the reference on all 2 cases (largest absolute error 0).

    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`the model </book/linear/model>`,
    :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.
    Through other functions of ``lib``: every chapter.
    """
    if not callable(student_fn):
        raise TypeError(f"student_fn must be callable; got {_describe(student_fn)}")
    if not callable(reference_fn):
        raise TypeError(f"reference_fn must be callable; got {_describe(reference_fn)}")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string; got {name!r}")
    rtol = _checked_tolerance("rtol", rtol)
    atol = _checked_tolerance("atol", atol)
    if strict is not None and not isinstance(strict, bool):
        raise TypeError(f"strict must be True, False or None; got {strict!r}")
    strict = (not student_mode()) if strict is None else strict
    cases = _checked_cases(cases)
    n = len(cases)

    def verdict(status: str, text: str | list[str]) -> None:
        lines = [text] if isinstance(text, str) else text
        message = "\n".join(f"{status}: {name}: {line}" for line in lines)
        print(message)
        if strict and status != "PASS":
            raise LabError(message)

    def lab_bug(text: str) -> None:
        message = f"LAB ERROR: {name}: {text} This is a bug in the lab, not in your code."
        print(message)
        raise LabDefinitionError(message)

    for k, case in enumerate(cases, start=1):
        why = _binds(reference_fn, case)
        if why is not None:
            lab_bug(
                f"case {k} of {n} ({_describe_case(case)}) does not fit the reference function's arguments ({why})."
            )

    results = []
    for k, case in enumerate(cases, start=1):
        try:
            expected, ref_exc = _call(reference_fn, case), None
        except Exception as exc:  # the case is one where the reference rejects input
            expected, ref_exc = None, exc
        try:
            got, exc = _call(student_fn, case), None
        except KeyboardInterrupt:  # the reader stopping the cell is not a verdict
            raise
        except BaseException as err:  # SystemExit, GeneratorExit, ...: a FAIL below
            got, exc = None, err
        results.append((k, case, expected, ref_exc, got, exc))

    if all(r[3] is not None for r in results):
        first = results[0][3]
        lab_bug(f"the reference raises on every case (case 1 of {n}: {_exc_text(first)}), so no case checks a value.")

    attempted = any(got is not None or exc is not None for *_, got, exc in results)
    if not attempted and any(r[3] is None and r[2] is not None for r in results):
        verdict(
            "NOT ATTEMPTED",
            "your function returned None on every case; write its body (replace the `...`) and run this cell again.",
        )
        return

    worst = 0.0
    failures = []  # one FAIL line per case that disagrees
    for k, case, expected, ref_exc, got, exc in results:
        head = f"case {k} of {n} ({_describe_case(case)})"
        if ref_exc is not None:
            if exc is None:
                failures.append(
                    f"{head}: the reference raises {type(ref_exc).__name__} "
                    f"({ref_exc}) here, but your function returned {_describe(got)}."
                )
            elif not isinstance(exc, type(ref_exc)):
                failures.append(
                    f"{head}: the reference raises {type(ref_exc).__name__} here, "
                    f"your function raised {_exc_text(exc)}."
                )
            continue
        if exc is not None:
            failures.append(f"{head}: your function raised {_exc_text(exc)}{_where_raised(exc)}.")
            continue
        try:
            worst = max(worst, _compare(got, expected, "", rtol, atol))
        except _Mismatch as mismatch:
            failures.append(f"{head}: {mismatch}.")
        except Exception as err:  # an output that cannot even be compared
            failures.append(
                f"{head}: your output {_describe(got)} of type {type(got).__name__} "
                f"cannot be compared with the reference ({_exc_text(err)})."
            )
    if failures:
        verdict("FAIL", failures)
        return
    verdict(
        "PASS",
        f"agrees with the reference on all {n} case{'s' if n != 1 else ''} (largest absolute error {worst:.3g}).",
    )
    return
