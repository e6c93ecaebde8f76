"""The stored benchmark reports of ``make bench``, read back as tables of numbers.

``make bench`` runs the four scripts of ``bench/`` by hand (they take minutes and depend
on the machine, so no build or test runs them). Each writes one Markdown report into the
package's data folder, ``lib/data/bench_<name>.md`` for the names of :data:`REPORTS`: a
few lines on the date, the machine and its load, then one or more tables, each after a
title line (a ``###`` heading or a sentence ending with a colon). The Performance
appendix shows the reports and takes every number its prose quotes from them through
this module, so that no measured number is typed by hand.

A report is read strictly: a malformed table raises a ``ValueError`` whose message starts
with ``"<path>:<line>: "``, the physical line of the file (the first line is line 1).
Refused are a table without a separator line (``|---|``) under its header, a header with
an empty or repeated column name, a row with more or fewer cells than the header, a
table with no rows or no title line above it, and a report without any table. A cell
read as a number (:meth:`BenchTable.numbers`) must hold one number, optionally with
thousands separators and one unit of :data:`UNITS` (``"2.4x"``, ``"30,000"``,
``"0.20 GiB"``); an empty cell or ``-`` reads as NaN.

Part of the teaching layer (with :mod:`lib.teaching.claims` and :mod:`lib.teaching.tables`).

Used in: :doc:`the Performance appendix </book/appendix/performance>`.
"""

from __future__ import annotations

import importlib.resources
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lib._checks import check_choice

__all__ = ["REPORTS", "UNITS", "DATA_DIR", "BenchTable", "BenchReport", "number", "read_report", "load_report"]

#: The reports ``make bench`` writes, ``lib/data/bench_<name>.md``, one per script of
#: ``bench/`` (``bench_<name>.py``).
REPORTS = ("solvers", "theory", "scaleout", "training")
#: The units a numeric cell may end with.
UNITS = ("x", "ms", "s", "GiB", "MiB", "%")
#: The package's data folder, where the reports are (found through :mod:`importlib.resources`,
#: so that an installed package finds them too).
DATA_DIR: Path = Path(str(importlib.resources.files("lib").joinpath("data")))

_NUMBER = re.compile(
    r"\s*(?:[<>]=?\s*)?(?P<num>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?)"
    r"\s*(?P<unit>" + "|".join(UNITS) + r")?\s*"
)
_SEPARATOR = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_CORES = re.compile(r"\b(\d+) cores\b")


def number(text: str, where: str = "") -> float:
    """The number a table cell holds: ``"2.4x"`` is 2.4, ``"30,000"`` is 30000.0.

    Parameters
    ----------
    text : str
        The cell: one number (an optional ``<``, ``<=``, ``>`` or ``>=`` before it,
        commas between groups of three digits, an exponent) and at most one unit of
        :data:`UNITS` after it, with spaces around allowed.
    where : str, optional
        Where the cell is (``"path:line: column"``), put at the start of the error message.

    Returns
    -------
    float
        The number, without its unit.

    Raises
    ------
    TypeError
        If ``text`` is not a string.
    ValueError
        If ``text`` holds anything else (an empty cell, two numbers, an unknown unit).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    m = _NUMBER.fullmatch(text)
    if m is None:
        prefix = f"{where}: " if where else ""
        raise ValueError(
            f"{prefix}{text!r} is not a number; a cell read as a number holds one number, "
            f"optionally with thousands commas and one unit of {UNITS}"
        )
    return float(m.group("num").replace(",", ""))


@dataclass(frozen=True)
class BenchTable:
    """One table of a benchmark report, its cells as the text the report shows.

    Attributes
    ----------
    title : str
        The line above the table: a heading without its ``#`` marks, a list item
        without its ``-``, or a sentence without its closing colon.
    columns : tuple of str
        The column names, in order.
    rows : tuple of tuple of str
        The cells of each row (stripped of spaces), as many as there are columns.
    path : str
        The report's file.
    line : int
        The line of the table's header in that file (the first line is 1).
    row_lines : tuple of int
        The line of each row in that file.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    path: str
    line: int
    row_lines: tuple[int, ...]

    def _index(self, name: Any) -> int:
        check_choice("name", name, self.columns, hint=f" (the columns of the table at {self.path}:{self.line})")
        return self.columns.index(name)

    def column(self, name: str, *, fill_down: bool = False) -> list[str]:
        """The cells of one column, top to bottom.

        Parameters
        ----------
        name : str
            A column name, one of ``columns``.
        fill_down : bool, keyword-only
            Whether an empty cell repeats the last non-empty cell above it (the
            solver table leaves ``d``, ``n`` and ``p`` empty under their first row).

        Returns
        -------
        list of str
            One cell per row.

        Raises
        ------
        ValueError
            If ``name`` is not a column, or ``fill_down`` meets an empty first cell.
        """
        j = self._index(name)
        cells = [row[j] for row in self.rows]
        if fill_down:
            for i, cell in enumerate(cells):
                if cell == "":
                    if i == 0:
                        raise ValueError(
                            f"{self.path}:{self.row_lines[0]}: {name}: the first cell is empty, "
                            "so fill_down has nothing to repeat"
                        )
                    cells[i] = cells[i - 1]
        return cells

    def numbers(self, name: str, *, part: int | None = None, fill_down: bool = False) -> np.ndarray:
        """The numbers of one column (NaN for an empty cell or ``-``).

        Parameters
        ----------
        name : str
            A column name, one of ``columns``.
        part : int, optional, keyword-only
            For cells holding several numbers separated by ``" / "`` (``"44.5 / 44.4"``,
            wall and CPU time): which one, counted from 0. None (default): the cell
            holds one number.
        fill_down : bool, keyword-only
            As in :meth:`column`.

        Returns
        -------
        numpy.ndarray
            One float per row.

        Raises
        ------
        ValueError
            If ``name`` is not a column, or a cell is not a number (the message starts
            with the file and line of the row), or has fewer parts than ``part + 1``.
        """
        if part is not None and (isinstance(part, bool) or not isinstance(part, int) or part < 0):
            raise ValueError(f"part must be None or an int >= 0; got {part!r}")
        cells = self.column(name, fill_down=fill_down)
        out = np.empty(len(cells))
        for i, cell in enumerate(cells):
            where = f"{self.path}:{self.row_lines[i]}: {name}"
            if part is not None and cell not in ("", "-"):
                pieces = cell.split(" / ")
                if part >= len(pieces):
                    raise ValueError(
                        f"{where}: {cell!r} has {len(pieces)} part(s) separated by ' / '; part {part} asked"
                    )
                cell = pieces[part]
            out[i] = math.nan if cell in ("", "-") else number(cell, where)
        return out

    def where(self, name: str, value: str, *, fill_down: bool = False) -> BenchTable:
        """The table of the rows whose cell in column ``name`` is ``value``.

        Parameters
        ----------
        name : str
            A column name, one of ``columns``.
        value : str
            The cell text to keep (compared exactly, after stripping spaces).
        fill_down : bool, keyword-only
            As in :meth:`column`.

        Returns
        -------
        BenchTable
            The same title, columns and file, with the matching rows only.

        Raises
        ------
        ValueError
            If ``name`` is not a column or no row matches.
        """
        cells = self.column(name, fill_down=fill_down)
        keep = [i for i, cell in enumerate(cells) if cell == str(value).strip()]
        if not keep:
            raise ValueError(
                f"no row of the table at {self.path}:{self.line} has {name} = {value!r}; "
                f"the values are {sorted(set(cells))}"
            )
        rows = tuple(
            tuple(cells[i] if c == name else self.rows[i][j] for j, c in enumerate(self.columns)) for i in keep
        )
        return BenchTable(self.title, self.columns, rows, self.path, self.line, tuple(self.row_lines[i] for i in keep))


@dataclass(frozen=True)
class BenchReport:
    """A benchmark report: its text and its tables.

    Attributes
    ----------
    path : str
        The file read.
    text : str
        Its whole text.
    tables : tuple of BenchTable
        Its tables, in order (at least one).
    """

    path: str
    text: str
    tables: tuple[BenchTable, ...]

    def table(self, title: str) -> BenchTable:
        """The one table whose title contains ``title``.

        Parameters
        ----------
        title : str
            A piece of the title (case-sensitive), e.g. ``"Crossovers"``.

        Returns
        -------
        BenchTable
            That table.

        Raises
        ------
        ValueError
            If no table's title, or more than one, contains ``title``.
        """
        found = [t for t in self.tables if str(title) in t.title]
        if len(found) != 1:
            titles = [t.title[:60] for t in self.tables]
            raise ValueError(
                f"{len(found)} tables of {self.path} have {title!r} in their title; exactly one must. "
                f"The titles: {titles}"
            )
        return found[0]

    @property
    def cores(self) -> int:
        """The machine's number of cores, as the report's text states it ("2 cores").

        Raises
        ------
        ValueError
            If the text states no core count, or two different ones.
        """
        counts = {int(c) for c in _CORES.findall(self.text)}
        if len(counts) != 1:
            raise ValueError(f"{self.path}: the report states {sorted(counts)} core counts; exactly one is expected")
        return counts.pop()

    def markdown(self) -> str:
        """The report as Markdown to show in a page: its headings as paragraphs with a bold title.

        Returns
        -------
        str
            The text, each ``#`` heading turned into a paragraph (a heading inside a
            cell's output would not be a section of the page) whose title, the part
            before the first ``:``, ``(`` or comma, is bold and whose parameters are not.
        """
        lines = [re.sub(r"^#+\s+([^:(,]*[^:(,\s])(\s*[:(,].*)?$", r"**\1**\2", line) for line in self.text.splitlines()]
        return "\n".join(lines) + "\n"


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip() for c in _CELL_SPLIT.split(body)]


def _title(lines: list[str], start: int, path: str) -> str:
    """The nearest non-empty line above line index ``start``, as a title."""
    for k in range(start - 1, -1, -1):
        text = lines[k].strip()
        if not text:
            continue
        if text.startswith("|"):
            break
        text = re.sub(r"^(?:#+|[-*])\s*", "", text)
        return text[:-1].rstrip() if text.endswith(":") else text
    raise ValueError(f"{path}:{start + 1}: a table without a title line above it")


def read_report(path: str | Path) -> BenchReport:
    """Read a benchmark report (Markdown) and check every table in it.

    Parameters
    ----------
    path : str or pathlib.Path
        The report's file.

    Returns
    -------
    BenchReport
        Its text and tables.

    Raises
    ------
    TypeError
        If ``path`` is not a str or a path.
    FileNotFoundError
        If there is no such file.
    ValueError
        If the file is not UTF-8 text, holds no table, or a table is malformed (see the
        module's docstring); the message starts with ``"<path>:<line>: "``.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path; got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no benchmark report {path}; `make bench` writes the reports")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    where = str(path)
    lines = text.splitlines()
    tables, i = [], 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        header = _cells(lines[i])
        if i + 1 >= j or not _SEPARATOR.fullmatch(lines[i + 1].strip().replace(" ", "")):
            raise ValueError(f"{where}:{i + 2}: the table whose header is line {i + 1} has no separator line (|---|)")
        if len(_cells(lines[i + 1])) != len(header):
            raise ValueError(
                f"{where}:{i + 2}: the separator has {len(_cells(lines[i + 1]))} cells, the header {len(header)}"
            )
        if any(not c for c in header) or len(set(header)) != len(header):
            raise ValueError(f"{where}:{i + 1}: a column name is empty or repeated: {header}")
        if j - i < 3:
            raise ValueError(f"{where}:{i + 1}: the table has no rows")
        rows = []
        for k in range(i + 2, j):
            cells = _cells(lines[k])
            if len(cells) != len(header):
                raise ValueError(f"{where}:{k + 1}: the row has {len(cells)} cells, the header {len(header)}")
            rows.append(tuple(cells))
        tables.append(
            BenchTable(_title(lines, i, where), tuple(header), tuple(rows), where, i + 1, tuple(range(i + 3, j + 1)))
        )
        i = j
    if not tables:
        raise ValueError(f"{where}: no table (a header line, a |---| line and rows)")
    return BenchReport(where, text, tuple(tables))


def load_report(name: str, data_dir: str | Path | None = None) -> BenchReport:
    """Read the stored report ``bench_<name>.md`` of one benchmark script.

    Parameters
    ----------
    name : {"solvers", "theory", "scaleout", "training"}
        The script (:data:`REPORTS`).
    data_dir : str, pathlib.Path or None
        Folder holding the reports; None (default) is the package's ``lib/data/``.

    Returns
    -------
    BenchReport
        The report, every table checked (:func:`read_report`).

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`REPORTS`, or the report is malformed.
    FileNotFoundError
        If the report is missing.
    """
    check_choice("name", name, REPORTS)
    folder = DATA_DIR if data_dir is None else data_dir
    if not isinstance(folder, (str, Path)):
        raise TypeError(f"data_dir must be None, a str or a pathlib.Path; got {type(folder).__name__}")
    return read_report(Path(folder) / f"bench_{name}.md")
