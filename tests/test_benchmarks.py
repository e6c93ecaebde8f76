"""Tests of lib.teaching.benchmarks: the stored benchmark reports, read back strictly."""

import math
import re

import numpy as np
import pytest

from lib.teaching import benchmarks
from lib.teaching.benchmarks import BenchReport, load_report, number, read_report

GOOD = """\
- date: 2026-12-01T12:00:00
- machine: Linux, 2 cores, load average 0.5

### Solvers: tau = 2

| d | n | method | fit s (wall/cpu) | speed-up |
|---:|---:|---:|---:|---:|
| 40 | 3,200 | dense | 0.44 / 0.43 | 1.0x |
|  |  | matfree | 0.05 / 0.05 | 8.6x |
| 60 | 7,200 | matfree | 0.37 / 0.23 | - |

Second table, after a sentence:

| curve | median time (ms) | target <= 20 ms |
|:---|---:|:---:|
| ridge | 2.74 | ok |
"""


def _write(tmp_path, text, name="report.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_report(tmp_path):
    path = _write(tmp_path, GOOD)
    report = read_report(path)
    assert isinstance(report, BenchReport) and report.cores == 2 and len(report.tables) == 2
    solvers = report.table("Solvers")
    assert solvers.title == "Solvers: tau = 2"
    assert solvers.columns == ("d", "n", "method", "fit s (wall/cpu)", "speed-up")
    assert (solvers.line, solvers.row_lines) == (6, (8, 9, 10))
    assert solvers.column("d") == ["40", "", "60"]
    assert solvers.column("d", fill_down=True) == ["40", "40", "60"]
    np.testing.assert_array_equal(solvers.numbers("n", fill_down=True), [3200, 3200, 7200])
    np.testing.assert_array_equal(solvers.numbers("fit s (wall/cpu)", part=1), [0.43, 0.05, 0.23])
    speed = solvers.numbers("speed-up")
    assert speed[:2].tolist() == [1.0, 8.6] and math.isnan(speed[2])
    matfree = solvers.where("method", "matfree")
    assert matfree.row_lines == (9, 10) and matfree.column("n") == ["", "7,200"]
    second = report.table("Second table")
    assert second.title == "Second table, after a sentence"
    assert number(second.columns[2].removeprefix("target")) == 20.0
    # headings become bold lines, so that the report can be shown as a cell's output
    shown = report.markdown()
    assert "**Solvers**: tau = 2" in shown and "###" not in shown and "| 40 | 3,200 |" in shown


@pytest.mark.parametrize(
    ("text", "value"),
    [("2.4x", 2.4), ("30,000", 30000.0), (" 0.20 GiB ", 0.2), ("<= 120 s", 120.0), ("5.4e-12", 5.4e-12), ("1 %", 1.0)],
)
def test_number_reads_one_number_with_its_unit(text, value):
    assert number(text) == value


@pytest.mark.parametrize("text", ["", "-", "1.0 / 2.0", "3 apples", "1,00", "ok"])
def test_number_refuses_anything_else(text):
    with pytest.raises(ValueError, match="here: .* is not a number"):
        number(text, "here")
    with pytest.raises(TypeError, match="text must be a str"):
        number(1.0)


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        # a row with a cell too many, on line 9
        (
            ("|  |  | matfree | 0.05 / 0.05 | 8.6x |", "|  |  | matfree | 0.05 / 0.05 | 8.6x | 7 |"),
            9,
            "6 cells, the header 5",
        ),
        # the separator of the second table is missing
        (("|:---|---:|:---:|\n", ""), 15, "no separator line"),
        # a repeated column name
        (("| d | n | method", "| d | d | method"), 6, "empty or repeated"),
        # a separator with a cell too few
        (("|---:|---:|---:|---:|---:|", "|---:|---:|---:|---:|"), 7, "separator has 4 cells"),
        # a table without rows
        (("| ridge | 2.74 | ok |\n", ""), 14, "no rows"),
    ],
)
def test_a_malformed_table_names_file_and_line(tmp_path, change, line, message):
    path = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}:{line}: .*{message}"):
        read_report(path)


def test_a_bad_number_names_file_line_and_column(tmp_path):
    path = _write(tmp_path, GOOD.replace("| 60 | 7,200 |", "| 60 | 7.200.0 |"))
    table = read_report(path).table("Solvers")
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}:10: n: '7.200.0' is not a number"):
        table.numbers("n")
    with pytest.raises(ValueError, match="part 2 asked"):
        table.numbers("fit s (wall/cpu)", part=2)
    with pytest.raises(ValueError, match="name must be one of"):
        table.column("e_ICL")
    with pytest.raises(ValueError, match="no row .* method = 'dual'"):
        table.where("method", "dual")


def test_a_report_without_tables_or_title_or_cores(tmp_path):
    with pytest.raises(ValueError, match="no table"):
        read_report(_write(tmp_path, "- date: today\n\nNo tables here.\n"))
    with pytest.raises(ValueError, match=r"report\.md:1: a table without a title"):
        read_report(_write(tmp_path, GOOD[GOOD.index("| d |") :]))
    report = read_report(_write(tmp_path, GOOD))
    with pytest.raises(ValueError, match="0 tables .* exactly one must"):
        report.table("Crossovers")
    with pytest.raises(ValueError, match="2 tables .* exactly one must"):
        report.table("e")
    two = GOOD.replace("2 cores", "2 cores, 4 cores")
    with pytest.raises(ValueError, match=r"\[2, 4\] core counts"):
        read_report(_write(tmp_path, two)).cores


def test_a_missing_file_and_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="no benchmark report .*make bench"):
        read_report(tmp_path / "bench_solvers.md")
    with pytest.raises(FileNotFoundError, match="bench_theory.md"):
        load_report("theory", data_dir=tmp_path)
    with pytest.raises(ValueError, match="name must be one of"):
        load_report("solver")
    with pytest.raises(TypeError, match="path must be a str"):
        read_report(3)
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe| a |")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_report(tmp_path / "bad.md")


@pytest.mark.parametrize("name", benchmarks.REPORTS)
def test_the_stored_reports_read(name):
    report = load_report(name)
    assert report.tables and report.cores >= 1
    for table in report.tables:
        assert table.rows and all(len(row) == len(table.columns) for row in table.rows)
