"""Strict reading of the package's CSV data files (internal).

Every data file in ``lib/data`` is read through :func:`read_rows`, so that every loader
reports a corrupted file the same way: a ``ValueError`` whose message starts with
``"<path>:<line>: <column>: <problem>"``, with the physical line number in the file
(the header is line 1).

What is refused, for every file:

- bytes that are not UTF-8 text (a leading byte-order mark is allowed);
- a header other than the expected columns, or a repeated header line;
- a row with fewer fields than the header (a missing field: every later column would
  shift) or more;
- a file whose last line has no line break: the writers (:mod:`csv`) end every row
  with one, so such a file was cut, possibly inside its last number, which would
  otherwise read as another, valid number;
- a file with fewer or more rows than the ``rows`` recorded in its JSON sidecar
  (``<name>.json`` next to ``<name>.csv``, written by the scripts that make the data),
  when there is one: a file cut at a line break; a sidecar that is not a JSON object,
  or whose ``rows`` is not a non-negative integer;
- whatever the loader's ``convert`` refuses in a field (unparsable or non-finite
  numbers, non-integers in an integer column, integers beyond int64, ...);
- two rows with the same key (the same configuration and seed), with both line numbers.

Blank lines are skipped (and counted in the line numbers).

Used in: :func:`lib.finite_size.load`, :func:`lib.training_runs.load_runs`,
:func:`lib.theory.source.source_values`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["read_rows", "to_float", "to_int", "to_text"]

_INT_TEXT = re.compile(r"[+-]?[0-9]+")


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def to_text(name: str, text: str, where: str) -> str:
    """A text field: non-empty, without control characters (a NUL byte, a line break, ...)."""
    if not text:
        raise ValueError(f"{where}: {name}: empty; a non-empty text is required")
    bad = _CONTROL.search(text)
    if bad is not None:
        raise ValueError(f"{where}: {name}: {text!r} has the control character {bad.group()!r}; it is not text")
    return text


#: Largest integer field: numpy's int64, the type of the integer columns of the tables.
INT_MAX = 2**63 - 1


def to_int(name: str, text: str, where: str, low: int | None = None) -> int:
    """An integer field, exact (a 63-bit seed keeps every digit), at most :data:`INT_MAX`;
    ValueError if not one."""
    if not _INT_TEXT.fullmatch(text):
        raise ValueError(f"{where}: {name}: {text!r} is not an integer (digits only, e.g. '12')")
    value = int(text)
    if low is not None and value < low:
        raise ValueError(f"{where}: {name}: {value} is not allowed; it must be >= {low}")
    if value > INT_MAX:
        raise ValueError(f"{where}: {name}: {value} is not allowed; it must be <= 2**63 - 1 (an int64)")
    return value


def to_float(name: str, text: str, where: str, *, allow_inf: bool = False, nonnegative: bool = False) -> float:
    """A float field: finite (or ``+inf`` if ``allow_inf``), ``>= 0`` if ``nonnegative``."""
    try:
        if text != text.strip() or "_" in text:
            raise ValueError
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {name}: {text!r} is not a number") from None
    if math.isnan(value) or value == -math.inf or (value == math.inf and not allow_inf):
        allowed = "finite or inf" if allow_inf else "finite"
        raise ValueError(f"{where}: {name}: {text!r} is not allowed; the value must be {allowed}")
    if nonnegative and value < 0:
        raise ValueError(f"{where}: {name}: {text!r} is negative; it must be >= 0")
    return value


def to_number_list(name: str, text: str, where: str, *, sep: str = "json", allow_inf: bool = False) -> str:
    """A field holding a non-empty list of numbers, checked and returned as its text.

    ``sep="json"``: a JSON array such as ``[0.5, 0.4]``; ``sep=","``: comma-separated
    numbers such as ``0.01,0.03``. Every entry must be finite (``+inf`` also allowed with
    ``allow_inf``, e.g. the validation error of a diverged learning rate).
    """
    if sep == "json":
        try:
            values = json.loads(text)
        except json.JSONDecodeError:
            values = None
        if not isinstance(values, list):
            raise ValueError(f"{where}: {name}: {text[:40]!r} is not a JSON list of numbers such as [0.5, 0.4]")
    else:
        values = text.split(sep)
    if not values:
        raise ValueError(f"{where}: {name}: the list is empty; it must hold at least one number")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError(f"{where}: {name}: entry {i} ({v!r}) is not a number")
        if isinstance(v, str):
            v = to_float(name, v, where, allow_inf=allow_inf)
        if math.isnan(v) or v == -math.inf or (v == math.inf and not allow_inf):
            allowed = "finite or inf" if allow_inf else "finite"
            raise ValueError(f"{where}: {name}: entry {i} is {v!r}; every entry must be {allowed}")
    return text


def _sidecar_rows(path: Path) -> int | None:
    """The row count recorded in ``path``'s JSON sidecar, or None if there is none."""
    meta_path = path.with_suffix(".json")
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{meta_path}:1: (json): the sidecar of {path.name} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        # a sidecar that is not a record at all would switch the truncation check off unseen
        raise ValueError(
            f"{meta_path}:1: (json): the sidecar of {path.name} is a JSON {type(meta).__name__}, not an object; "
            "it is corrupt"
        )
    if meta.get("file") != path.name:
        return None  # not a record of this file
    if "rows" not in meta:
        return None  # a sidecar that records no row count
    rows = meta["rows"]
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        # a corrupt count would switch the truncation check off (or make it say nonsense)
        raise ValueError(
            f"{meta_path}:1: rows: {rows!r} is not a row count (a non-negative integer); the sidecar of "
            f"{path.name} is corrupt"
        )
    return rows


def _misfit(fields: list[str], columns: tuple[str, ...], convert: Callable[[str, str, str], Any]) -> str:
    """Where a row with the wrong number of fields stops fitting its columns (a hint)."""
    for name, text in zip(columns, fields):
        try:
            convert(name, text, "")
        except ValueError:
            return f"; the first field that does not fit is {name} = {text!r}, so the shift starts at or before it"
    return ""


def read_rows(
    path: str | Path,
    columns: Sequence[str],
    convert: Callable[[str, str, str], Any],
    *,
    check_row: Callable[[dict[str, Any], str], None] | None = None,
    keys: Sequence[tuple[Callable[[dict[str, Any]], Any], str]] = (),
) -> list[dict[str, Any]]:
    """The rows of a CSV data file, every field converted and checked.

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.
    columns : sequence of str
        The expected header, in order.
    convert : callable
        ``convert(column, text, where)`` returns the field's value or raises
        ``ValueError("<where>: <column>: <problem>")``.
    check_row : callable, optional
        ``check_row(row, where)`` checks a converted row as a whole (raises ValueError).
    keys : sequence of (callable, str), optional
        ``(key, meaning)`` pairs: two rows with equal ``key(row)`` are duplicates,
        refused with both line numbers and ``meaning`` (e.g. "same configuration
        and seed").

    Returns
    -------
    list of dict
        One dict per row, keyed by ``columns``.

    Raises
    ------
    ValueError
        See the module docstring; the message starts ``"<path>:<line>: <column>:"``.
    """
    path = Path(path)
    columns = tuple(columns)
    try:
        raw = path.read_bytes()
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        raise ValueError(f"{path!s:.200}:0: (file): cannot be read: {exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: (encoding): not UTF-8 text: {exc}") from None
    if not text:
        raise ValueError(f"{path}:1: header: the file is empty; it must start with the columns {columns}")
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[dict[str, Any]] = []
    seen: list[dict[Any, int]] = [{} for _ in keys]
    line = 1
    try:
        header = next(reader, None)
        if header is None or tuple(header) != columns:
            raise ValueError(f"{path}:1: header: must be the columns {columns}; it has {header}")
        line = reader.line_num + 1  # physical line on which the next record starts
        for fields in reader:
            where, start, line = f"{path}:{line}", line, reader.line_num + 1
            if not fields:  # a blank line
                continue
            if tuple(fields) == columns:
                raise ValueError(f"{where}: header: a repeated header line (two files concatenated?)")
            if len(fields) < len(columns):
                raise ValueError(
                    f"{where}: {columns[len(fields)]}: missing; the row has {len(fields)} of the "
                    f"{len(columns)} fields (a truncated line, or a field left out?){_misfit(fields, columns, convert)}"
                )
            if len(fields) > len(columns):
                raise ValueError(
                    f"{where}: field {len(columns) + 1}: extra field {fields[len(columns)]!r}; "
                    f"the row has {len(fields)} fields, the header {len(columns)}{_misfit(fields, columns, convert)}"
                )
            row = {k: convert(k, v, where) for k, v in zip(columns, fields)}
            if check_row is not None:
                check_row(row, where)
            for (key, meaning), found in zip(keys, seen):
                k = key(row)
                if k in found:
                    raise ValueError(
                        f"{where}: (row): duplicate of line {found[k]} ({meaning}); a row must not be counted twice"
                    )
                found[k] = start
            rows.append(row)
    except csv.Error as exc:
        raise ValueError(f"{path}:{reader.line_num}: (csv): {exc}") from None
    if not text.endswith(("\n", "\r")):
        last = text.count("\n") + 1
        fields = next(csv.reader([text.rsplit("\n", 1)[-1]]), [])
        column = columns[min(max(len(fields), 1), len(columns)) - 1]
        raise ValueError(
            f"{path}:{last}: {column}: the file does not end with a line break, so its last line "
            "was cut (a truncated file; the last number may be incomplete)"
        )
    recorded = _sidecar_rows(path)
    if recorded is not None and recorded != len(rows):
        raise ValueError(
            f"{path}:{line}: (end of file): the file has {len(rows)} rows, but "
            f"{path.with_suffix('.json').name} records {recorded} (a truncated or appended file?)"
        )
    return rows
