"""Coding labs: check a reader's implementation against the library's.

A coding lab is an exercise in which the reader writes one piece of the model (a Hermite
coefficient by quadrature, the sampler of the context feature, the ridge fit of the
reduced parameter, ...) as a function, and a check cell compares that function with the
reference implementation in ``lib`` on a list of inputs::

    labs.check(my_coefficient, hermite.coefficients, cases, name="a_m by quadrature")

The check prints its verdict: ``PASS: ...`` when every output agrees with the
reference, ``FAIL: ...`` and a line per case that disagrees (naming the output and the
entry, or the exception the reader's function raised), or ``NOT ATTEMPTED: ...`` while
the function is still a skeleton that returns ``None``.

A function that merely calls the reference is not accepted, whatever it returns: when
the reader's function is the reference, a ``functools.partial`` or wrapper of it, or
its code (or the code of the reader's helpers it uses) calls the reference under any
name, the verdict is the single line ``FAIL: <name>: not accepted: your function calls
lib.<module>.<function>, the function this lab asks you to write.`` and no case is run
(see :func:`delegated_call`). Other functions of ``lib``, numpy and scipy may be used.
This holds in both editions, so the book's own reference solutions are independent of
the functions they are checked against.

Two editions use the same cells. In the instructor edition (the normal book build) the
skeleton is filled in with the reference solution and the check is *strict*: a failure
raises :class:`LabError`, so a broken solution or a changed library fails the build. In
the student edition the check is lenient: it prints its verdict and never raises for
the reader's code, so a notebook with unfinished or wrong labs runs to the end. The
student notebooks that ``make student`` writes switch to it themselves: their hidden
first cells call :func:`set_student_mode` (no environment variable is needed); the
environment variable ``LIB_LABS_STUDENT=1`` does the same for a whole process (the
grader, ``scripts/grade_labs.py``, sets it for the kernels it starts).

When ``LIB_LABS_RECORD`` names a file, each check appends its verdict there as a JSON
line ``{"lab", "status", "lines"}``; the grader reads it, not the printed text.

Used in: the coding labs in the Exercises sections of every chapter.
"""

from __future__ import annotations

import copy
import dis
import functools
import inspect
import json
import math
import numbers
import os
import sys
import sysconfig
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import _lab_names

__all__ = [
    "RECORD_ENV",
    "STUDENT_ENV",
    "LabDefinitionError",
    "LabError",
    "check",
    "delegated_call",
    "set_student_mode",
    "student_mode",
]

#: Name of the environment variable that switches the checks to the student edition.
STUDENT_ENV = "LIB_LABS_STUDENT"

#: The environment variable naming the file each check appends its verdict to (grader).
RECORD_ENV = "LIB_LABS_RECORD"

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


def _record(name: str, status: str, lines: list[str]) -> None:
    """Append a check's verdict to the file named by ``LIB_LABS_RECORD``, if it is set."""
    target = os.environ.get(RECORD_ENV, "").strip()
    if not target:
        return
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"lab": name, "status": status, "lines": list(lines)}) + "\n")


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
        return _lab_names.callable_name(value, limit)
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


# --- delegation: a reader's function that calls the library function it should replace

_LIBRARY = "lib"
# Code that is not the reader's: the standard library and installed packages (numpy,
# scipy, ...). Their functions are not searched for calls of the reference.
_INSTALLED = tuple(
    {
        sysconfig.get_paths()[key]
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if key in sysconfig.get_paths()
    }
)
_MAX_VISITS = 2000  # objects looked at per search: a bound, not a limit met in practice
_MAX_ITEMS = 100  # entries looked at in a tuple, list, set or dict the code refers to
# The bytecode instructions that _named_in follows (others leave the top of the stack unknown)
_GLOBAL_OPS = {"LOAD_GLOBAL", "LOAD_NAME"}
_LOCAL_OPS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLASSDEREF"}
_ATTRIBUTE_OPS = {"LOAD_ATTR", "LOAD_METHOD"}
_STORE_OPS = {"STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL"}


def _in_library(obj: Any) -> bool:
    """Whether ``obj`` is a function or callable object defined in ``lib``."""
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and (module == _LIBRARY or module.startswith(_LIBRARY + "."))


def _is_readers_code(fn: types.FunctionType) -> bool:
    """Whether ``fn`` is neither in ``lib`` nor in the standard library or a package."""
    filename = fn.__code__.co_filename
    return not _in_library(fn) and not filename.startswith(_INSTALLED)


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and the code of the functions, lambdas and classes defined inside it."""
    out, todo = [], [code]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return out


def _referenced(fn: types.FunctionType) -> list[Any]:
    """The objects that the code of ``fn`` (and of the functions defined in it) names.

    Its closure variables, default values and ``__wrapped__``; in its code, every global
    it reads, every module it imports and every name it imports from one, and every
    attribute it reads of a module, along chains such as ``lib.theory.x`` or
    ``H.coefficients`` (``H`` a module under another name, also a local one). An
    attribute of anything that is not a module is not followed.
    """
    closure = [c.cell_contents if _has_contents(c) else None for c in fn.__closure__ or ()]
    objects: list[Any] = [c for c in closure if c is not None]
    objects += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    if hasattr(fn, "__wrapped__"):
        objects.append(fn.__wrapped__)
    for code in _code_objects(fn.__code__):
        local = dict(zip(code.co_freevars, closure)) if code is fn.__code__ else {}
        objects += _named_in(code, fn.__globals__, local)
    return objects


def _named_in(code: types.CodeType, globals_: Mapping[str, Any], local: dict[str, Any]) -> list[Any]:
    """The objects one code object names, following module attributes (see _referenced)."""
    builtins = globals_.get("__builtins__", {})
    builtins = vars(builtins) if isinstance(builtins, types.ModuleType) else builtins
    named: list[Any] = []
    current: Any = None  # the object on top of the stack, when it is known
    importing: Any = None  # the module the IMPORT_FROMs that follow read from
    fromlist: Any = None
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        if op == "LOAD_CONST":
            fromlist, current = arg, None
            continue
        if op in _GLOBAL_OPS:
            current = local.get(arg) if op == "LOAD_NAME" and arg in local else globals_.get(arg, builtins.get(arg))
        elif op in _LOCAL_OPS:
            current = local.get(arg)
        elif op == "IMPORT_NAME":
            name = arg if fromlist else arg.split(".")[0]  # ``import a.b`` binds ``a``
            current = importing = sys.modules.get(name)
        elif op == "IMPORT_FROM":
            current = vars(importing).get(arg) if isinstance(importing, types.ModuleType) else None
        elif op in _ATTRIBUTE_OPS:  # vars: reading the attribute triggers no lazy import
            current = vars(current).get(arg) if isinstance(current, types.ModuleType) else None
        elif op in _STORE_OPS:
            if current is not None:
                local[arg] = current
            current = None
            continue
        else:
            current = None
        if current is not None:
            named.append(current)
    return named


def _has_contents(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return False
    return True


def _children(obj: Any) -> list[Any]:
    """What a call of ``obj`` may call in turn, one step down (see :func:`_library_calls`)."""
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, types.MethodType):
        return [obj.__func__]
    if isinstance(obj, types.FunctionType):
        return _referenced(obj) if _is_readers_code(obj) else []
    if isinstance(obj, (tuple, list, set, frozenset)):
        return list(obj)[:_MAX_ITEMS]
    if isinstance(obj, dict):
        return list(obj.values())[:_MAX_ITEMS]
    if callable(obj) and not isinstance(obj, type):  # an instance with a __call__ method
        call = getattr(type(obj), "__call__", None)
        return [call] if isinstance(call, types.FunctionType) else []
    return []


def _library_calls(fn: Callable[..., Any]) -> list[Any]:
    """The functions of ``lib`` that ``fn`` refers to, directly or through the reader's code.

    The search follows ``functools.partial`` objects, bound methods, callable objects,
    and the code of every function that is neither in ``lib`` nor installed (so the
    reader's own helpers, lambdas and wrappers), through their globals, closures,
    defaults, imports and the attributes they read of modules. It stops at the first
    function of ``lib`` on each path (that function is reported, not searched) and does
    not search numpy, scipy or the standard library. A name computed at run time
    (``getattr(module, "fit_" + "gamma")``) is not seen.
    """
    found: list[Any] = []
    seen: set[int] = set()
    todo = [fn]
    while todo and len(seen) < _MAX_VISITS:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, str, bytes, numbers.Number, np.ndarray)):
            continue
        seen.add(id(obj))
        if callable(obj) and _in_library(obj) and not isinstance(obj, functools.partial):
            found.append(obj)
            continue
        try:
            todo.extend(_children(obj))
        except Exception:  # an exotic object that cannot be inspected: nothing found there
            continue
    return found


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, types.MethodType) and isinstance(b, types.MethodType):
        return a.__func__ is b.__func__ and a.__self__ is b.__self__
    return False


def _public_name(obj: Any) -> str:
    """``lib.<module>.<name>`` of a library function: the shortest module path that has it."""
    name = getattr(obj, "__name__", None) or type(obj).__name__
    module = getattr(obj, "__module__", _LIBRARY)
    parts = module.split(".")
    for i in range(min(2, len(parts)), len(parts) + 1):
        path = ".".join(parts[:i])
        if _same(vars(sys.modules[path]).get(name) if path in sys.modules else None, obj):
            return f"{path}.{name}"
    return f"{module}.{name}"


def delegated_call(student_fn: Callable[..., Any], reference_fn: Callable[..., Any]) -> str | None:
    """Name the reference function that a reader's function calls instead of replacing it.

    The functions of ``lib`` that ``reference_fn`` refers to (the function itself, or
    the library functions that a ``lambda``, wrapper or ``functools.partial`` around it
    calls) are the functions the lab asks the reader to write. ``student_fn`` delegates
    when it is one of them, or a ``functools.partial``, bound method or callable object
    around one, or when its code refers to one: by name, under an alias (``from
    lib.attention import fit_gamma as fit``), as an attribute of a module
    (``attention.fit_gamma``, ``lib.attention.fit_gamma``), or through the reader's own
    helper functions, closures and defaults, searched recursively. Other functions of
    ``lib``, numpy, scipy and the standard library are allowed; the code of ``lib`` and
    of installed packages is not searched.

    Parameters
    ----------
    student_fn : callable
        The reader's function.
    reference_fn : callable
        The lab's reference: a function of ``lib``, or a thin wrapper around one.

    Returns
    -------
    str or None
        ``"lib.<module>.<name>"`` of the first reference function that ``student_fn``
        refers to, or ``None`` if it refers to none (also when ``reference_fn`` uses no
        function of ``lib``).

    Notes
    -----
    The search reads the code, it does not run it: a reference reached through a name
    computed at run time (``getattr``, ``eval``, ``importlib``) or through an attribute
    of an object that is not a module (a method of a ``lib`` object) is not found, nor
    is another function of ``lib`` that computes the same thing or calls the reference
    itself; a function that refers to the reference on a branch it never takes is still
    reported. Every function of ``lib`` that ``reference_fn`` names counts as the
    reference, so a lab's reference should name only the function the lab asks for.
    Used in: :func:`check`.

    Examples
    --------
    >>> import functools
    >>> from lib import attention
    >>> delegated_call(functools.partial(attention.fit_gamma, method="dense"), attention.fit_gamma)
    'lib.attention.fit_gamma'
    >>> delegated_call(lambda x: 2.0 * x, attention.fit_gamma) is None
    True
    """
    if not callable(student_fn):
        raise TypeError(f"student_fn must be callable; got {_describe(student_fn)}")
    if not callable(reference_fn):
        raise TypeError(f"reference_fn must be callable; got {_describe(reference_fn)}")
    targets = _library_calls(reference_fn)
    if not targets:
        return None
    for obj in _library_calls(student_fn):
        if any(_same(obj, target) for target in targets):
            return _lab_names.name_via(reference_fn, obj, _referenced, _is_readers_code) or _public_name(obj)
    return None


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
    also_forbidden: Sequence[Callable[..., Any]] = (),
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

    with NaN matching NaN and an infinity matching the same infinity. Where the reference
    raises, the reader's function must raise an exception of the same type.

    The verdict is printed as one line (a ``FAIL`` of several cases lists them below it):

    - ``PASS: <name>: ...`` when every case agrees;
    - ``FAIL: <name>: case k of n (<arguments>): ...`` (naming the output and the entry,
      or the exception raised and its line); if m > 1 cases disagree, ``FAIL: <name>: m
      of n cases disagree with the reference:`` and an indented ``case k ...`` line each;
    - ``NOT ATTEMPTED: <name>: ...`` when the reader's function returned ``None`` on
      every case (the student edition's skeleton);
    - ``FAIL: <name>: not accepted: your function calls lib.<module>.<function>, the
      function this lab asks you to write.``, before any case is run, when the reader's
      function delegates to a library function that ``reference_fn`` calls (it is that
      function, a ``functools.partial`` or wrapper of it, or its code calls it, also
      under another name or through the reader's own helpers; see
      :func:`delegated_call`). The same in both editions. Likewise
      ``FAIL: <name>: not accepted: your function calls lib.<module>.<function>, a
      library function that computes what this lab asks you to write.`` when it calls
      one of ``also_forbidden``.

    Parameters
    ----------
    student_fn : callable
        The reader's implementation (in the instructor edition, the reference solution
        written in the lab cell).
    reference_fn : callable
        The library function it must agree with, or a thin ``lambda``, wrapper or
        ``functools.partial`` around it; the functions of ``lib`` it calls are the ones
        ``student_fn`` may not call.
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
    also_forbidden : sequence of callable, optional
        Further functions of ``lib`` that compute the same thing as the reference (for
        instance a second implementation of it) and that ``student_fn`` may not call
        either; empty by default.

    Returns
    -------
    None
        The verdict is printed (and recorded if ``LIB_LABS_RECORD`` is set).

    Raises
    ------
    LabError
        In strict mode, when the verdict is ``FAIL`` (also ``not accepted``) or
        ``NOT ATTEMPTED``.
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
    if isinstance(also_forbidden, (str, bytes)) or not isinstance(also_forbidden, Sequence):
        raise TypeError(f"also_forbidden must be a list of functions; got {_describe(also_forbidden)}")
    for i, fn in enumerate(also_forbidden):
        if not callable(fn):
            raise TypeError(f"also_forbidden[{i}] must be callable; got {_describe(fn)}")
    cases = _checked_cases(cases)
    n = len(cases)

    def verdict(status: str, text: str | list[str]) -> None:
        lines = [text] if isinstance(text, str) else text
        many = f"{len(lines)} of {n} cases disagree with the reference:\n    " if len(lines) > 1 else ""
        message = f"{status}: {name}: {many}" + "\n    ".join(lines)  # one verdict, its cases below
        print(message)
        _record(name, status, lines)
        if strict and status != "PASS":
            raise LabError(message)

    def lab_bug(text: str) -> None:
        message = f"LAB ERROR: {name}: {text} This is a bug in the lab, not in your code."
        print(message)
        _record(name, "LAB ERROR", [f"{text} This is a bug in the lab, not in your code."])
        raise LabDefinitionError(message)

    for k, case in enumerate(cases, start=1):
        why = _binds(reference_fn, case)
        if why is not None:
            lab_bug(
                f"case {k} of {n} ({_describe_case(case)}) does not fit the reference function's arguments ({why})."
            )

    delegate = delegated_call(student_fn, reference_fn)
    if delegate is not None:
        verdict("FAIL", f"not accepted: your function calls {delegate}, the function this lab asks you to write.")
        return
    for fn in also_forbidden:
        delegate = delegated_call(student_fn, fn)
        if delegate is not None:
            verdict(
                "FAIL",
                f"not accepted: your function calls {delegate}, a library function that computes what this lab "
                "asks you to write.",
            )
            return

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
    failures = []  # a line per case that disagrees, under one FAIL
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
