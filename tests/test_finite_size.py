"""Tests for lib.finite_size and scripts/make_finite_size.py.

- the stored data can be regenerated: rows of lib/data/finite_size_smoke.csv (and one d = 20
  row of linear_points) are recomputed from their recorded seeds;
- every data file matches the experiment grid of the script (seeds, parameters, columns);
- extrapolate recovers known e_inf, c and b, and its chi^2 test rejects a wrong law;
- load / table / summarize round trips, and bad input fails with a clear message.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from lib import finite_size
from lib import finite_size as fs

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_finite_size.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("make_finite_size", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it is executed
    spec.loader.exec_module(module)
    return module


mfs = _load_script()


def _spec_for(row: dict) -> "mfs.RowSpec":
    """The script's RowSpec of a stored row (same experiment grid, same label/variant/d/draw)."""
    for spec in mfs.row_specs(row["experiment"]):
        if (spec.label, spec.variant, spec.d, spec.draw) == (row["label"], row["variant"], row["d"], row["draw"]):
            return spec
    raise AssertionError(f"row {row} is not in the grid of experiment {row['experiment']!r}")


def _assert_row_reproduced(row: dict) -> None:
    spec = _spec_for(row)
    assert spec.seed == row["seed"]
    new = mfs.run_row(spec)
    for key in ("icl", "idg", "icl_se", "idg_se"):
        assert_allclose(new[key], row[key], rtol=1e-6, atol=1e-12, err_msg=key)
    for key in ("experiment", "label", "teacher", "variant", "d", "draw", "seed", "n_test", "method"):
        assert new[key] == row[key], key


# ----------------------------------------------------------------------------------------
# regenerating stored entries
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label, variant, d, draw",
    [
        ("theory_check", "linear", 12, 0),  # exact errors
        ("relu", "teacher", 16, 1),  # Monte Carlo, nonlinear teacher
        ("relu", "gaussian", 12, 0),  # Gaussian-equivalent teacher
        ("h2", "noise", 16, 0),  # pure noise, kappa = inf
    ],
)
def test_smoke_rows_regenerate(label, variant, d, draw):
    rows = fs.load("smoke")
    (row,) = [r for r in rows if (r["label"], r["variant"], r["d"], r["draw"]) == (label, variant, d, draw)]
    _assert_row_reproduced(row)


def test_linear_points_small_row_regenerates():
    if "linear_points" not in fs.available_experiments():
        pytest.skip("lib/data/finite_size_linear_points.csv not generated yet")
    row = fs.table("linear_points", label="theory_check", d=20, draw=0)
    _assert_row_reproduced({k: v[0].item() for k, v in row.items()})


@pytest.mark.parametrize("experiment", sorted(fs.available_experiments()))
def test_data_files_match_the_script(experiment):
    """Every stored row is a row of the script's grid, with its seed and parameters."""
    rows = fs.load(experiment)
    assert rows, experiment
    keys = set()
    for row in rows:
        spec = _spec_for(row)
        key = (row["label"], row["variant"], row["d"], row["draw"])
        assert key not in keys, f"duplicate row {key}"
        keys.add(key)
        assert row["seed"] == spec.seed
        for name in ("alpha", "kappa", "tau", "rho", "lam"):
            assert row[name] == getattr(spec, name), name
        assert row["n_test"] == spec.n_test
        assert math.isfinite(row["icl"]) and math.isfinite(row["idg"]) and row["icl"] > 0
    meta = json.loads((fs.DATA_DIR / f"finite_size_{experiment}.json").read_text())
    for key in (
        "command",
        "parameters",
        "seeds",
        "lib_version",
        "git_commit",
        "date",
        "machine",
        "numpy",
        "scipy",
        "total_seconds",
    ):
        assert key in meta, key
    assert meta["rows"] == len(rows)
    assert meta["seeds"]["base_seed"] == mfs.BASE_SEED


def test_variants_share_seeds_and_seeds_are_distinct():
    specs = mfs.row_specs("teachers")
    by_cell: dict = {}
    for s in specs:
        by_cell.setdefault((s.config_index, s.d, s.draw), set()).add(s.seed)
    assert all(len(seeds) == 1 for seeds in by_cell.values())  # common random numbers
    seeds = [next(iter(v)) for v in by_cell.values()]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**63 for s in seeds)
    assert mfs.row_seed(1, 2, 100, 0) == mfs.row_seed(1, 2, 100, 0)


def test_stretched_configurations_are_well_formed():
    """The ``stretched`` grid: twins, distinct seeds, d up to >= 150, >= 4 draws, d-major order.

    Cheap: reads the configuration list and the row specs, runs no simulation.
    """
    from lib import teachers

    exp = mfs.EXPERIMENTS["stretched"]
    assert exp.index not in {e.index for e in mfs.EXPERIMENTS.values() if e.name != "stretched"}
    assert max(exp.dims) >= 150 and min(exp.draws[d] for d in exp.dims) >= 4
    labels = [c.label for c in exp.configs]
    assert len(set(labels)) == len(labels)
    for cfg in exp.configs:
        assert cfg.variants == ("teacher", "gaussian"), cfg.label  # every teacher has its twin
        assert cfg.teacher != "linear"
        for v in cfg.variants:  # every variant is defined (coefficient teachers included)
            _, rho_used = mfs.variant_teacher(cfg.teacher, v, cfg.rho)
            assert math.isfinite(rho_used) and rho_used >= cfg.rho
    a1_share = {}
    for t in {c.teacher for c in exp.configs}:
        f = np.asarray(mfs.COEFFICIENT_TEACHERS[t]) if t in mfs.COEFFICIENT_TEACHERS else t
        _, a1, ef2 = teachers.teacher_moments(f)
        a1_share[t] = a1**2 / ef2
    assert any(v < 1e-12 for v in a1_share.values())  # a teacher without a linear part
    assert any(v > 0.2 for v in a1_share.values())  # one with a large linear part
    assert any(0 < v <= 0.1 for v in a1_share.values())  # one with a small linear part
    points = {(c.alpha, c.kappa, c.tau, c.rho, c.lam) for c in exp.configs}
    assert {0.02, 0.5} <= {p[3] for p in points}
    for tau in (0.8, 1.25):
        assert {p[4] for p in points if p[2] == tau} >= {0.0, 0.01}
    assert {(k, t) for _, k, t, _, _ in points if k < 1} >= {(0.5, 0.5), (0.8, 0.5), (0.5, 3.0), (0.8, 3.0)}
    assert min(p[0] for p in points) == 0.5
    specs = mfs.row_specs("stretched")
    assert len(specs) == sum(exp.draws[d] for d in exp.dims) * 2 * len(exp.configs)
    by_cell: dict = {}
    for s in specs:
        by_cell.setdefault((s.config_index, s.d, s.draw), set()).add(s.seed)
    assert all(len(seeds) == 1 for seeds in by_cell.values())  # twins share the draw
    seeds = [next(iter(v)) for v in by_cell.values()]
    assert len(set(seeds)) == len(seeds)
    assert [s.d for s in specs] == sorted(s.d for s in specs)  # every config at small d first
    assert {(s.label, s.d) for s in specs if s.d == min(exp.dims)} == {(lab, min(exp.dims)) for lab in labels}


def test_stretched_coefficient_teacher_rows_run():
    """The teacher given by Hermite coefficients runs as a row, its twin on the same draw."""
    specs = [s for s in mfs.row_specs("stretched", dims=(8,), draws=1, n_test=500) if s.teacher == "0.3h1+h2"]
    assert {s.variant for s in specs} == {"teacher", "gaussian"}
    rows = {s.variant: mfs.run_row(s) for s in specs if s.label == "0.3h1+h2 rho=0.02"}
    assert rows["teacher"]["seed"] == rows["gaussian"]["seed"]
    for r in rows.values():
        assert r["teacher"] == "0.3h1+h2" and math.isfinite(r["icl"]) and r["icl"] > 0
    assert rows["teacher"]["icl"] != rows["gaussian"]["icl"]


def test_run_experiment_resumes(tmp_path):
    """A second run computes nothing; a truncated last line is dropped and recomputed."""
    log: list[str] = []
    path = mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=log.append)
    first = fs.load("smoke", data_dir=tmp_path)
    assert len(first) == 5
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=log.append)
    assert "0 to compute" in log[-2]
    text = path.read_text().splitlines()
    path.write_text("\n".join(text[:-1] + [text[-1][:20]]) + "\n")  # an interrupted write
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=log.append)
    again = fs.load("smoke", data_dir=tmp_path)
    assert len(again) == 5
    assert_allclose([r["icl"] for r in again], [r["icl"] for r in first], rtol=1e-6)
    with pytest.raises(SystemExit, match="--fresh"):
        mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=300, log=log.append)
    path.write_text(path.read_text() + text[-1] + "\n")  # a row written twice
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=log.append)
    assert len(fs.load("smoke", data_dir=tmp_path)) == 5
    # cut inside the last number, without a line break: the next row would be glued to it
    path.write_text(path.read_text()[:-3])
    with pytest.raises(ValueError, match="does not end with a line break"):
        fs.load("smoke", data_dir=tmp_path)
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=log.append)
    assert any("dropped the cut last line" in m for m in log) and "1 to compute" in " ".join(log[-8:])
    assert len(fs.load("smoke", data_dir=tmp_path)) == 5
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=300, fresh=True, log=log.append)
    assert [r["n_test"] for r in fs.load("smoke", data_dir=tmp_path)] == [0, 300, 300, 300, 300]


def test_run_experiment_survives_a_replaced_file(tmp_path):
    """git stash/checkout replace the CSV by a new file mid-run: no row may be lost."""
    path = tmp_path / "finite_size_smoke.csv"
    header_only = tmp_path / "header.csv"
    mfs._write_rows(header_only, [])
    log: list[str] = []

    def replace_after_two_rows(msg: str) -> None:
        log.append(msg)
        if " 2/5 " in msg:  # as `git stash` does: a new file, without this run's rows
            os.replace(header_only, path)

    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=replace_after_two_rows)
    rows = fs.load("smoke", data_dir=tmp_path)
    assert len(rows) == 5, log
    assert any("was replaced" in m and "2 rows of this run restored" in m for m in log), log
    log.clear()
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=log.append)
    assert any("0 to compute" in m for m in log), log


def test_run_experiment_refuses_concurrent_writers(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / "finite_size_smoke.csv"
    mfs._write_rows(path, [])
    with path.open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SystemExit, match="another run"):
            mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=lambda m: None)


def test_script_rejects_unknown_experiment():
    with pytest.raises(ValueError, match="linear_points"):
        mfs.row_specs("linear_point")
    with pytest.raises(SystemExit):
        mfs.main(["no_such_experiment"])


# ----------------------------------------------------------------------------------------
# extrapolate
# ----------------------------------------------------------------------------------------

D = np.array([50.0, 100.0, 150.0, 200.0])


def test_extrapolate_exact_data():
    fit = fs.extrapolate(D, 1.65 - 4.0 / D, se=np.full(4, 1e-3))
    assert_allclose([fit.e_inf, fit.c, fit.b], [1.65, -4.0, 1.0], rtol=1e-10)
    assert fit.dof == 2 and fit.chi2 < 1e-16 and fit.p_value == pytest.approx(1.0)
    # standard errors of a linear fit depend only on d and se: check against the normal equations
    J = np.column_stack([np.ones(4), 1 / D]) / 1e-3
    assert_allclose([fit.e_inf_se, fit.c_se], np.sqrt(np.diag(np.linalg.inv(J.T @ J))), rtol=1e-10)


@settings(max_examples=25, deadline=None)
@given(
    e_inf=st.floats(0.1, 3.0),
    c=st.floats(-10.0, 10.0),
    b=st.floats(0.5, 2.0),
)
def test_extrapolate_recovers_parameters_of_exact_data(e_inf, c, b):
    d = np.array([20.0, 40.0, 60.0, 100.0, 150.0, 200.0])
    e = e_inf + c / d**b
    fixed = fs.extrapolate(d, e, se=np.full(d.size, 1e-3), power=b)
    assert_allclose([fixed.e_inf, fixed.c], [e_inf, c], rtol=1e-8, atol=1e-9)
    if abs(c) > 0.5:  # b is identifiable only when the correction is visible
        free = fs.extrapolate(d, e, se=np.full(d.size, 1e-4), power=None)
        assert_allclose([free.e_inf, free.c, free.b], [e_inf, c, b], rtol=1e-4, atol=1e-5)


def test_extrapolate_noisy_data_within_errors():
    """Over many synthetic data sets the fitted e_inf scatters as its standard error says."""
    rng = np.random.default_rng(7)
    se = np.array([4e-3, 3e-3, 2e-3, 2e-3])
    pulls, pvalues = [], []
    for _ in range(400):
        e = 1.2 + 5.0 / D + se * rng.standard_normal(4)
        fit = fs.extrapolate(D, e, se)
        pulls.append((fit.e_inf - 1.2) / fit.e_inf_se)
        pvalues.append(fit.p_value)
    assert abs(np.mean(pulls)) < 0.15
    assert 0.88 < np.std(pulls) < 1.12
    assert 0.4 < np.mean(pvalues) < 0.6  # uniform p-values under the right law


def test_extrapolate_power_fit_and_chi2_test():
    rng = np.random.default_rng(3)
    d = np.array([20.0, 40.0, 60.0, 100.0, 150.0, 200.0])
    se = np.full(d.size, 2e-4)
    e = 1.0 + 5.0 / d**1.5 + se * rng.standard_normal(d.size)
    free = fs.extrapolate(d, e, se, power=None)
    assert abs(free.b - 1.5) < 4 * free.b_se and free.b_se < 0.05
    assert abs(free.e_inf - 1.0) < 4 * free.e_inf_se
    assert free.p_value > 0.01
    wrong = fs.extrapolate(d, e, se)  # 1/d on 1/d^1.5 data: rejected
    assert wrong.p_value < 1e-6


def test_extrapolate_without_se_uses_residual_scale():
    rng = np.random.default_rng(11)
    d = np.repeat(D, 5)
    e = 0.8 + 3.0 / d + 1e-3 * rng.standard_normal(d.size)
    fit = fs.extrapolate(d, e)
    assert math.isnan(fit.p_value) and fit.dof == d.size - 2
    assert abs(fit.e_inf - 0.8) < 4 * fit.e_inf_se < 4e-3


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((D, np.ones(3)), {}, "same length"),
        ((D, np.ones(4), np.zeros(4)), {}, "se must be >"),
        ((D, np.ones(4), np.ones(3)), {}, "se must have the shape"),
        ((-D, np.ones(4)), {}, "d must be >"),
        ((D[:2], np.ones(2)), {}, "at least 2 distinct"),
        ((D[:3], np.ones(3)), {"power": None}, "at least 3 distinct"),
        ((D, np.ones(4)), {"power": 0.0}, "power must be >"),
        ((D, np.array([1.0, np.nan, 1.0, 1.0])), {}, "e must not be NaN"),
    ],
)
def test_extrapolate_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fs.extrapolate(*args, **kwargs)


# ----------------------------------------------------------------------------------------
# load / table / summarize
# ----------------------------------------------------------------------------------------


def _write_csv(folder: Path, name: str, rows: list[dict]) -> None:
    with (folder / f"finite_size_{name}.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fs.COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _synthetic_rows() -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for variant in ("teacher", "gaussian"):
        for d, draws in ((10, 3), (20, 2), (40, 1)):
            for draw in range(draws):
                e = 1.0 + 2.0 / d + 0.01 * rng.standard_normal()
                rows.append(
                    {
                        "experiment": "toy",
                        "label": "relu",
                        "teacher": "relu",
                        "variant": variant,
                        "d": d,
                        "draw": draw,
                        "seed": 1000 * d + draw,
                        "alpha": 2.0,
                        "kappa": math.inf,
                        "tau": 3.0,
                        "rho": 0.1,
                        "lam": 0.0,
                        "icl": e,
                        "icl_se": 0.004,
                        "idg": e - 0.1,
                        "idg_se": 0.003,
                        "n_test": 500,
                        "method": "dense",
                        "seconds": 0.5,
                    }
                )
    return rows


def test_load_table_summarize_round_trip(tmp_path):
    rows = _synthetic_rows()
    _write_csv(tmp_path, "toy", rows)
    assert fs.available_experiments(tmp_path) == ["toy"]
    loaded = fs.load("toy", data_dir=tmp_path)
    assert loaded == rows  # floats written with full precision; inf survives
    assert isinstance(loaded[0]["d"], int) and isinstance(loaded[0]["kappa"], float)

    t = fs.table("toy", data_dir=tmp_path, variant="teacher", kappa=np.inf)
    assert set(t) == set(fs.COLUMNS) and t["d"].dtype == np.int64 and t["icl"].size == 6
    assert fs.table("toy", data_dir=tmp_path, variant="teacher", d=[10, 40])["d"].tolist() == [10, 10, 10, 40]

    s = fs.summarize(t)
    assert s["d"].tolist() == [10, 20, 40] and s["draws"].tolist() == [3, 2, 1]
    e10 = [r["icl"] for r in rows if r["variant"] == "teacher" and r["d"] == 10]
    assert_allclose(s["icl"][0], np.mean(e10))
    assert_allclose(s["icl_se"][0], np.sqrt(max(np.var(e10, ddof=1), 0.004**2) / 3))
    assert s["icl_se"][2] == 0.004 and s["idg_se"][2] == 0.003  # one draw: Monte Carlo se
    assert np.all(s["icl_se"] >= 0.004 / np.sqrt(s["draws"]) * (1 - 1e-12))  # Monte Carlo floor
    s_rows = fs.summarize([r for r in loaded if r["variant"] == "teacher"])
    for key in s:
        assert_allclose(s_rows[key], s[key])

    summary, fit = fs.fit("toy", data_dir=tmp_path, quantity="idg", variant="gaussian")
    assert fit.dof == 1 and summary["d"].tolist() == [10, 20, 40]


def test_gap_is_the_paired_difference(tmp_path):
    rows = _synthetic_rows()
    _write_csv(tmp_path, "toy", rows)
    g = fs.gap("toy", ("teacher", "gaussian"), data_dir=tmp_path, label="relu")
    assert g["d"].tolist() == [10, 20, 40] and g["draws"].tolist() == [3, 2, 1]
    by = {(r["variant"], r["d"], r["draw"]): r["icl"] for r in rows}
    diffs = [by["teacher", 10, j] - by["gaussian", 10, j] for j in range(3)]
    assert_allclose(g["gap"][0], np.mean(diffs))
    assert_allclose(g["gap_se"][0], np.std(diffs, ddof=1) / np.sqrt(3))
    assert_allclose(g["gap_se"][2], np.hypot(0.004, 0.004))  # one draw: Monte Carlo errors
    with pytest.raises(ValueError, match="variants"):
        fs.gap("toy", ("teacher",), data_dir=tmp_path)
    with pytest.raises(ValueError, match="variant"):
        fs.gap("toy", data_dir=tmp_path, variant="teacher")
    with pytest.raises(ValueError, match="values present"):
        fs.gap("toy", ("teacher", "noise"), data_dir=tmp_path)


def test_smoke_gaussian_variant_shares_the_draws():
    """Common random numbers: an already-linear teacher equals its Gaussian equivalent row by row."""
    spec = next(s for s in mfs.row_specs("smoke", dims=(8,), draws=1, n_test=300) if s.variant == "teacher")
    lin = mfs.RowSpec(**{**spec.__dict__, "teacher": "offset"})
    a = mfs.run_row(lin)
    b = mfs.run_row(mfs.RowSpec(**{**lin.__dict__, "variant": "gaussian"}))
    assert_allclose([a["icl"], a["idg"]], [b["icl"], b["idg"]], rtol=1e-9)


def test_table_and_summarize_errors(tmp_path):
    _write_csv(tmp_path, "toy", _synthetic_rows())
    with pytest.raises(ValueError, match=r"\['toy'\]"):
        fs.load("nonexistent", data_dir=tmp_path)
    with pytest.raises(ValueError, match="experiment must be one of"):
        fs.table(3, data_dir=tmp_path)
    with pytest.raises(ValueError, match="unknown"):
        fs.table("toy", data_dir=tmp_path, colour="red")
    with pytest.raises(ValueError, match="values present"):
        fs.table("toy", data_dir=tmp_path, variant="noise")
    with pytest.raises(ValueError, match="variant"):
        fs.summarize(fs.table("toy", data_dir=tmp_path))  # two configurations mixed
    with pytest.raises(TypeError):
        fs.summarize(3.0)
    with pytest.raises(ValueError):
        fs.summarize([])
    with pytest.raises(ValueError, match="quantity"):
        fs.fit("toy", data_dir=tmp_path, quantity="mse", variant="teacher")
    (tmp_path / "finite_size_bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="columns"):
        fs.load("bad", data_dir=tmp_path)


def test_default_data_dir_is_the_package_data_folder():
    import importlib.resources

    assert fs.DATA_DIR == Path(str(importlib.resources.files("lib") / "data"))
    assert fs.DATA_DIR == Path(fs.__file__).resolve().parent.parent / "data"
    assert "smoke" in fs.available_experiments()


@pytest.mark.slow
def test_rows_do_not_depend_on_the_number_of_workers(tmp_path):
    """The same rows, to the last digit, in-process and on 1 or 2 Dask workers."""
    pytest.importorskip("dask.distributed")
    tables = []
    for workers in (0, 1, 2):
        out = tmp_path / f"w{workers}"
        client = None if workers == 0 else mfs.start_client(workers)
        try:
            mfs.run_experiment("smoke", out, dims=(8, 12), draws=1, n_test=300, log=lambda m: None, client=client)
        finally:
            if client is not None:
                cluster = client.cluster
                client.close()
                cluster.close()
        rows = fs.load("smoke", data_dir=out)
        key = ("label", "variant", "d", "draw")
        tables.append({tuple(r[k] for k in key): r for r in rows})
    assert len(tables[0]) == 10
    for other in tables[1:]:
        assert other.keys() == tables[0].keys()
        for k, row in tables[0].items():
            for col in ("seed", "n_test", "method"):
                assert other[k][col] == row[col]
            for col in ("icl", "idg", "icl_se", "idg_se"):
                assert_allclose(other[k][col], row[col], rtol=1e-12, err_msg=f"{k} {col}")


def test_run_experiment_labels_select_configurations(tmp_path):
    mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=lambda m: None, labels=("h2",))
    rows = fs.load("smoke", data_dir=tmp_path)
    assert {r["label"] for r in rows} == {"h2"} and len(rows) == 2
    with pytest.raises(SystemExit, match="unknown label"):
        mfs.run_experiment("smoke", tmp_path, dims=(8,), draws=1, n_test=200, log=lambda m: None, labels=("nope",))


# ----------------------------------------------------------------------------------------
# load: every row is checked, errors say path:line: column: problem
# ----------------------------------------------------------------------------------------


def _good_lines(tmp_path: Path) -> list[str]:
    _write_csv(tmp_path, "toy", _synthetic_rows()[:3])
    return (tmp_path / "finite_size_toy.csv").read_text().splitlines()


def _set_field(line: str, column: str, text: str) -> str:
    fields = line.split(",")
    fields[fs.COLUMNS.index(column)] = text
    return ",".join(fields)


@pytest.mark.parametrize(
    "edit, line, match",
    [
        (lambda ls: ls[:3] + [",".join(ls[3].split(",")[:7])], 4, "alpha: missing; the row has 7 of the 19"),
        (lambda ls: ls[:2] + [ls[2] + ",extra"] + ls[3:], 3, "field 20: extra field 'extra'"),
        (lambda ls: ls[:2] + [ls[0]] + ls[2:], 3, "header: a repeated header"),
        (lambda ls: ls[:1] + [_set_field(ls[1], "d", "12.0")] + ls[2:], 2, "d: '12.0' is not an integer"),
        (lambda ls: ls[:3] + [_set_field(ls[3], "seed", "1_000")], 4, "seed: '1_000' is not an integer"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "n_test", "-1")] + ls[3:], 3, "n_test: -1 is not allowed"),
        # beyond int64 (before: loaded; table and summarize then raised a bare OverflowError)
        (lambda ls: ls[:2] + [_set_field(ls[2], "seed", str(2**63))] + ls[3:], 3, f"seed: {2**63} is not allowed"),
        (
            lambda ls: ls[:1] + [_set_field(ls[1], "d", str(2**70))] + ls[2:],
            2,
            f"d: {2**70} is not allowed; it must be <=",
        ),
        (lambda ls: ls[:2] + [_set_field(ls[2], "draw", "")] + ls[3:], 3, "draw: '' is not an integer"),
        (lambda ls: ls[:1] + [_set_field(ls[1], "icl", "0.8x")] + ls[2:], 2, "icl: '0.8x' is not a number"),
        (lambda ls: ls[:1] + [_set_field(ls[1], "alpha", " 2.0")] + ls[2:], 2, "alpha: ' 2.0' is not a number"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "icl", "nan")] + ls[3:], 3, "icl: 'nan' is not allowed"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "idg", "inf")] + ls[3:], 3, "idg: 'inf' is not allowed"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "icl_se", "inf")] + ls[3:], 3, "icl_se: 'inf' is not allowed"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "idg_se", "nan")] + ls[3:], 3, "idg_se: 'nan' is not allowed"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "seconds", "inf")] + ls[3:], 3, "seconds: 'inf' is not allowed"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "kappa", "nan")] + ls[3:], 3, "kappa: 'nan' is not allowed"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "kappa", "-inf")] + ls[3:], 3, "kappa: '-inf' is not allowed"),
        (lambda ls: ls[:3] + [_set_field(ls[3], "icl_se", "-0.004")], 4, "icl_se: '-0.004' is negative"),
        # a negative parameter (before: loaded silently, a point of no model)
        (lambda ls: ls[:2] + [_set_field(ls[2], "alpha", "-1.0")] + ls[3:], 3, "alpha: '-1.0' is negative"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "kappa", "-0.5")] + ls[3:], 3, "kappa: '-0.5' is negative"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "tau", "-2")] + ls[3:], 3, "tau: '-2' is negative"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "rho", "-1e-3")] + ls[3:], 3, "rho: '-1e-3' is negative"),
        (lambda ls: ls[:2] + [_set_field(ls[2], "lam", "-0.1")] + ls[3:], 3, "lam: '-0.1' is negative"),
        (lambda ls: ls[:3] + [_set_field(ls[3], "idg_se", "-1e-3")], 4, "idg_se: '-1e-3' is negative"),
        (lambda ls: ls[:1] + [_set_field(ls[1], "variant", "")] + ls[2:], 2, "variant: empty"),
        (lambda ls: ls[:1] + ["", ""] + [_set_field(ls[1], "d", "x")] + ls[2:], 4, "d: 'x'"),  # blank lines count
        (lambda ls: [ls[0].replace("icl_se", "icl_err")] + ls[1:], 1, "header: must be the columns"),
    ],
)
def test_load_rejects_a_bad_row_with_its_line(tmp_path, edit, line, match):
    lines = _good_lines(tmp_path)
    path = tmp_path / "finite_size_toy.csv"
    path.write_text("\n".join(edit(lines)) + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:{line}: {re.escape(match)}"):
        fs.load("toy", data_dir=tmp_path)


@pytest.mark.parametrize("wanted", [None, True, np.bool_(False), {"a": 1}, np.array([12, 16]), [12, None], (b"relu",)])
def test_table_refuses_a_filter_that_is_no_value(wanted):
    # before: a bare TypeError from the comparison (None, a dict), an ambiguous truth value
    # (an array), or, for a bool, "no row matches" as if True were a dimension
    with pytest.raises(
        TypeError, match=r"^filter d must be a str, a real number, or a list, tuple or set of them; got "
    ):
        fs.table("smoke", d=wanted)
    assert fs.table("smoke", d=[12, np.int64(16)], kappa=np.inf)["d"].size > 0


def test_load_line_numbers_count_physical_lines(tmp_path):
    """A quoted field spanning two lines is refused (a line break is not text), at the
    physical line where its row starts; after blank lines too."""
    lines = _good_lines(tmp_path)
    lines[2] = _set_field(lines[2], "method", '"dense\nsecond line"')
    path = tmp_path / "finite_size_toy.csv"
    path.write_text("\n".join(lines[:1] + ["", ""] + lines[1:]) + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:5: method: 'dense\\\\nsecond line' has the control"):
        fs.load("toy", data_dir=tmp_path)
    # a NUL byte in a text column, and a row of another experiment
    path.write_text("\n".join([lines[0], _set_field(lines[1], "label", "re\x00lu")]) + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:2: label: 're\\\\x00lu' has the control"):
        fs.load("toy", data_dir=tmp_path)
    path.write_text("\n".join([lines[0], _set_field(lines[1], "experiment", "teachers")]) + "\n")
    with pytest.raises(
        ValueError, match=f"^{re.escape(str(path))}:2: experiment: 'teachers' in the file of experiment 'toy'"
    ):
        fs.load("toy", data_dir=tmp_path)


def test_load_accepts_a_byte_order_mark_and_infinite_kappa(tmp_path):
    lines = _good_lines(tmp_path)
    path = tmp_path / "finite_size_toy.csv"
    path.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    rows = fs.load("toy", data_dir=tmp_path)
    assert rows == _synthetic_rows()[:3] and rows[0]["kappa"] == math.inf


def test_stored_tables_load():
    for experiment in fs.available_experiments():
        assert fs.load(experiment)


@pytest.mark.parametrize("column", ["icl", "icl_se", "idg", "idg_se"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_summarize_refuses_non_finite_values(column, bad):
    rows = [r for r in _synthetic_rows() if r["variant"] == "teacher"]
    rows[4] = dict(rows[4], **{column: bad})
    with pytest.raises(ValueError, match=f"column '{column}'; row 4 \\(d = 20\\)"):
        fs.summarize(rows)
    table = {k: np.array([r[k] for r in rows]) for k in fs.COLUMNS}
    with pytest.raises(ValueError, match=f"column '{column}'"):
        fs.summarize(table)


@pytest.mark.parametrize("column", ["icl_se", "idg_se"])
def test_summarize_refuses_negative_se(column):
    rows = [dict(r, **{column: -0.004}) for r in _synthetic_rows() if r["variant"] == "teacher"]
    with pytest.raises(ValueError, match=f"finite and >= 0 values in column '{column}'"):
        fs.summarize(rows)


# ----------------------------------------------------------------------------------------
# fits: degenerate or badly scaled input is refused early, or rescaled and answered correctly
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fs.extrapolate(D, 1 + 5 / D, power=1e6), r"power must be a fixed exponent in POWER_BOUNDS.*1000000"),
        (lambda: fs.extrapolate(D, 1 + 5 / D, power=1e-300), r"power must be .*POWER_BOUNDS.*got power = 1e-300"),
        (
            lambda: fs.extrapolate([1e-310, 2e-310, 3e-310], [1.0, 2.0, 3.0]),
            r"d must be positive normal floats.*1e-310",
        ),
        (
            lambda: fs.extrapolate_quadratic([1e-160, 1, 2, 3], [1.0, 2.0, 3.0, 4.0]),
            r"numerically singular.*d = \[1e-160",
        ),
        (lambda: fs.extrapolate([100.0, 100.0 + 1e-12, 100.0 + 2e-12], [1.0, 2.0, 3.0]), r"numerically singular"),
        (lambda: fs.slope_through_origin([1e-310, 2e-310], [1, 2], [1.0, 1.0]), r"d must be positive normal floats"),
        (lambda: fs.slope_through_origin([1e-200, 2e-200], [1, 2], [1e-200] * 2), r"c_se = 10\*\*-400.*rescale"),
    ],
)
def test_fits_refuse_degenerate_or_unrepresentable_input(call, match):
    # all="raise": no floating-point warning on the way to the error
    with np.errstate(all="raise"), pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("scale_d, scale_e", [(1.0, 1.0), (1e-150, 1.0), (1e150, 1.0), (1.0, 1e-150), (1e100, 1e-100)])
def test_fits_are_scale_invariant(scale_d, scale_e):
    """Rescaling d and e (and se) rescales the fitted parameters exactly; no nan, no LinAlgError."""
    d = np.array([20.0, 40.0, 60.0, 100.0, 150.0])
    rng = np.random.default_rng(5)
    se = np.full(d.size, 1e-3)
    e = 1.0 + 5.0 / d + 30.0 / d**2 + se * rng.standard_normal(d.size)
    ds, es, ses = d * scale_d, e * scale_e, se * scale_e
    ref, got = fs.extrapolate(d, e, se), fs.extrapolate(ds, es, ses)
    assert_allclose([got.e_inf, got.e_inf_se], [ref.e_inf * scale_e, ref.e_inf_se * scale_e], rtol=1e-9)
    assert_allclose([got.c, got.c_se], [ref.c * scale_e * scale_d, ref.c_se * scale_e * scale_d], rtol=1e-9)
    assert_allclose(got.chi2, ref.chi2, rtol=1e-9)
    ref, got = fs.extrapolate(d, e, se, power=None), fs.extrapolate(ds, es, ses, power=None)
    assert_allclose([got.e_inf, got.b, got.b_se], [ref.e_inf * scale_e, ref.b, ref.b_se], rtol=1e-4, atol=1e-8)
    assert_allclose(got.c, ref.c * scale_e * scale_d**ref.b, rtol=1e-3)
    ref, got = fs.extrapolate_quadratic(d, e, se), fs.extrapolate_quadratic(ds, es, ses)
    assert_allclose([got.c, got.c2_se], [ref.c * scale_e * scale_d, ref.c2_se * scale_e * scale_d**2], rtol=1e-8)
    ref, got = fs.slope_through_origin(d, e - 1.0, se), fs.slope_through_origin(ds, (e - 1.0) * scale_e, ses)
    assert_allclose(
        [got.c, got.c_se, got.chi2], [ref.c * scale_e * scale_d, ref.c_se * scale_e * scale_d, ref.chi2], rtol=1e-9
    )


def test_slope_through_origin_tiny_scales_gives_the_weighted_mean():
    # was nan: the weights 1/(d se)^2 overflowed
    fit = fs.slope_through_origin([1e-100, 2e-100], [1.0, 2.0], [1e-100] * 2)
    assert_allclose(fit.c, (1e-100 + 0.25 * 2 * 2e-100) / 1.25, rtol=1e-12)
    assert_allclose(fit.c_se, 1e-200 / math.sqrt(1.25), rtol=1e-12)


@pytest.mark.parametrize("power", [fs.POWER_BOUNDS[0], 0.5, 3.0, fs.POWER_BOUNDS[1]])
def test_extrapolate_fixed_power_over_its_whole_range(power):
    d = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 12.0])
    fit = fs.extrapolate(d, 0.7 + 3.0 * d**-power, se=np.full(d.size, 1e-3), power=power)
    assert_allclose([fit.e_inf, fit.c], [0.7, 3.0], rtol=1e-7)


def test_quadratic_fit_recovers_exact_law_and_reduces_to_linear():
    d = np.array([20.0, 40.0, 60.0, 100.0, 150.0, 200.0])
    q = fs.extrapolate_quadratic(d, 1.2 + 3.0 / d + 50.0 / d**2, se=np.full(6, 1e-3))
    assert_allclose([q.e_inf, q.c, q.c2], [1.2, 3.0, 50.0], atol=1e-9)
    assert q.dof == 3 and q.chi2 == pytest.approx(0.0, abs=1e-12)
    # no 1/d^2 term in the data: same intercept as the 1/d fit, c2 ~ 0
    e = 0.8 + 2.0 / d
    q1, f1 = (
        fs.extrapolate_quadratic(d, e, np.full(6, 1e-3)),
        fs.extrapolate(d, e, np.full(6, 1e-3)),
    )
    assert_allclose([q1.e_inf, q1.c, q1.c2], [f1.e_inf, f1.c, 0.0], atol=1e-9)


def test_quadratic_fit_errors_match_monte_carlo():
    rng = np.random.default_rng(7)
    d = np.array([20.0, 30.0, 40.0, 60.0, 100.0, 200.0])
    se = np.full(d.size, 0.01)
    fits = [
        fs.extrapolate_quadratic(d, 1.0 + 2.0 / d + 20 / d**2 + se * rng.standard_normal(6), se) for _ in range(2000)
    ]
    e_inf = np.array([f.e_inf for f in fits])
    assert np.std(e_inf) == pytest.approx(fits[0].e_inf_se, rel=0.08)
    p = np.array([f.p_value for f in fits])
    assert 0.4 < np.mean(p) < 0.6  # p-values uniform under the model


def test_quadratic_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="distinct"):
        fs.extrapolate_quadratic([20, 40, 40, 40], [1, 1, 1, 1], [0.1] * 4)
    with pytest.raises(ValueError, match="se"):
        fs.extrapolate_quadratic([20, 40, 60, 80], [1, 1, 1, 1], [0.1, 0.1, 0.0, 0.1])


def test_point_label():
    par = dict(alpha=1.0, kappa=0.5, tau=2.0, rho=0.01, lam=0.0)
    assert fs.point_label(par) == "$(1, 0.5, 2, 0.01, 0)$"
    assert r"\infty" in fs.point_label({**par, "kappa": np.inf})
    with pytest.raises(ValueError, match="lam"):
        fs.point_label({k: v for k, v in par.items() if k != "lam"})
    with pytest.raises(ValueError, match="tau"):
        fs.point_label({**par, "tau": np.inf})


def test_floored_se():
    out = finite_size.floored_se([0.01, 0.001], [4, 4], [1e-4, 1e-4])
    assert_allclose(out, [0.01, np.sqrt(1e-4 / 4)])
    with pytest.raises(ValueError, match="draws"):
        finite_size.floored_se([0.01], [0], 1e-4)


def test_slope_through_origin_exact_and_p_value():
    d = np.array([50.0, 100.0, 150.0, 200.0])
    fit = finite_size.slope_through_origin(d, 1.5 / d, np.full(4, 1e-3))
    assert_allclose([fit.c, fit.chi2], [1.5, 0.0], atol=1e-10)
    assert fit.dof == 3 and fit.p_value == pytest.approx(1.0)
    # standard error: (sum 1/(d se)^2)^(-1/2)
    assert_allclose(fit.c_se, 1 / np.sqrt(np.sum(1 / (d * 1e-3) ** 2)))
    bad = finite_size.slope_through_origin(d, 0.02 + 0 * d, np.full(4, 1e-3))
    assert bad.p_value < 1e-6  # a constant gap is not c/d
    with pytest.raises(ValueError, match="at least 2"):
        finite_size.slope_through_origin([50.0], [0.1], [0.01])


def test_extrapolate_summary_d_min():
    d = np.array([50, 100, 150, 200])
    s = {"d": d, "icl": 1 + 5 / d, "icl_se": np.full(4, 1e-3), "idg": 2 + 1 / d, "idg_se": np.full(4, 1e-3)}
    assert_allclose(finite_size.extrapolate_summary(s).e_inf, 1.0, atol=1e-9)
    assert_allclose(finite_size.extrapolate_summary(s, "idg", d_min=100).e_inf, 2.0, atol=1e-9)
    with pytest.raises(ValueError, match="quantity"):
        finite_size.extrapolate_summary(s, "x")


def test_fits_for_and_gap_for_on_the_stored_study():
    fits = finite_size.fits_for("h2_study", ("teacher", "noise"), label="kappa=1.5")
    for v in ("teacher", "noise"):
        s = fits[v].summary
        assert np.all(s["draws"] >= 2)
        assert np.all(np.diff(s["d"]) > 0)
        assert fits[v].fit.dof == s["d"].size - 2
    g = finite_size.gap_for("h2_study", ("teacher", "noise"), label="kappa=1.5")
    raw = finite_size.gap("h2_study", ("teacher", "noise"), label="kappa=1.5")
    keep = np.isin(raw["d"], g.gap["d"])
    assert_allclose(g.gap["gap"], raw["gap"][keep])
    assert np.all(g.gap["gap_se"] >= raw["gap_se"][keep] - 1e-15)  # floored, never smaller
    with pytest.raises(ValueError, match="variant"):
        finite_size.fits_for("h2_study", ("teacher",), variant="noise")
    with pytest.raises(ValueError, match="min_draws"):
        finite_size.gap_for("h2_study", ("teacher", "noise"), min_draws=0, label="kappa=1.5")


# --------------------------------------------------------------------------------------
# finite_size.extrapolate without standard errors
# --------------------------------------------------------------------------------------
def test_extrapolate_without_se_matches_ordinary_least_squares():
    """se=None: equal weights and the error scale from the residuals, RSS/(m - 2), exactly
    what scipy.stats.linregress reports for e against 1/d."""
    rng = np.random.default_rng(3)
    d = np.array([30, 40, 50, 70, 100, 150, 200, 300], float)
    e = 1.2 + 4.0 / d + 0.01 * rng.standard_normal(d.size)
    fit = finite_size.extrapolate(d, e)
    ref = stats.linregress(1 / d, e)
    assert_allclose([fit.e_inf, fit.c], [ref.intercept, ref.slope], rtol=1e-10)
    assert_allclose([fit.e_inf_se, fit.c_se], [ref.intercept_stderr, ref.stderr], rtol=1e-10)
    assert fit.dof == d.size - 2 and np.isnan(fit.p_value)
    # the scale follows the scatter: 10x the noise gives ~10x the error bars
    big = finite_size.extrapolate(d, 1.2 + 4.0 / d + 0.1 * (e - 1.2 - 4.0 / d) / 0.01)
    assert_allclose(big.e_inf_se, 10 * fit.e_inf_se, rtol=1e-8)


def test_extrapolate_free_power_without_se_uses_the_residual_scale():
    from scipy.optimize import curve_fit

    rng = np.random.default_rng(5)
    d = np.array([30, 40, 50, 70, 100, 150, 200, 300], float)
    e = 1.2 + 4.0 / d**1.3 + 0.002 * rng.standard_normal(d.size)
    fit = finite_size.extrapolate(d, e, power=None)

    def model(x, a, c, b):
        return a + c * x**-b

    p, cov = curve_fit(model, d, e, p0=[1.2, 4.0, 1.0], absolute_sigma=False, maxfev=10_000)
    assert_allclose([fit.e_inf, fit.c, fit.b], p, rtol=1e-5)
    assert_allclose([fit.e_inf_se, fit.c_se, fit.b_se], np.sqrt(np.diag(cov)), rtol=1e-3)


def test_weighted_mean_matches_hand_computation():
    x, se = np.array([1.0, 2.0, 4.0]), np.array([0.5, 1.0, 2.0])
    w = 1 / se**2
    m = finite_size.weighted_mean(x, se)
    assert_allclose(m.value, np.sum(w * x) / np.sum(w), rtol=1e-14)
    assert_allclose(m.se, 1 / np.sqrt(np.sum(w)), rtol=1e-14)
    chi2 = np.sum(((x - m.value) / se) ** 2)
    assert_allclose(m.chi2, chi2, rtol=1e-14)
    assert m.dof == 2
    assert_allclose(m.p_value, np.exp(-chi2 / 2), rtol=1e-12)  # chi^2 with 2 dof


@pytest.mark.parametrize(
    "x, se",
    [([1.0], [1.0]), ([1.0, 2.0], [1.0]), ([1.0, 2.0], [1.0, 0.0]), ([1.0, np.nan], [1.0, 1.0])],
)
def test_weighted_mean_rejects_bad_input(x, se):
    with pytest.raises(ValueError):
        finite_size.weighted_mean(x, se)


def test_t_quantile():
    assert_allclose(finite_size.t_quantile(4), 3.182446305284263, rtol=1e-10)
    assert_allclose(finite_size.t_quantile([8, 4, 6]), finite_size.t_quantile(4))
    assert_allclose(
        finite_size.t_quantile(2, level=0.5), 1.0, rtol=1e-9
    )  # Cauchy (scipy 1.11 at the floors: 1.3e-11 off)
    for bad in (1, [3, 2.5], 0):
        with pytest.raises(ValueError, match="draws"):
            finite_size.t_quantile(bad)
    with pytest.raises(ValueError, match="level"):
        finite_size.t_quantile(4, level=1.5)


# ----------------------------------------------------------------------------------------
# load on corrupted copies of a stored table: truncations, duplicates, the sidecar
# ----------------------------------------------------------------------------------------


def _stored_copy(tmp_path: Path, name: str = "teachers") -> Path:
    import shutil

    for ext in ("csv", "json"):
        shutil.copy(fs.DATA_DIR / f"finite_size_{name}.{ext}", tmp_path / f"finite_size_{name}.{ext}")
    return tmp_path / f"finite_size_{name}.csv"


def test_load_refuses_a_truncated_stored_table(tmp_path):
    path = _stored_copy(tmp_path)
    text = path.read_text()
    n = len(text.splitlines())
    where = re.escape(str(path))
    path.write_text(text[:-3])  # cut inside the last number (seconds): still a number
    with pytest.raises(ValueError, match=f"^{where}:{n}: seconds: the file does not end with a line break"):
        fs.load("teachers", data_dir=tmp_path)
    path.write_text(text[: text.rindex(",matfree,") + 3])  # cut inside the last row
    with pytest.raises(ValueError, match=f"^{where}:{n}: seconds: missing; the row has 18 of the 19"):
        fs.load("teachers", data_dir=tmp_path)
    path.write_text("".join(text.splitlines(keepends=True)[: n - 4]))  # cut at a line break
    with pytest.raises(ValueError, match=rf"^{where}:{n - 3}: \(end of file\): the file has {n - 5} rows, but "):
        fs.load("teachers", data_dir=tmp_path)
    path.write_text("")
    with pytest.raises(ValueError, match=f"^{where}:1: header: the file is empty"):
        fs.load("teachers", data_dir=tmp_path)
    path.write_bytes(text.encode()[:700] + b"\x80" + text.encode()[700:])
    with pytest.raises(ValueError, match=rf"^{where}:\d+: \(encoding\): not UTF-8"):
        fs.load("teachers", data_dir=tmp_path)
    path.write_text(text)
    (tmp_path / "finite_size_teachers.json").write_text("[1, 2")
    with pytest.raises(ValueError, match=r"finite_size_teachers.json:1: \(json\)"):
        fs.load("teachers", data_dir=tmp_path)


def test_load_refuses_a_repeated_row_instead_of_counting_it_as_a_draw(tmp_path):
    """make_finite_size.py drops repeated rows when it resumes, so a stored table never has one."""
    path = _stored_copy(tmp_path)
    (tmp_path / "finite_size_teachers.json").unlink()
    lines = path.read_text().splitlines()
    where = re.escape(str(path))
    path.write_text("\n".join(lines + [lines[5]]) + "\n")  # an exact copy
    with pytest.raises(
        ValueError, match=rf"^{where}:{len(lines) + 1}: \(row\): duplicate of line 6 \(same configuration, d and draw\)"
    ):
        fs.load("teachers", data_dir=tmp_path)
    other_seed = _set_field(lines[5], "seed", "12345")  # the same draw again, another seed
    path.write_text("\n".join(lines[:8] + [other_seed] + lines[8:]) + "\n")
    with pytest.raises(
        ValueError, match=rf"^{where}:9: \(row\): duplicate of line 6 \(same configuration, d and draw\)"
    ):
        fs.load("teachers", data_dir=tmp_path)
    other_draw = _set_field(lines[5], "draw", "99")  # the same seed under another draw number
    path.write_text("\n".join(lines[:8] + [other_draw] + lines[8:]) + "\n")
    with pytest.raises(
        ValueError, match=rf"^{where}:9: \(row\): duplicate of line 6 \(same configuration, d and seed\)"
    ):
        fs.load("teachers", data_dir=tmp_path)
    # the other variant of the same draw shares the seed (common random numbers): not a duplicate
    rows = fs.load("teachers")
    assert any(a["seed"] == b["seed"] and a["variant"] != b["variant"] for a, b in zip(rows, rows[1:]))


def test_load_names_the_first_misfit_of_a_row_with_a_field_left_out(tmp_path):
    path = _stored_copy(tmp_path)
    lines = path.read_text().splitlines()
    fields = lines[3].split(",")
    del fields[fs.COLUMNS.index("tau")]
    lines[3] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        ValueError,
        match=r":4: seconds: missing; the row has 18 of the 19 fields .* first field that does not fit is n_test = 'matfree'",
    ):
        fs.load("teachers", data_dir=tmp_path)


def test_stored_tables_have_exact_int_seeds_and_no_repeated_row():
    for name in fs.available_experiments():
        rows = fs.load(name)  # refuses repeated rows and a row count differing from the sidecar
        text = (fs.DATA_DIR / f"finite_size_{name}.csv").read_text().splitlines()[1:]
        assert [str(r["seed"]) for r in rows] == [t.split(",")[fs.COLUMNS.index("seed")] for t in text]
        assert all(type(r["seed"]) is int for r in rows)


# --------------------------------------------------------------------------------------
# finite_size.extrapolate through two dimensions, and finite_size.paired_limits
# --------------------------------------------------------------------------------------
def test_extrapolate_exact_fit_through_two_dimensions():
    """min_dof=0: e_inf + c/d through two points, with the propagated standard errors."""
    d, e, se = np.array([40.0, 60.0]), np.array([1.2, 1.1]), np.array([0.02, 0.01])
    f = fs.extrapolate(d, e, se, min_dof=0)
    e_inf = (d[1] * e[1] - d[0] * e[0]) / (d[1] - d[0])
    e_inf_se = np.hypot(d[1] * se[1], d[0] * se[0]) / (d[1] - d[0])
    assert_allclose([f.e_inf, f.e_inf_se], [e_inf, e_inf_se], rtol=1e-12)
    assert_allclose(f.e_inf + f.c / d, e, rtol=1e-12)
    assert f.dof == 0 and f.chi2 == 0.0 and math.isnan(f.p_value)
    # with a third point min_dof=0 changes nothing
    d3, e3, se3 = np.r_[d, 100.0], np.r_[e, 1.05], np.r_[se, 0.01]
    assert fs.extrapolate(d3, e3, se3, min_dof=0) == fs.extrapolate(d3, e3, se3)
    with pytest.raises(ValueError, match="3 points"):
        fs.extrapolate(d, e, se)  # the default keeps one degree of freedom
    with pytest.raises(ValueError, match="needs se"):
        fs.extrapolate(d, e, min_dof=0)
    with pytest.raises(ValueError, match="min_dof"):
        fs.extrapolate(d3, e3, se3, min_dof=2)
    with pytest.raises(TypeError, match="min_dof"):
        fs.extrapolate(d3, e3, se3, min_dof=0.0)
    with pytest.raises(ValueError, match="2 distinct"):
        fs.extrapolate([40.0, 40.0], e, se, min_dof=0)


def test_paired_limits_on_a_synthetic_table(tmp_path):
    rows = _synthetic_rows()  # d = 10, 20, 40 with 3, 2 and 1 draws
    _write_csv(tmp_path, "toy", rows)
    r = fs.paired_limits("toy", data_dir=tmp_path, label="relu")
    assert r.gap["d"].tolist() == [10, 20]  # d = 40 has a single draw
    ref = fs.gap_for("toy", ("teacher", "gaussian"), min_draws=1, data_dir=tmp_path, label="relu")
    for key in ("gap", "gap_se", "draws"):
        assert_allclose(r.gap[key], ref.gap[key][:2])
    exact = fs.extrapolate(r.gap["d"], r.gap["gap"], r.gap["gap_se"], min_dof=0)
    assert_allclose(r.gap_fit, exact) and r.gap_fit.dof == 0  # NaN p-values compare equal
    assert_allclose(r.t, stats.t.ppf(0.975, 1)) and r.gap_half_width == r.t * exact.e_inf_se
    for v in ("teacher", "gaussian"):
        s = fs.summarize(fs.table("toy", data_dir=tmp_path, variant=v, d=[10, 20]))
        assert_allclose(r.summaries[v]["icl"], s["icl"])
        assert_allclose(r.fits[v], fs.extrapolate(s["d"], s["icl"], s["icl_se"], min_dof=0))
    idg = fs.paired_limits("toy", quantity="idg", level=0.5, data_dir=tmp_path, label="relu")
    assert_allclose(idg.t, stats.t.ppf(0.75, 1))
    assert_allclose(idg.fits["teacher"].e_inf - idg.fits["gaussian"].e_inf, idg.gap_fit.e_inf, atol=1e-12)
    for kwargs, match in (
        (dict(min_draws=1), "min_draws"),
        (dict(min_draws=3), "two dimensions"),
        (dict(level=1.0), "level"),
        (dict(quantity="mse"), "quantity"),
        (dict(variant="teacher"), "variants"),
    ):
        with pytest.raises(ValueError, match=match):
            fs.paired_limits("toy", data_dir=tmp_path, **kwargs)


def test_paired_limits_agrees_with_gap_for_on_a_stored_table():
    """With four dimensions the gap's fit is gap_for's, the variants' those of fits_for."""
    r = fs.paired_limits("nonlinear_points", quantity="idg", label="relu alpha=1")
    g = fs.gap_for("nonlinear_points", ("teacher", "gaussian"), "idg", label="relu alpha=1")
    f = fs.fits_for("nonlinear_points", ("teacher", "gaussian"), "idg", label="relu alpha=1")
    assert r.gap_fit == g.fit and r.gap_fit.dof == r.gap["d"].size - 2 >= 1
    assert all(r.fits[v] == f[v].fit for v in f)
    assert_allclose(r.t, fs.t_quantile(r.gap["draws"]))


def test_cg_iterations_reads_the_method_column():
    its = finite_size.cg_iterations(finite_size.table("stretched"))
    assert its.shape == finite_size.table("stretched")["d"].shape
    assert np.nanmin(its) >= 1 and np.isnan(its).any() and not np.isnan(its).all()
    rows = [{"method": "matfree (7 CG iterations)"}, {"method": "dense"}, {"method": "matfree"}]
    assert_allclose(finite_size.cg_iterations(rows), [7, np.nan, np.nan])
    for bad in ("matfree (x CG iterations)", "lbfgs", "matfree (7 iterations)"):
        with pytest.raises(ValueError, match="method of row 0"):
            finite_size.cg_iterations({"method": np.array([bad])})
    with pytest.raises(TypeError, match="rows_or_table"):
        finite_size.cg_iterations(3)
    with pytest.raises(ValueError, match="no column 'method'"):
        finite_size.cg_iterations({"d": np.array([1])})
