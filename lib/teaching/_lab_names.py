"""How the lab checks of :mod:`lib.teaching.labs` name things in their messages.

A lambda given as an argument of a case is shown by its code
(``lambda t: np.maximum(t, 0.0)``), not as ``<lambda>``; and a library function that a
reader's function calls instead of replacing it is named through the module the lab's
reference names it by (e.g. ``lib.finite_size.summarize``, although it is defined in
``lib.finite_size.data``).
"""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable
from typing import Any

_LIBRARY = "lib"


def lambda_text(fn: Any) -> str | None:
    """The source of a lambda (``lambda t: np.maximum(t, 0.0)``), or None if unknown.

    The lambda is found in the lines that define it (several lambdas may share a line)
    as the longest text from a ``lambda`` keyword that parses as one lambda whose
    compiled code has the function's names, arguments and constants.

    Parameters
    ----------
    fn : callable
        A function, usually a lambda given as an argument of a lab's case.

    Returns
    -------
    str or None
        The lambda's code on one line, or None when its source cannot be read or found.
    """
    code = getattr(fn, "__code__", None)
    try:
        text = "".join(inspect.getsourcelines(fn)[0])
    except (OSError, TypeError):  # no source (typed at a prompt, or built at run time)
        return None
    start = text.find("lambda")
    while start != -1 and code is not None:
        for end in range(len(text), start, -1):
            piece = text[start:end]
            try:
                tree = ast.parse(piece, mode="eval")
            except SyntaxError:
                continue
            if not isinstance(tree.body, ast.Lambda):
                continue
            compiled = compile(piece, "<lambda>", "eval")
            inner = [c for c in compiled.co_consts if isinstance(c, types.CodeType)]
            key = lambda c: (c.co_names, c.co_varnames, c.co_consts)  # noqa: E731
            if inner and key(inner[0]) == key(code):
                return " ".join(piece.split())
            break  # the longest lambda from here is another one
        start = text.find("lambda", start + 1)
    return None


def callable_name(fn: Any, limit: int = 60) -> str:
    """The name of a callable argument of a case: a lambda's code, cut to ``limit``.

    Parameters
    ----------
    fn : callable
        The argument.
    limit : int, optional
        Longest name returned, in characters.

    Returns
    -------
    str
        ``fn.__name__``, or for a lambda its code (:func:`lambda_text`) when it is known.
    """
    name = getattr(fn, "__name__", type(fn).__name__)
    name = (lambda_text(fn) if name == "<lambda>" else None) or name
    return name if len(name) <= limit else name[: limit - 3] + "..."


def name_via(
    reference_fn: Any, obj: Any, referenced: Callable[[Any], list[Any]], readers: Callable[[Any], bool]
) -> str | None:
    """``<module>.<name>`` of ``obj`` through a module of the library that the lab's
    reference (a reader's lambda or wrapper: ``readers(reference_fn)``) reads, among
    ``referenced(reference_fn)``; None when there is none.

    Reading ``lib.spectral.f`` also reads ``lib``, which may re-export ``f``: the longest
    module path wins.

    Parameters
    ----------
    reference_fn : callable
        The lab's reference function.
    obj : callable
        The library function to name.
    referenced : callable
        Lists the objects a function's code names (``lib.teaching.labs._referenced``).
    readers : callable
        Whether a function is a reader's code, not the library's (``lib.teaching.labs._is_readers_code``).

    Returns
    -------
    str or None
        ``"lib.<module>.<name>"``, or None.
    """
    name = getattr(obj, "__name__", None)
    if name is None or not isinstance(reference_fn, types.FunctionType) or not readers(reference_fn):
        return None
    named = [
        m.__name__
        for m in referenced(reference_fn)
        if isinstance(m, types.ModuleType) and m.__name__.split(".")[0] == _LIBRARY and vars(m).get(name) is obj
    ]
    return f"{max(named, key=len)}.{name}" if named else None
