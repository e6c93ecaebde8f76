"""Markdown tables for the chapters, built from columns of numbers.

A chapter shows a table by passing its columns to :func:`markdown_table` and displaying
the result with ``IPython.display.Markdown``, instead of assembling the rows with
f-strings in every notebook; :func:`plus_minus` writes the ``x ± se`` cells.

Part of the teaching layer (with :mod:`lib.teaching.claims` and :mod:`lib.teaching.plotting`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lib._checks import check_choice

__all__ = ["markdown_table", "plus_minus", "changed_params"]

_ALIGN = {"left": ":---", "right": "---:", "center": ":---:"}
_NBSP = "\u00a0"


def _cell(value: Any, fmt: str | Callable[[Any], str] | None) -> str:
    if fmt is None:
        text = value if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)
    elif callable(fmt):
        text = fmt(value)
    else:
        text = format(value, fmt)
    return str(text).replace("|", r"\|").replace("\n", " ")


def _pairs(columns: Any) -> list[tuple[str, Sequence[Any]]]:
    """The (header, values) pairs of ``columns``: a mapping or a sequence of pairs."""
    if isinstance(columns, Mapping):
        return list(columns.items())
    if isinstance(columns, Sequence) and not isinstance(columns, str):
        pairs = list(columns)
        if all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            return pairs
    raise TypeError(
        "columns must be a mapping from header to values or a sequence of (header, values) "
        f"pairs; got {type(columns).__name__}"
    )


def markdown_table(
    columns: Mapping[str, Sequence[Any]] | Sequence[tuple[str, Sequence[Any]]],
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    align: str | Mapping[str, str] = "right",
) -> str:
    """A GitHub/MyST Markdown table from named columns.

    Parameters
    ----------
    columns : mapping of str to sequence, or sequence of (str, sequence) pairs
        Header text to the column's values, in display order; all columns have the same
        length (at least one row). Pairs allow two columns with the same header.
    formats : mapping of str to str or callable, optional
        Per header, a format specification (``".3f"``, applied with the built-in
        ``format``) or a function from the value to its text; it applies to every column
        with that header. Columns without one show strings as they are, floats with
        ``"g"`` and anything else with :class:`str`.
    align : {"right", "left", "center"} or mapping of str to these, default "right"
        Alignment of every column, or per header (missing headers are right-aligned).

    Returns
    -------
    str
        The table, one line per row, header and separator first. A ``|`` inside a cell
        is escaped.

    Raises
    ------
    ValueError
        If there are no columns, the columns differ in length, a format or alignment
        names a column that does not exist, or an alignment is not one of the three.
    TypeError
        If ``columns`` is neither a mapping nor a sequence of (header, values) pairs.

    See Also
    --------
    plus_minus : the text of a column of values with their standard errors.
    lib.teaching.claims.claim : assert the sentence a table supports.

    Examples
    --------
    >>> print(markdown_table({"d": [50, 100], "e": [0.51234, 0.5]}, formats={"e": ".3f"}))
    | d | e |
    | ---: | ---: |
    | 50 | 0.512 |
    | 100 | 0.500 |
    """
    pairs = _pairs(columns)
    if not pairs:
        raise ValueError("columns must have at least one column; got none")
    names = [name for name, _ in pairs]
    lengths = [len(values) for _, values in pairs]
    if len(set(lengths)) != 1:
        raise ValueError(f"columns must all have the same length; got lengths {dict(zip(names, lengths))}")
    formats = dict(formats or {})
    aligns = {name: align for name in names} if isinstance(align, str) else {n: "right" for n in names} | dict(align)
    for what, given in (("formats", formats), ("align", aligns)):
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ValueError(f"{what} names columns that do not exist: {unknown}; columns are {names}")
    for n, a in aligns.items():
        check_choice("align" if isinstance(align, str) else f"align of column {n!r}", a, _ALIGN)
    lines = [
        "| " + " | ".join(_cell(n, None) for n in names) + " |",
        "| " + " | ".join(_ALIGN[aligns[n]] for n in names) + " |",
    ]
    for i in range(lengths[0]):
        lines.append("| " + " | ".join(_cell(values[i], formats.get(n)) for n, values in pairs) + " |")
    return "\n".join(lines)


def plus_minus(
    values: float | Sequence[float],
    errors: float | Sequence[float],
    fmt: str = ".4f",
    unit: str = "",
    nowrap: bool = False,
) -> str | list[str]:
    """Estimates with their standard errors as text, ``"x ± se"``.

    Parameters
    ----------
    values : float or sequence of float
        The estimates.
    errors : float or sequence of float
        Their standard errors (or half-widths), one per value.
    fmt : str, default ".4f"
        Format specification of the values (applied with the built-in ``format``). The
        errors use the same one without a sign option (``"+.2f"`` shows ``+0.12 ± 0.05``).
    unit : str, default ""
        Text after each cell, separated by a space (``"%"`` gives ``"+0.12 ± 0.05 %"``).
    nowrap : bool, default False
        Join with non-breaking spaces, so that a line never breaks inside ``x ± se``.

    Returns
    -------
    str or list of str
        The text of one estimate if ``values`` and ``errors`` are numbers; otherwise one
        cell per value, to pass as a column of :func:`markdown_table`.

    Raises
    ------
    ValueError
        If ``values`` and ``errors`` differ in length, or one is a number and the other
        a sequence.

    See Also
    --------
    markdown_table : the table these cells go into.

    Examples
    --------
    >>> plus_minus([0.51234, -0.1], [0.0012, 0.05], fmt="+.3f", unit="%")
    ['+0.512 ± 0.001 %', '-0.100 ± 0.050 %']
    >>> plus_minus(1.5, 0.25, fmt=".2f")
    '1.50 ± 0.25'
    """
    scalar = np.ndim(values) == 0, np.ndim(errors) == 0
    if scalar[0] != scalar[1]:
        raise ValueError(
            f"values and errors must both be numbers or both sequences; got ndim "
            f"{np.ndim(values)} and {np.ndim(errors)}"
        )
    space = _NBSP if nowrap else " "
    error_fmt = fmt.replace("+", "").replace(" ", "")
    tail = f"{space}{unit}" if unit else ""

    def text(v: float, e: float) -> str:
        return f"{format(v, fmt)}{space}±{space}{format(e, error_fmt)}{tail}"

    if scalar[0]:
        return text(values, errors)
    values, errors = list(values), list(errors)
    if len(values) != len(errors):
        raise ValueError(
            f"values and errors must have the same length; got {len(values)} values and {len(errors)} errors"
        )
    return [text(v, e) for v, e in zip(values, errors)]


_PARAM_SYMBOLS = {
    "alpha": (r"\alpha", "α"),
    "kappa": (r"\kappa", "κ"),
    "tau": (r"\tau", "τ"),
    "rho": (r"\rho", "ρ"),
    "lam": (r"\lambda", "λ"),
}


def changed_params(
    params: Mapping[str, float],
    reference: Mapping[str, float],
    latex: bool = True,
    starred: Sequence[str] = (),
) -> str:
    r"""The parameters of a point that differ from a reference point, as text.

    Each differing key of ``reference`` becomes ``symbol = value`` (``%.3g``, infinity
    as :math:`\infty`), in the order of ``reference``: ``"$\alpha = 1$, $\tau = 0.5$"``
    with ``latex=True``, ``"α = 1, τ = 0.5"`` otherwise. A key in ``starred`` is marked
    as an optimum, ``"$\lambda = \lambda^\ast = 0.3$"``.

    Parameters
    ----------
    params : mapping
        The point; must contain every key of ``reference``.
    reference : mapping
        The reference point, with keys among ``"alpha", "kappa", "tau", "rho", "lam"``.
    latex : bool, default True
        Inline math (for tables and axis labels) or plain Unicode (for sentences).
    starred : sequence of str, default ()
        Keys whose value is an optimum, shown with a star.

    Returns
    -------
    str
        The differing parameters joined by ``", "`` (empty if none differs).

    Raises
    ------
    TypeError
        If ``params`` or ``reference`` is not a mapping.
    ValueError
        If a key of ``reference`` is unknown or missing from ``params``, a value is not
        a real number, or a key of ``starred`` is not in ``reference``.

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.

    Examples
    --------
    >>> changed_params(dict(alpha=1.0, tau=3.0), dict(alpha=2.0, tau=3.0))
    '$\\alpha = 1$'
    >>> changed_params(dict(kappa=float("inf"), lam=0.3), dict(kappa=1.5, lam=0.0),
    ...                latex=False, starred=("lam",))
    'κ = ∞, λ = λ* = 0.3'
    """
    if not isinstance(params, Mapping) or not isinstance(reference, Mapping):
        raise TypeError(f"params and reference must be mappings; got {params!r} and {reference!r}")
    unknown = [k for k in reference if k not in _PARAM_SYMBOLS]
    if unknown:
        raise ValueError(f"reference keys must be among {list(_PARAM_SYMBOLS)}; got {unknown}")
    missing = [k for k in reference if k not in params]
    if missing:
        raise ValueError(f"params must have every key of reference; missing {missing}")
    bad_star = [k for k in starred if k not in reference]
    if bad_star:
        raise ValueError(f"starred keys must be keys of reference; got {bad_star}")
    parts = []
    for key, ref in reference.items():
        value = float(params[key])
        if value == float(ref):
            continue
        tex, plain = _PARAM_SYMBOLS[key]
        number = f"{value:.3g}".replace("inf", r"\infty" if latex else "∞")
        if latex:
            star = rf"{tex}^\ast = " if key in starred else ""
            parts.append(f"${tex} = {star}{number}$")
        else:
            star = f"{plain}* = " if key in starred else ""
            parts.append(f"{plain} = {star}{number}")
    return ", ".join(parts)
