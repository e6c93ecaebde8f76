"""The one parser of the book's solution spans, shared by the notebook scripts.

An exercise's solution is written with sphinx-exercise's gated syntax: a
``{solution-start}`` directive, the solution (markdown and code cells), a
``{solution-end}`` directive. A span may open and close in the middle of a markdown
cell and run over any number of cells. :func:`line_roles` classifies every line of one
markdown cell; a caller walks the cells in order, passing on whether a span is open.

Used by ``scripts/make_student.py`` (drop the spans) and ``scripts/sync_notebooks.py``
(collapse them in JupyterLab).
"""

from __future__ import annotations

import re

#: The opening line of a marker directive (``` or ::: fences of any length, as MyST
#: allows); ``{solution}`` (the ungated directive) is matched so that it can be refused.
MARKER = re.compile(r"^\s*(`{3,}|:{3,})\{(solution-start|solution-end|solution)\}")

#: Line roles returned by :func:`line_roles`.
OUT, SOL, START, END = "out", "sol", "start", "end"


class SolutionMarkerError(ValueError):
    """The solution markers of a notebook do not pair up (or use another syntax)."""


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a directive opened with ``fence`` (CommonMark rule)."""
    stripped = line.strip()
    return bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence)


def line_roles(text: str, inside: bool, where: str) -> tuple[list[str], bool]:
    """The role of each line of a markdown cell, and whether a span is open after it.

    Parameters
    ----------
    text : str
        The cell's source.
    inside : bool
        Whether the cell opens inside a span (started in an earlier cell).
    where : str
        File and cell, for the error messages.

    Returns
    -------
    roles : list of str
        One per line of ``text.splitlines()``: ``"out"`` (outside every span),
        ``"sol"`` (solution text), ``"start"`` / ``"end"`` (a line of a
        ``{solution-start}`` / ``{solution-end}`` directive, its options and its
        closing fence included).
    inside : bool
        Whether a span is still open at the end of the cell.

    Raises
    ------
    SolutionMarkerError
        A start inside a span, an end outside one, a marker directive that is not
        closed, or an ungated ``{solution}`` directive.
    """
    roles: list[str] = []
    fence, role = None, ""
    for line in text.splitlines():
        if fence is not None:  # inside a marker directive: its options, its fence
            roles.append(role)
            if _closes(line, fence):
                fence = None
            continue
        match = MARKER.match(line)
        if match is None:
            roles.append(SOL if inside else OUT)
            continue
        fence, kind = match.group(1), match.group(2)
        if kind == "solution":
            raise SolutionMarkerError(
                f"{where}: a {{solution}} directive; the book uses solution-start/solution-end spans only"
            )
        if kind == "solution-start" and inside:
            raise SolutionMarkerError(f"{where}: solution-start inside a solution")
        if kind == "solution-end" and not inside:
            raise SolutionMarkerError(f"{where}: solution-end without solution-start")
        inside = kind == "solution-start"
        role = START if inside else END
        roles.append(role)
    if fence is not None:
        raise SolutionMarkerError(f"{where}: a solution marker directive is not closed")
    return roles, inside


def outside_text(text: str, inside: bool, where: str) -> tuple[str, bool]:
    """The lines of a markdown cell outside every solution span (markers dropped).

    Parameters
    ----------
    text, inside, where
        As for :func:`line_roles`.

    Returns
    -------
    kept : str
        The ``"out"`` lines, joined with their line ends.
    inside : bool
        Whether a span is still open at the end of the cell.
    """
    roles, inside = line_roles(text, inside, where)
    lines = text.splitlines(keepends=True)
    return "".join(ln for ln, r in zip(lines, roles) if r == OUT), inside
