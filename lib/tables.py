"""Markdown tables for the chapters, built from columns of numbers.

A chapter shows a table by passing its columns to :func:`markdown_table` and displaying
the result with ``IPython.display.Markdown``, instead of assembling the rows with
f-strings in every notebook.

Part of the teaching layer (with :mod:`lib.claims` and :mod:`lib.plotting`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["markdown_table", "plus_minus"]

_ALIGN = {"left": ":---", "right": "---:", "center": ":---:"}


def _cell(value: Any, fmt: str | Callable[[Any], str] | None) -> str:
    if fmt is None:
        text = value if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)
    elif callable(fmt):
        text = fmt(value)
    else:
        text = format(value, fmt)
    return str(text).replace("|", r"\|").replace("\n", " ")


def markdown_table(
    columns: Mapping[str, Sequence[Any]],
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    align: str | Mapping[str, str] = "right",
) -> str:
    """A GitHub/MyST Markdown table from named columns.

    Parameters
    ----------
    columns : mapping of str to sequence
        Header text to the column's values, in display order; all columns have the same
        length (at least one row).
    formats : mapping of str to str or callable, optional
        Per column, a format specification (``".3f"``, applied with the built-in ``format``) or a
        function from the value to its text. Columns without one show strings as they
        are, floats with ``"g"`` and anything else with :class:`str`.
    align : {"right", "left", "center"} or mapping of str to these, default "right"
        Alignment of every column, or per column (missing columns are right-aligned).

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
        If ``columns`` is not a mapping.

    See Also
    --------
    plus_minus : the text of a column of values with their standard errors.
    lib.claims.claim : assert the sentence a table supports.

    Examples
    --------
    >>> print(markdown_table({"d": [50, 100], "e": [0.51234, 0.5]}, formats={"e": ".3f"}))
    | d | e |
    | ---: | ---: |
    | 50 | 0.512 |
    | 100 | 0.500 |
    """
    if not isinstance(columns, Mapping):
        raise TypeError(f"columns must be a mapping from header to values; got {type(columns).__name__}")
    if not columns:
        raise ValueError("columns must have at least one column; got none")
    names = list(columns)
    lengths = {name: len(columns[name]) for name in names}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"columns must all have the same length; got lengths {lengths}")
    formats = dict(formats or {})
    aligns = {name: align for name in names} if isinstance(align, str) else {n: "right" for n in names} | dict(align)
    for what, given in (("formats", formats), ("align", aligns)):
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ValueError(f"{what} names columns that do not exist: {unknown}; columns are {names}")
    bad = {n: a for n, a in aligns.items() if a not in _ALIGN}
    if bad:
        raise ValueError(f"align must be one of {sorted(_ALIGN)}; got {bad}")
    lines = [
        "| " + " | ".join(_cell(n, None) for n in names) + " |",
        "| " + " | ".join(_ALIGN[aligns[n]] for n in names) + " |",
    ]
    for i in range(next(iter(lengths.values()))):
        lines.append("| " + " | ".join(_cell(columns[n][i], formats.get(n)) for n in names) + " |")
    return "\n".join(lines)


def plus_minus(values: Sequence[float], errors: Sequence[float], fmt: str = ".4f", unit: str = "") -> list[str]:
    """The cells of a column of estimates with their standard errors, ``"x ± se"``.

    Parameters
    ----------
    values : sequence of float
        The estimates.
    errors : sequence of float
        Their standard errors, one per value.
    fmt : str, default ".4f"
        Format specification of the values (applied with the built-in ``format``). The
        errors use the same one without a sign option (``"+.2f"`` shows ``+0.12 ± 0.05``).
    unit : str, default ""
        Text after each cell, separated by a space (``"%"`` gives ``"+0.12 ± 0.05 %"``).

    Returns
    -------
    list of str
        One cell per value, to pass as a column of :func:`markdown_table`.

    Raises
    ------
    ValueError
        If ``values`` and ``errors`` differ in length.

    See Also
    --------
    markdown_table : the table these cells go into.

    Examples
    --------
    >>> plus_minus([0.51234, -0.1], [0.0012, 0.05], fmt="+.3f", unit="%")
    ['+0.512 ± 0.001 %', '-0.100 ± 0.050 %']
    """
    values, errors = list(values), list(errors)
    if len(values) != len(errors):
        raise ValueError(
            f"values and errors must have the same length; got {len(values)} values and {len(errors)} errors"
        )
    error_fmt = fmt.replace("+", "").replace(" ", "")
    tail = f" {unit}" if unit else ""
    return [f"{format(v, fmt)} ± {format(e, error_fmt)}{tail}" for v, e in zip(values, errors)]
