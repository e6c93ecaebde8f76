"""Tests of the sweep helpers of lib.training_runs (numpy only, no JAX)."""

import json
import math
import re
import shutil
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import lib
from lib import loss_curves
from lib import training_runs as tr

ROWS = [
    {"kind": "softmax", "teacher": "h2", "d": 8.0, "icl": 1.0},
    {"kind": "softmax", "teacher": "h2", "d": 8.0, "icl": 1.2},
    {"kind": "softmax", "teacher": "h2", "d": 8.0, "icl": 1.4},
    {"kind": "softmax", "teacher": "h2", "d": 16.0, "icl": 2.0},
    {"kind": "softmax", "teacher": "h2", "d": 16.0, "icl": 2.2},
    {"kind": "linear", "teacher": "h2", "d": 8.0, "icl": 0.5},
]


def test_select_runs():
    assert tr.select_runs(ROWS, kind="linear") == [ROWS[-1]]
    assert len(tr.select_runs(ROWS, kind="softmax", d=8)) == 3  # int matches the float
    assert tr.select_runs(ROWS) == ROWS
    with pytest.raises(ValueError, match="columns"):
        tr.select_runs(ROWS, width=32)
    with pytest.raises(TypeError, match="rows"):
        tr.select_runs("rows")


def test_sweep_arrays_t_interval():
    out = tr.sweep_arrays(ROWS, "d", kind="softmax")
    assert_allclose(out["d"], [8.0, 16.0])
    assert_allclose(out["mean"], [1.2, 2.1])
    se8 = np.std([1.0, 1.2, 1.4], ddof=1) / np.sqrt(3)
    assert_allclose(out["se"][0], se8)
    assert list(out["count"]) == [3, 2]
    assert_allclose(out["half"][0], stats.t.ppf(0.975, 2) * se8)
    assert_allclose(out["half"][1], stats.t.ppf(0.975, 1) * out["se"][1])
    with pytest.raises(ValueError, match="no rows"):
        tr.sweep_arrays(ROWS, "d", kind="gru")
    with pytest.raises(ValueError, match="level"):
        tr.sweep_arrays(ROWS, "d", level=1.0, kind="softmax")


def test_welch_interval_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 4), rng.normal(0.0, 2.0, 6)
    out = tr.welch_interval(a.mean(), a.std(ddof=1) / 2, 4, b.mean(), b.std(ddof=1) / np.sqrt(6), 6)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert_allclose(out["t"], ref.statistic)
    assert_allclose(out["p"], ref.pvalue)
    # an infinitely well-measured second mean: one-sample t with n_a - 1 dof
    one = tr.welch_interval(1.0, 0.1, 3, 0.5, 0.01, np.inf)
    assert_allclose(one["dof"], 2.0 * (1 + 0.01**2 / 0.1**2) ** 2, rtol=1e-12)
    assert_allclose(one["half"], stats.t.ppf(0.975, one["dof"]) * np.hypot(0.1, 0.01))


def test_welch_interval_bad_input():
    with pytest.raises(ValueError, match="se_a"):
        tr.welch_interval(1.0, -0.1, 3, 0.0, 0.1, 3)
    with pytest.raises(ValueError, match="n_b"):
        tr.welch_interval(1.0, 0.1, 3, 0.0, 0.1, 1)
    with pytest.raises(ValueError, match="both be 0"):
        tr.welch_interval(1.0, 0.0, 3, 0.0, 0.0, 3)


# ----------------------------------------------------------------------------------------
# load_runs: every corruption of a stored sweep is a ValueError "<path>:<line>: <column>: ..."
# ----------------------------------------------------------------------------------------

COLS = tr.RUN_COLUMNS


def _copy(tmp_path, name="transformers"):
    """The stored sweep and its JSON sidecar, copied to tmp_path; returns the CSV's lines."""
    for ext in ("csv", "json"):
        shutil.copy(tr.DATA_DIR / f"training_{name}.{ext}", tmp_path / f"training_{name}.{ext}")
    return (tmp_path / f"training_{name}.csv").read_text().splitlines()


def _set(line, column, text):
    fields = line.split(",")
    fields[COLS.index(column)] = text
    return ",".join(fields)


def _drop(line, column):
    fields = line.split(",")
    del fields[COLS.index(column)]
    return ",".join(fields)


def _at(i, fn):
    """Replace line i (0-based) by fn(line)."""
    return lambda ls: ls[:i] + [fn(ls[i])] + ls[i + 1 :]


# (edit of the lines, the line reported, the message after "<path>:<line>: ")
CORRUPT_RUNS = {
    "missing field": (
        _at(5, lambda s: _drop(s, "alpha")),
        6,
        "seconds: missing; the row has 34 of the 35 fields (a truncated line, or a field left out?); the first "
        "field that does not fit is alpha = 'inf'",
    ),
    "missing last field": (_at(5, lambda s: _drop(s, "seconds")), 6, "seconds: missing; the row has 34 of the 35"),
    "missing text field": (_at(3, lambda s: _drop(s, "label")), 4, "seconds: missing; the row has 34 of the 35"),
    "extra field": (_at(2, lambda s: s + ",1.0"), 3, "field 36: extra field '1.0'"),
    "extra field inside": (
        _at(2, lambda s: s.replace(",h2,", ",h2,h2,", 1)),
        3,
        "field 36: extra field '96.23'; the row has 36 fields, the header 35; the first field that does not fit "
        "is d = 'h2'",
    ),
    "nan icl": (_at(1, lambda s: _set(s, "icl", "nan")), 2, "icl: 'nan' is not allowed"),
    "inf icl_se": (_at(1, lambda s: _set(s, "icl_se", "inf")), 2, "icl_se: 'inf' is not allowed"),
    "-inf kappa": (_at(1, lambda s: _set(s, "kappa", "-inf")), 2, "kappa: '-inf' is not allowed"),
    "nan kappa": (_at(1, lambda s: _set(s, "kappa", "NaN")), 2, "kappa: 'NaN' is not allowed"),
    "inf final_loss": (_at(4, lambda s: _set(s, "final_loss", "Infinity")), 5, "final_loss: 'Infinity' is not"),
    "unparsable number": (_at(1, lambda s: _set(s, "icl", "0.97x")), 2, "icl: '0.97x' is not a number"),
    "empty number": (_at(1, lambda s: _set(s, "alpha", "")), 2, "alpha: '' is not a number"),
    "number with spaces": (_at(1, lambda s: _set(s, "rho", " 0.1")), 2, "rho: ' 0.1' is not a number"),
    "comma decimal": (_at(1, lambda s: _set(s, "lr", '"0,003"')), 2, "lr: '0,003' is not a number"),
    "seed as float": (_at(1, lambda s: _set(s, "seed", "5.281334946490407e+18")), 2, "seed: '5.281334946490407e+18'"),
    "seed with .0": (_at(1, lambda s: _set(s, "seed", "5281334946490407161.0")), 2, "seed: '5281334946490407161.0'"),
    "negative seed": (_at(1, lambda s: _set(s, "seed", "-3")), 2, "seed: -3 is not allowed"),
    # beyond int64 (before: loaded; every table of the seeds then raised a bare OverflowError)
    "seed 2**63": (_at(1, lambda s: _set(s, "seed", str(2**63))), 2, f"seed: {2**63} is not allowed; it must be <= 2**63 - 1"),
    "steps 2**70": (_at(2, lambda s: _set(s, "steps", str(2**70))), 3, f"steps: {2**70} is not allowed; it must be <="),
    "d as float": (_at(1, lambda s: _set(s, "d", "8.0")), 2, "d: '8.0' is not an integer"),
    "zero d": (_at(1, lambda s: _set(s, "d", "0")), 2, "d: 0 is not allowed"),
    "negative error": (_at(1, lambda s: _set(s, "icl", "-0.5")), 2, "icl: '-0.5' is negative"),
    "negative alpha": (_at(1, lambda s: _set(s, "alpha", "-2.0")), 2, "alpha: '-2.0' is negative"),
    "negative rho": (_at(1, lambda s: _set(s, "rho", "-0.1")), 2, "rho: '-0.1' is negative"),
    "negative lr": (_at(1, lambda s: _set(s, "lr", "-0.003")), 2, "lr: '-0.003' is negative"),
    "empty text": (_at(1, lambda s: _set(s, "teacher", "")), 2, "teacher: empty"),
    "linear-attention column in a transformer row": (
        _at(1, lambda s: _set(s, "icl_ls", "0.5")),
        2,
        "icl_ls: 0.5 in a 'softmax' row",
    ),
    "control character in a text": (_at(1, lambda s: _set(s, "label", "h2\x00")), 2, "label: 'h2\\x00' has the control"),
    "row of another experiment": (
        _at(1, lambda s: _set(s, "experiment", "linear_attention")),
        2,
        "experiment: 'linear_attention' in the file of experiment 'transformers'",
    ),
    "header renamed": (_at(0, lambda s: s.replace("icl_se", "icl_err")), 1, "header: must be the columns"),
    "header columns swapped": (_at(0, lambda s: s.replace("alpha,kappa", "kappa,alpha")), 1, "header: must be"),
    "no header": (lambda ls: ls[1:], 1, "header: must be the columns"),
    "repeated header": (lambda ls: ls[:3] + [ls[0]] + ls[3:], 4, "header: a repeated header line"),
    "exact duplicate row": (lambda ls: ls[:10] + [ls[3]] + ls[10:], 11, "(row): duplicate of line 4 (same configuration and seed)"),
    "duplicate seed, other draw": (
        lambda ls: ls[:10] + [_set(ls[3], "draw", "7")] + ls[10:],
        11,
        "(row): duplicate of line 4 (same configuration and seed)",
    ),
    "duplicate draw, other seed": (
        lambda ls: ls[:10] + [_set(ls[3], "seed", "12345")] + ls[10:],
        11,
        "(row): duplicate of line 4 (same configuration and draw)",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CORRUPT_RUNS))
def test_load_runs_refuses_a_corrupted_sweep(tmp_path, case):
    edit, line, message = CORRUPT_RUNS[case]
    lines = _copy(tmp_path)
    new = edit(lines)
    (tmp_path / "training_transformers.json").unlink()  # the row count is tested below
    path = tmp_path / "training_transformers.csv"
    path.write_text("\n".join(new) + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:{line}: {re.escape(message)}"):
        tr.load_runs("transformers", tmp_path)


def test_load_runs_refuses_a_truncated_sweep(tmp_path):
    path = tmp_path / "training_transformers.csv"
    text = "\n".join(_copy(tmp_path)) + "\n"
    # cut inside the last number: "390.48" -> "390.4" is a valid number; the missing line break tells
    path.write_text(text[:-2])
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:55: seconds: the file does not end"):
        tr.load_runs("transformers", tmp_path)
    # cut inside the last row
    path.write_text(text[: text.rindex(",h2,") + 3])
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:55: d: missing; the row has 6"):
        tr.load_runs("transformers", tmp_path)
    # cut at a line break: the JSON sidecar records 54 rows
    path.write_text("".join(text.splitlines(keepends=True)[:50]))
    with pytest.raises(ValueError, match=r":51: \(end of file\): the file has 49 rows, but training_transformers.json"):
        tr.load_runs("transformers", tmp_path)
    # a row appended: also a mismatch with the record
    path.write_text(text + _set(text.splitlines()[1], "draw", "9").replace(",5281334946490407161,", ",1,") + "\n")
    with pytest.raises(ValueError, match="the file has 55 rows, but training_transformers.json records 54"):
        tr.load_runs("transformers", tmp_path)
    # an empty file, and bytes that are not UTF-8
    path.write_text("")
    with pytest.raises(ValueError, match=r":1: header: the file is empty"):
        tr.load_runs("transformers", tmp_path)
    path.write_bytes(text.encode()[:3000] + b"\xff\xfe" + text.encode()[3000:])
    with pytest.raises(ValueError, match=r"^\S+:\d+: \(encoding\): not UTF-8"):
        tr.load_runs("transformers", tmp_path)


def test_load_runs_refuses_an_empty_linear_attention_column(tmp_path):
    lines = _copy(tmp_path, "linear_attention")
    lines[7] = _set(lines[7], "gamma_norm", "")
    path = tmp_path / "training_linear_attention.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=":8: gamma_norm: empty; a linear_attention row must have a number"):
        tr.load_runs("linear_attention", tmp_path)


def test_load_runs_bad_sidecar_and_names(tmp_path):
    _copy(tmp_path)
    (tmp_path / "training_transformers.json").write_text("{ not json")
    with pytest.raises(ValueError, match=r"training_transformers.json:1: \(json\)"):
        tr.load_runs("transformers", tmp_path)
    # a sidecar of this file whose row count is not one: refused (it would switch off the
    # truncation check); a sidecar without a count leaves the check to the line breaks
    meta = json.loads((tr.DATA_DIR / "training_transformers.json").read_text())
    for rows in ("54", 54.0, True, -1, None):
        (tmp_path / "training_transformers.json").write_text(json.dumps({**meta, "rows": rows}))
        with pytest.raises(ValueError, match=r"training_transformers.json:1: rows: .* is not a row count"):
            tr.load_runs("transformers", tmp_path)
    # a sidecar that is JSON but no object (a list, a number, a string): refused, not
    # skipped (before, it switched the truncation check off without a word)
    for other in ([meta], 54, "training_transformers.csv", None):
        (tmp_path / "training_transformers.json").write_text(json.dumps(other))
        with pytest.raises(ValueError, match=r"training_transformers.json:1: \(json\): .* not an object"):
            tr.load_runs("transformers", tmp_path)
    (tmp_path / "training_transformers.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "rows"}))
    assert len(tr.load_runs("transformers", tmp_path)) == meta["rows"]
    with pytest.raises(ValueError, match="no file"):
        tr.load_runs("nope", tmp_path)
    with pytest.raises(ValueError, match="experiment must be"):
        tr.load_runs(3)


def test_stored_sweeps_load_with_exact_integer_seeds():
    for name in ("transformers", "linear_attention"):
        rows = tr.load_runs(name)
        text = (tr.DATA_DIR / f"training_{name}.csv").read_text().splitlines()[1:]
        assert len(rows) == len(text)
        for row, line in zip(rows, text):
            assert type(row["seed"]) is int and str(row["seed"]) == line.split(",")[COLS.index("seed")]
            assert all(type(row[k]) is int for k in ("d", "draw", "n_test", "width", "steps"))
        la = row["kind"] == "linear_attention"
        assert (row["icl_ls"] is not None) == la
    # a 63-bit seed is not a float: float() would have merged neighbouring seeds
    seed = tr.load_runs("transformers")[0]["seed"]
    assert seed > 2**53 and float(seed) == float(seed + 1) and seed != seed + 1


def test_make_training_writes_seeds_as_integers_and_resumes_by_exact_seed():
    """The writer puts the spec's int seed in the CSV; the resume check compares it exactly."""
    import importlib.util

    pytest.importorskip("jax")  # the script imports lib.training
    script = tr.DATA_DIR.parent.parent / "scripts" / "make_training.py"
    if not script.exists():
        pytest.skip("scripts/ is not next to lib (an installed package)")
    spec = importlib.util.spec_from_file_location("make_training", script)
    mt = importlib.util.module_from_spec(spec)
    sys.modules["make_training"] = mt  # dataclasses look their module up there
    spec.loader.exec_module(mt)
    row = mt.row_specs("transformers")[0]
    assert type(row.seed) is int and row.seed >= 2**53
    stored = {r["seed"]: r for r in tr.load_runs("transformers")}
    assert row.seed in stored
    text = {k: str(v) for k, v in stored[row.seed].items()}
    assert mt._same_spec(text, row)
    assert not mt._same_spec({**text, "seed": str(row.seed + 1)}, row)  # equal as floats, not as ints
    assert float(row.seed + 1) == float(row.seed)


# ----------------------------------------------------------------------------------------
# probe: bad features and degenerate predictions
# ----------------------------------------------------------------------------------------


def _probe_data(n=50, seed=0):
    rng = np.random.default_rng(seed)
    f = {"linear": rng.standard_normal(n), "quadratic": rng.standard_normal(n)}
    return f, 1.0 + 2.0 * f["linear"] - 0.5 * f["quadratic"]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_probe_names_a_non_finite_feature(bad):
    f, pred = _probe_data()
    f["quadratic"][7] = bad
    with pytest.raises(ValueError, match=r"features\['quadratic'\] must be finite; entry 7 is"):
        tr.probe(pred, f, ("linear", "quadratic"))
    pred = pred.copy()
    pred[3] = bad
    with pytest.raises(ValueError, match="predictions must be finite"):
        tr.probe(pred, f, ("linear",))


def test_probe_shapes_and_constant_predictions():
    f, pred = _probe_data()
    fit = tr.probe(pred, f, ("linear", "quadratic"))
    assert_allclose(fit["coef"], [1.0, 2.0, -0.5], atol=1e-12)
    assert fit["r2"] == pytest.approx(1.0) and fit["r2_note"] == ""
    with pytest.raises(ValueError, match=r"features\['linear'\] must have shape \(50,\)"):
        tr.probe(pred, {"linear": f["linear"][:-1]}, ("linear",))
    const = tr.probe(np.full(50, 0.3), f, ("linear",))
    assert math.isnan(const["r2"]) and "constant" in const["r2_note"]
    assert_allclose(const["coef"], [0.3, 0.0], atol=1e-12)
    zero = tr.probe(np.zeros(50), f, ("linear",))
    assert math.isnan(zero["r2"])


def test_coefficient_teachers_with_huge_entries_are_refused():
    with pytest.raises(ValueError, match=r"sum_m a_m\^2 .*overflows \(largest \|a_m\| = 1e\+200\)"):
        lib.teachers.teacher_moments([0.0, 1e200])
    with pytest.raises(ValueError, match="overflows"):
        lib.teachers.effective_noise([0.0, 1e155, 1e155], 0.1)
    with pytest.raises(ValueError, match="overflows"):
        lib.teachers.as_link(np.array([1e300, 1e300]))
    assert lib.teachers.teacher_moments([0.0, 1e150])[2] == pytest.approx(1e300)  # large, finite: accepted


def test_select_runs_matches_a_seed_exactly():
    rows = tr.load_runs("transformers")
    seed = rows[0]["seed"]
    assert tr.select_runs(rows, seed=seed) == [rows[0]]
    assert tr.select_runs(rows, seed=seed + 1) == []  # equal to seed as a float
    assert len(tr.select_runs(rows, d=8.0, kind="softmax", teacher="h2", alpha=2)) == 3


PAIRED = [
    {"kind": k, "teacher": "h2", "d": 8.0, "draw": float(s), "icl": v, "diff_cf": v - 1.0, "diff_cf_se": 0.01}
    for k, vals in (("softmax", [0.90, 0.92, 0.95, 0.91]), ("none", [0.97, 0.96, 0.99, 0.98]))
    for s, v in enumerate(vals)
] + [{"kind": "none", "teacher": "h2", "d": 8.0, "draw": 9.0, "icl": 1.0, "diff_cf": 0.0, "diff_cf_se": 0.01}]


def test_paired_gain_t_interval():
    g = tr.paired_gain(PAIRED, "diff_cf", kind="softmax")
    v = np.array([0.90, 0.92, 0.95, 0.91]) - 1.0
    assert_allclose(g["mean"], v.mean())
    assert_allclose(g["se"], v.std(ddof=1) / 2)
    assert g["dof"] == 3 and g["count"] == 4
    assert_allclose(g["half"], stats.t.ppf(0.975, 3) * g["se"])
    assert_allclose(g["p"], stats.ttest_1samp(v, 0.0).pvalue)
    assert_allclose(g["test_se"], 0.01)
    with pytest.raises(ValueError, match="no rows"):
        tr.paired_gain(PAIRED, kind="gru")
    with pytest.raises(ValueError, match="several rows per draw"):
        tr.paired_gain(PAIRED + PAIRED[:1], kind="softmax")
    with pytest.raises(ValueError, match="column"):
        tr.paired_gain(PAIRED, "diff_hand", kind="softmax")


def test_paired_difference_pairs_by_draw():
    out = tr.paired_difference(PAIRED, {"kind": "softmax"}, {"kind": "none"}, teacher="h2")
    delta = np.array([0.90, 0.92, 0.95, 0.91]) - np.array([0.97, 0.96, 0.99, 0.98])
    assert out["count"] == 4 and out["dof"] == 3  # the unpaired draw 9 is left out
    assert_allclose(out["mean"], delta.mean())
    assert_allclose(out["p"], stats.ttest_rel([0.90, 0.92, 0.95, 0.91], [0.97, 0.96, 0.99, 0.98]).pvalue)
    with pytest.raises(ValueError, match="no complete pair"):
        tr.paired_difference(PAIRED, {"kind": "softmax"}, {"kind": "gru"})
    with pytest.raises(ValueError, match="two rows"):
        tr.paired_difference(PAIRED, {"kind": "softmax"}, {"kind": "none"}, pair_by=("teacher",))
    with pytest.raises(TypeError, match="dicts"):
        tr.paired_difference(PAIRED, "softmax", {"kind": "none"})


def test_probe_features_context_free_and_oracle():
    import lib

    ctx = lib.samplers.sample_contexts(400, 5, 6, None, "h2", 0.0, np.random.default_rng(0))
    f = tr.probe_features(ctx.X, ctx.y, ctx.x_query)
    assert_allclose(f["norm2"], np.sum(ctx.x_query**2, axis=1))
    assert_allclose(f["norm"], np.linalg.norm(ctx.x_query, axis=1))
    assert "h1" not in f
    w = lib.samplers.sample_tasks(400, 5, np.random.default_rng(1))
    g = tr.probe_features(ctx.X, ctx.y, ctx.x_query, tasks=w)
    z = np.sum(ctx.x_query * w, axis=1)
    assert_allclose(g["h1"], z)
    assert_allclose(g["h2"], (z**2 - 1) / np.sqrt(2))
    assert_allclose(g["h3"], (z**3 - 3 * z) / np.sqrt(6))
    assert_allclose(g["h4"], (z**4 - 6 * z**2 + 3) / np.sqrt(24))
    with pytest.raises(ValueError, match="tasks"):
        tr.probe_features(ctx.X, ctx.y, ctx.x_query, tasks=w[:, :3])


def _control_copy(tmp_path):
    """The stored controls sweep as CSV rows (lists of fields), and a writer for edited rows."""
    import csv
    import io

    src = tr.DATA_DIR / "training_controls.csv"
    shutil.copy(src.with_suffix(".json"), tmp_path / "training_controls.json")
    rows = list(csv.reader(io.StringIO(src.read_text())))

    def write(edited):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(edited)
        path = tmp_path / "training_controls.csv"
        path.write_text(buf.getvalue())
        return path

    return rows, write


CORRUPT_LISTS = {
    "loss_curve not JSON": ("loss_curve", "abc", "loss_curve: 'abc' is not a JSON list of numbers"),
    "loss_curve cut": ("loss_curve", "[0.7, 0.5", "loss_curve: '[0.7, 0.5' is not a JSON list"),
    "loss_curve empty": ("loss_curve", "[]", "loss_curve: the list is empty"),
    "loss_curve NaN": ("loss_curve", "[0.7, NaN]", "loss_curve: entry 1 is nan; every entry must be finite"),
    "loss_curve inf": ("loss_curve", "[Infinity]", "loss_curve: entry 0 is inf; every entry must be finite"),
    "loss_curve a string entry": ("loss_curve", '[0.7, "x"]', "loss_curve: 'x' is not a number"),
    "loss_curve a bool entry": ("loss_curve", "[true]", "loss_curve: entry 0 (True) is not a number"),
    "val_errors a number": ("val_errors", "0.5", "val_errors: '0.5' is not a JSON list"),
    "val_errors NaN": ("val_errors", "[NaN, 1, 2]", "val_errors: entry 0 is nan; every entry must be finite or inf"),
    "val_errors too short": ("val_errors", "[1.0, 2.0]", "val_errors: 2 errors for the 3 learning rates of lrs"),
    "lrs not numbers": ("lrs", "0.01,fast,0.1", "lrs: 'fast' is not a number"),
    "lr not a candidate": ("lr", "0.05", "lr: 0.05 is not one of the candidates lrs = '0.001,0.003,0.01'"),
    "negative alpha": ("alpha", "-4.0", "alpha: '-4.0' is negative"),
    "negative tune_alpha": ("tune_alpha", "-4.0", "tune_alpha: '-4.0' is negative"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CORRUPT_LISTS))
def test_load_control_runs_checks_its_lists(tmp_path, case):
    column, value, message = CORRUPT_LISTS[case]
    rows, write = _control_copy(tmp_path)
    rows[2][rows[0].index(column)] = value
    path = write(rows)
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:3: {re.escape(message)}"):
        tr.load_control_runs("controls", tmp_path)


def test_load_control_runs_accepts_a_diverged_candidate(tmp_path):
    rows, write = _control_copy(tmp_path)
    col = rows[0].index("val_errors")
    rows[1][col] = "[1.5, Infinity, 2.0]"  # json.dumps writes a diverged error as Infinity
    write(rows)
    loaded = tr.load_control_runs("controls", tmp_path)
    assert loaded[0]["val_errors"] == "[1.5, Infinity, 2.0]"
    steps, loss = loss_curves.loss_curve(loaded[0])
    assert steps.size == loss.size > 0 and np.all(np.isfinite(loss))


def test_the_sweep_readers_have_one_address():
    # issue 33: lib.training no longer re-exports lib.training_runs (nor the context-free
    # error); asking it says where a name went. The names chapter 7 and
    # scripts/make_training.py still ask lib.training for are served until they move, and
    # this test fails as soon as one of them has no such caller left (drop it then).
    import importlib
    import json
    from pathlib import Path

    pytest.importorskip("jax", reason="lib.training needs the optional extra 'training' (JAX)")
    training = importlib.import_module("lib.training")
    assert not set(training._MOVED) & set(training.__all__)
    assert training._STILL_SERVED <= set(training._MOVED)
    for name, home in training._MOVED.items():
        target = getattr(importlib.import_module(home), name)
        if name in training._STILL_SERVED:
            assert getattr(training, name) is target
        else:
            with pytest.raises(AttributeError, match=re.escape(f"lib.training.{name} has moved to {home}.{name}")):
                getattr(training, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        training.nope

    root = Path(__file__).resolve().parents[1]
    texts = [
        "".join(c["source"])
        for p in sorted((root / "book").rglob("*.ipynb"))
        for c in json.loads(p.read_text())["cells"]
    ]
    texts += [p.read_text() for p in sorted((root / "scripts").glob("*.py"))]
    callers = "\n".join(texts)
    unused = sorted(n for n in training._STILL_SERVED if not re.search(rf"\btraining\.{n}\b", callers))
    assert not unused, f"no caller asks lib.training for {unused} any more: remove them from lib.training._STILL_SERVED"
