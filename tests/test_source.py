"""lib.theory.source.source_values: every corruption of the stored source values is refused.

The stored file (``lib/data/source_formulas.csv`` with its JSON sidecar) is copied to a
temporary folder and corrupted; the error must be ``"<path>:<line>: <column>: <problem>"``.
"""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from lib.theory import source

DATA = Path(source.__file__).resolve().parent.parent / "data"
COLS = source.SOURCE_COLUMNS


def _copy(tmp_path, sidecar=True):
    shutil.copy(DATA / "source_formulas.csv", tmp_path / "source_formulas.csv")
    if sidecar:
        shutil.copy(DATA / "source_formulas.json", tmp_path / "source_formulas.json")
    return tmp_path / "source_formulas.csv"


def _set(line, column, text):
    fields = line.split(",")
    fields[COLS.index(column)] = text
    return ",".join(fields)


def _at(i, fn):
    return lambda ls: ls[:i] + [fn(ls[i])] + ls[i + 1 :]


CORRUPT = {
    "missing field": (_at(4, lambda s: s.rsplit(",", 2)[0] + "," + s.rsplit(",", 1)[1]), 5, "value: missing; the row has 6"),
    "missing quantity": (_at(4, lambda s: s.split(",", 1)[1]), 5, "value: missing; the row has 6 of the 7 fields"),
    "extra field": (_at(2, lambda s: s + ",0.1"), 3, "field 8: extra field '0.1'"),
    "nan value": (_at(2, lambda s: _set(s, "value", "nan")), 3, "value: 'nan' is not allowed"),
    "inf value": (_at(2, lambda s: _set(s, "value", "inf")), 3, "value: 'inf' is not allowed"),
    "inf kappa": (_at(2, lambda s: _set(s, "kappa", "inf")), 3, "kappa: 'inf' is not allowed"),
    "unparsable": (_at(6, lambda s: _set(s, "tau", "0.7.1")), 7, "tau: '0.7.1' is not a number"),
    "empty number": (_at(6, lambda s: _set(s, "rho", "")), 7, "rho: '' is not a number"),
    "negative parameter": (_at(6, lambda s: _set(s, "lam", "-0.5")), 7, "lam: '-0.5' is negative"),
    "unknown quantity": (_at(1, lambda s: _set(s, "quantity", "icl_ridge_less")), 2, "quantity: 'icl_ridge_less' is not"),
    "header renamed": (_at(0, lambda s: s.replace("lam", "lambda")), 1, "header: must be the columns"),
    "no header": (lambda ls: ls[1:], 1, "header: must be the columns"),
    "repeated header": (lambda ls: ls[:9] + [ls[0]] + ls[9:], 10, "header: a repeated header line"),
    "exact duplicate": (lambda ls: ls[:9] + [ls[3]] + ls[9:], 10, "(row): duplicate of line 4 (same quantity and"),
    "duplicate, other value": (
        lambda ls: ls[:9] + [_set(ls[3], "value", "1.5")] + ls[9:],
        10,
        "(row): duplicate of line 4 (same quantity and parameters)",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_source_values_refuse_a_corrupted_file(tmp_path, case):
    edit, line, message = CORRUPT[case]
    path = _copy(tmp_path, sidecar=False)
    path.write_text("\n".join(edit(path.read_text().splitlines())) + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:{line}: {re.escape(message)}"):
        source.source_values(path)


def test_source_values_refuse_a_truncated_file(tmp_path):
    path = _copy(tmp_path)
    text = path.read_text()
    # cut inside the last number: "1.083295297004811" -> "1.08329529700481" still parses
    path.write_text(text[:-2])
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:1081: value: the file does not end with a line"):
        source.source_values(path)
    path.write_text(text[: text.rindex(",0.5,") + 4])  # cut inside the last row
    with pytest.raises(ValueError, match=":1081: lam: missing; the row has 5 of the 7"):
        source.source_values(path)
    path.write_text("".join(text.splitlines(keepends=True)[:1000]))  # cut at a line break
    with pytest.raises(ValueError, match=r":1001: \(end of file\): the file has 999 rows, but source_formulas.json"):
        source.source_values(path)
    path.write_text("")
    with pytest.raises(ValueError, match=":1: header: the file is empty"):
        source.source_values(path)
    path.write_bytes(text.encode()[:500] + b"\xe9" + text.encode()[500:])
    with pytest.raises(ValueError, match=r":\d+: \(encoding\): not UTF-8"):
        source.source_values(path)
    # a quantity renamed into another: its rows now repeat that quantity's parameters
    path.write_text(text.replace("icl_ridgeless,", "idg_ridgeless,"))
    with pytest.raises(ValueError, match=r":3: \(row\): duplicate of line 2 \(same quantity and parameters\)"):
        source.source_values(path)


def test_source_values_missing_quantity_and_missing_file(tmp_path):
    path = _copy(tmp_path, sidecar=False)
    lines = [s for s in path.read_text().splitlines() if not s.startswith("idg_ridgeless")]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=":1: quantity: 'idg_ridgeless' has no row"):
        source.source_values(path)
    with pytest.raises(ValueError, match=r":0: \(file\): cannot be read"):
        source.source_values(tmp_path / "absent.csv")
    # a folder, and a path the system cannot open (a NUL byte: before, a bare "embedded
    # null byte" that named no file)
    for bad in (tmp_path, str(tmp_path / "source_formulas.csv") + "\x00x"):
        with pytest.raises(ValueError, match=r":0: \(file\): cannot be read"):
            source.source_values(bad)
    with pytest.raises(TypeError, match="path must be a str, a pathlib.Path or None; got int 3"):
        source.source_values(3)


def test_source_values_accept_the_stored_file_and_a_byte_order_mark(tmp_path):
    stored = source.source_values()
    path = _copy(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    copy = source.source_values(path)
    for q in stored:
        for k in stored[q]:
            np.testing.assert_array_equal(copy[q][k], stored[q][k])
