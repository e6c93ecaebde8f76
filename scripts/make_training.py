"""Regenerate the training sweeps lib/data/training_<experiment>.csv/.json (chapter 7).

Usage (from the repository root)::

    python scripts/make_training.py [EXPERIMENT ...] [--out DIR] [--fresh]
                                    [--workers N | --scheduler ADDRESS] [--no-progress]

The same pipeline as ``scripts/make_finite_size.py``, whose machinery this script imports
(seeds, the Dask client, file locking, provenance): one row is one Dask task (one trained
network and its test error); rows are appended to the CSV and flushed one by one as they
finish, and the JSON next to it (versions, machine, seconds per row, the runs that made
the file) is rewritten after each row, so an interrupted run resumes where it stopped
when the same command is run again. ``--fresh`` discards the existing file first.

Experiments (default: all, in this order):

- ``linear_attention``: the full linear attention of ``lib.training.train_linear_attention``
  (Adam, full batch) against ``fit_gamma``'s least-squares / minimum-norm Gamma on the
  same pretraining set, for ReLU, tanh and h2 at d = 40, kappa = inf, tau = 3 and four
  alpha; and at tau = 0.5 (interpolation) from three initialization scales.
- ``transformers``: ``lib.training.train_transformer`` with softmax attention and with
  linear attention (MLP values and readout kept: Oko et al.'s architecture), on h2 and
  ReLU at d = 8 against alpha, and on h2 at alpha = 4 against d = 8, 16, 32 (a d = 64
  group is configured, but the stored data have no rows for it).

Seeds: the seed of a row is ``make_finite_size.row_seed(experiment_index, config_index,
d, draw)`` (the first word of ``SeedSequence([BASE_SEED, e, c, d, draw])``, shifted right
by one bit), with experiment indices 10 and 11, which the finite-size tables do not use.
Training and test draw from ``numpy.random.default_rng(seed)`` and
``default_rng(SeedSequence([seed, 1]))``.

Used in: chapter 7 (through ``lib.training.load_runs``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy

ROOT = Path(__file__).resolve().parent.parent
for _p in (str(ROOT), str(ROOT / "scripts")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import jax  # noqa: E402
import make_finite_size as mfs  # noqa: E402
import optax  # noqa: E402

import lib  # noqa: E402
import lib.training  # noqa: E402

INF = math.inf


@dataclass(frozen=True)
class Row:
    """Everything needed to compute one row (and to recompute it)."""

    experiment: str
    experiment_index: int
    config_index: int
    label: str
    kind: str  # "linear_attention" or "softmax" / "linear" (transformer attention)
    teacher: str
    d: int
    alpha: float
    kappa: float
    tau: float  # linear_attention: n = round(tau d^2); transformers: 0 (fresh contexts)
    rho: float
    width: int
    layers: int
    steps: int
    batch: int
    lr: float
    init_scale: float
    optimizer: str
    draw: int
    seed: int
    n_test: int


COLUMNS = tuple(Row.__dataclass_fields__) + (
    "ell",
    "n",
    "icl",
    "icl_se",
    "icl_ls",
    "icl_ls_se",
    "gamma_rel_diff",
    "gamma_norm",
    "gamma_norm_ls",
    "icl_wmn",
    "icl_wmn_se",
    "gamma_rel_diff_wmn",
    "final_loss",
    "seconds",
)
_KEY = ("label", "kind", "d", "alpha", "draw")


@dataclass(frozen=True)
class Config:
    label: str
    kind: str
    teacher: str
    d: int
    alpha: float
    kappa: float = INF
    tau: float = 0.0
    rho: float = 0.1
    width: int = 0
    layers: int = 1
    steps: int = 1000
    batch: int = 0
    lr: float = 3e-3
    init_scale: float = 1e-3
    optimizer: str = "adam"


def _linear_attention_configs() -> list[tuple[int, Config]]:
    """(group, config) pairs."""
    out = []
    for t in ("relu", "tanh", "h2"):
        for a in (0.5, 1.0, 2.0, 4.0):
            out.append((0, Config(f"{t} tau=3", "linear_attention", t, 40, a, tau=3.0, steps=3000, lr=0.05)))
    # tau < 1: plain gradient descent (Adam's coordinate-wise steps have another implicit bias)
    for s in (1e-3, 0.1, 0.3):
        out.append(
            (
                1,
                Config(
                    f"relu tau=0.5 init={s:g}",
                    "linear_attention",
                    "relu",
                    40,
                    2.0,
                    tau=0.5,
                    steps=20_000,
                    lr=1.0,
                    init_scale=s,
                    optimizer="gd",
                ),
            )
        )
    return out


# Transformers: one batch size and schedule for every row. Against alpha (d = 8): width 32.
# Against d at alpha = 4: width 36, so that the embedding is at least as wide as the tokens
# [x; y] (d + 1 = 33 at d = 32); d = 64 with width 72. Groups run one after another (all
# draws of a group before the next group), the most important first, so that a partial
# file is useful; --groups runs some of them (in separate processes, for instance).
TF = {"layers": 1, "steps": 1000, "batch": 128, "lr": 3e-3}
TF_ALPHAS = (2.0, 4.0, 8.0, 16.0)
TF_DIMS = (8, 16, 32)
TF_ALPHA_D = 4.0
TF_WIDTH_D = 36


def _transformer_configs() -> list[tuple[int, Config]]:
    """(group, config) pairs."""
    out = []
    for a in TF_ALPHAS:
        out.append((0, Config(f"h2 d=8 alpha={a:g}", "softmax", "h2", 8, a, width=32, **TF)))
    for d in TF_DIMS:
        out.append(
            (1, Config(f"h2 alpha={TF_ALPHA_D:g} d={d}", "softmax", "h2", d, TF_ALPHA_D, width=TF_WIDTH_D, **TF))
        )
    for a in TF_ALPHAS:
        out.append((2, Config(f"h2 d=8 alpha={a:g}", "linear", "h2", 8, a, width=32, **TF)))
    for d in TF_DIMS:
        out.append((3, Config(f"h2 alpha={TF_ALPHA_D:g} d={d}", "linear", "h2", d, TF_ALPHA_D, width=TF_WIDTH_D, **TF)))
    for a in TF_ALPHAS:
        out.append((4, Config(f"relu d=8 alpha={a:g}", "softmax", "relu", 8, a, width=32, **TF)))
    out.append((5, Config(f"h2 alpha={TF_ALPHA_D:g} d=64", "softmax", "h2", 64, TF_ALPHA_D, width=72, **TF)))
    return out


EXPERIMENTS: dict[str, dict[str, Any]] = {
    "linear_attention": {
        "index": 10,
        "description": (
            "Full linear attention (W_kq, W_pv) trained by full-batch Adam "
            "(lib.training.train_linear_attention) against fit_gamma on the same pretraining set; "
            "relu, tanh, h2 at d = 40, kappa = inf, rho = 0.1, tau = 3, alpha = 0.5-4; and relu at "
            "tau = 0.5 from three initialization scales. Monte Carlo ICL test errors."
        ),
        "configs": _linear_attention_configs(),
        "draws": 2,
        "n_test": 20_000,
    },
    "transformers": {
        "index": 11,
        "description": (
            "Small transformers (lib.training.train_transformer: 1 layer, MLP values and readout, "
            "Adam, 1000 steps of 128 fresh contexts) with softmax or linear attention, kappa = inf, "
            "rho = 0.1: h2 and relu at d = 8 against alpha (width 32), h2 at alpha = 4 against "
            "d = 8, 16, 32 (width 36) and d = 64 (width 72). "
            "Monte Carlo ICL test errors."
        ),
        "configs": _transformer_configs(),
        "draws": 3,
        "n_test": 4000,
    },
}


def row_specs(name: str, groups: tuple[int, ...] | None = None) -> list[Row]:
    """All rows of an experiment, in run order: group, then draw, then configuration.

    ``groups``: only these groups of configurations, in this order (default: all).
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {list(EXPERIMENTS)}; got {name!r}")
    e = EXPERIMENTS[name]
    rows = []
    if groups is None:
        groups = tuple(sorted({g for g, _ in e["configs"]}))
    for g in groups:
        for draw in range(e["draws"]):
            for ci, (gc, c) in enumerate(e["configs"]):
                if gc == g:
                    seed = mfs.row_seed(e["index"], ci, c.d, draw)
                    rows.append(
                        Row(
                            experiment=name,
                            experiment_index=e["index"],
                            config_index=ci,
                            draw=draw,
                            seed=seed,
                            n_test=e["n_test"],
                            **asdict(c),
                        )
                    )
    return rows


def _test_error(predict: Callable, ctx: Any) -> tuple[float, float]:
    r2 = (ctx.y_query - predict(ctx.X, ctx.y, ctx.x_query)) ** 2
    return float(r2.mean()), float(r2.std(ddof=1) / math.sqrt(len(r2)))


def run_row(spec: Row) -> dict[str, Any]:
    """Train the row's network with the row's seed and measure its ICL test error."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    test_rng = np.random.default_rng(np.random.SeedSequence([spec.seed, 1]))
    out = dict.fromkeys(COLUMNS, "")
    out.update(asdict(spec))
    if spec.kind == "linear_attention":
        d = spec.d
        ell, n = max(1, round(spec.alpha * d)), max(1, round(spec.tau * d * d))
        ctx = lib.samplers.sample_contexts(n, d, ell, None, spec.teacher, spec.rho, rng)
        g_ls = lib.training.least_squares_gamma(ctx)
        g_w = lib.training.least_squares_gamma(ctx, norm="weights")
        model = lib.training.train_linear_attention(
            ctx, steps=spec.steps, lr=spec.lr, rng=rng, init_scale=spec.init_scale, optimizer=spec.optimizer
        )
        test = lib.samplers.sample_contexts(spec.n_test, d, ell, None, spec.teacher, spec.rho, test_rng)
        icl, se = _test_error(model.predict, test)
        c = lib.training.context_vectors(test.X, test.y)
        F = np.concatenate([d * c[:, :-1], c[:, -1:]], axis=1)
        r2 = (test.y_query - np.einsum("nd,de,ne->n", test.x_query, g_ls, F)) ** 2
        w2 = (test.y_query - np.einsum("nd,de,ne->n", test.x_query, g_w, F)) ** 2
        g = model.gamma
        out.update(
            ell=ell,
            n=n,
            icl=icl,
            icl_se=se,
            icl_ls=float(r2.mean()),
            icl_ls_se=float(r2.std(ddof=1) / math.sqrt(len(r2))),
            gamma_rel_diff=float(np.linalg.norm(g - g_ls) / np.linalg.norm(g_ls)),
            gamma_norm=float(np.linalg.norm(g)),
            gamma_norm_ls=float(np.linalg.norm(g_ls)),
            icl_wmn=float(w2.mean()),
            icl_wmn_se=float(w2.std(ddof=1) / math.sqrt(len(w2))),
            gamma_rel_diff_wmn=float(np.linalg.norm(g - g_w) / np.linalg.norm(g_w)),
            final_loss=float(model.settings["final_loss"]),
        )
    else:
        model = lib.training.train_transformer(
            spec.teacher,
            spec.d,
            spec.alpha,
            spec.rho,
            kappa=spec.kappa,
            layers=spec.layers,
            width=spec.width,
            attention=spec.kind,
            steps=spec.steps,
            batch=spec.batch,
            lr=spec.lr,
            rng=rng,
        )
        icl, se = model.test_error(spec.n_test, test_rng)
        tail = max(1, spec.steps // 20)
        out.update(
            ell=model.settings["ell"],
            n=spec.steps * spec.batch,
            icl=icl,
            icl_se=se,
            final_loss=float(np.mean(model.history[-tail:])),
        )
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


# ----------------------------------------------------------------------------------------
# files (the machinery of make_finite_size, with this script's columns)
# ----------------------------------------------------------------------------------------


def _key(r: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(r[k]) if k not in ("d", "alpha", "draw") else repr(float(r[k])) for k in _KEY)


def _read_existing(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise SystemExit(f"{path} does not have the columns {COLUMNS}; rerun with --fresh")
        rows = [r for r in reader if None not in r.values() and None not in r]
    seen, good = set(), []
    for r in rows:
        if _key(r) not in seen:
            seen.add(_key(r))
            good.append(r)
    return good


def _write_header(path: Path) -> None:
    with path.open("w", newline="") as fh:
        csv.DictWriter(fh, fieldnames=COLUMNS).writeheader()


def _same_int(text: str, value: int) -> bool:
    """Whether a CSV field holds the integer ``value`` exactly (not merely as a float)."""
    try:
        return int(text) == value
    except ValueError:
        return False


def _same_spec(row: dict[str, str], spec: Row) -> bool:
    for k, v in asdict(spec).items():
        if isinstance(v, str):
            if row[k] != v:
                return False
        elif isinstance(v, int):  # exact: a 63-bit seed has more digits than a float
            if not _same_int(row[k], v):
                return False
        elif float(row[k]) != float(v):
            return False
    return True


def _write_meta(
    name: str,
    csv_path: Path,
    json_path: Path,
    command: str,
    started: str,
    previous: list,
    computed: int,
    wall: float,
    client: Any,
    finished: bool,
) -> None:
    e = EXPERIMENTS[name]
    rows = _read_existing(csv_path)
    meta = {
        "experiment": name,
        "description": e["description"],
        "file": csv_path.name,
        "columns": list(COLUMNS),
        "command": command,
        "parameters": {"configs": [asdict(c) for _, c in e["configs"]], "draws": e["draws"], "n_test": e["n_test"]},
        "seeds": {
            "base_seed": mfs.BASE_SEED,
            "scheme": (
                "seed = SeedSequence([base_seed, experiment_index, config_index, d, draw])"
                ".generate_state(1, uint64)[0] >> 1; training rng = numpy.random.default_rng(seed), "
                "test rng = default_rng(SeedSequence([seed, 1]))"
            ),
            "experiment_index": e["index"],
        },
        "rows": len(rows),
        "lib_version": lib.__version__,
        "git_commit": mfs._git_commit(),
        "date": mfs._now(),
        "machine": mfs._machine(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "jax": jax.__version__,
        "optax": optax.__version__,
        "seconds_per_row": {r["label"] + " " + r["kind"] + f" draw={r['draw']}": float(r["seconds"]) for r in rows},
        "total_seconds": round(sum(float(r["seconds"]) for r in rows), 1),
        "runs": previous
        + [
            {
                "command": command,
                "started": started,
                "finished": mfs._now() if finished else None,
                "rows_computed": computed,
                "wall_seconds": round(wall, 1),
                "workers": mfs._describe_workers(client),
                "machine": mfs._machine(),
            }
        ],
    }
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(mfs._jsonable(meta), indent=2) + "\n")
    tmp.replace(json_path)


def _task_key(spec: Row) -> str:
    """The Dask task name of a row."""
    return f"train-{spec.experiment}-{spec.config_index}-{spec.kind}-{spec.draw}-{spec.seed}"


def run_experiment(
    name: str,
    out: Path,
    fresh: bool = False,
    command: str = "",
    log: Callable[[str], None] = print,
    client: Any = None,
    groups: tuple[int, ...] | None = None,
) -> Path:
    """Compute the missing rows of one experiment, appending and flushing them one by one."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / f"training_{name}.csv", out / f"training_{name}.json"
    if fresh or not csv_path.exists():
        _write_header(csv_path)
        if fresh:
            json_path.unlink(missing_ok=True)
    specs = row_specs(name, groups)
    started, t0 = mfs._now(), time.perf_counter()
    with csv_path.open("a", newline="") as fh:
        mfs._lock(fh, csv_path)
        if mfs._drop_cut_line(csv_path):
            log(f"[{name}] dropped the cut last line of {csv_path} (an interrupted write)")
        existing = {_key(r): r for r in _read_existing(csv_path)}
        previous = mfs._previous_runs(json_path)
        todo = []
        for s in specs:
            r = existing.get(_key(asdict(s)))
            if r is None:
                todo.append(s)
            elif not _same_spec(r, s):
                raise SystemExit(
                    f"{csv_path}: the row {_key(asdict(s))} was made with other settings; rerun with --fresh"
                )
        log(f"[{name}] {len(specs)} rows, {len(specs) - len(todo)} present, {len(todo)} to compute")
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        done = [0]

        def on_row(spec: Row, row: dict[str, Any]) -> None:
            writer.writerow(row)
            fh.flush()
            os.fsync(fh.fileno())
            done[0] += 1
            el = time.perf_counter() - t0
            log(
                f"[{name}] {done[0]}/{len(todo)} {spec.label} {spec.kind} draw={spec.draw} "
                f"icl={float(row['icl']):.4f}±{float(row['icl_se']):.4f} ({row['seconds']} s; "
                f"elapsed {el / 60:.1f} min)"
            )
            _write_meta(name, csv_path, json_path, command, started, previous, done[0], el, client, False)

        mfs._compute_rows(todo, client, on_row, run=run_row, key=_task_key)  # one Dask task per row
    if todo or not json_path.exists():
        _write_meta(
            name, csv_path, json_path, command, started, previous, len(todo), time.perf_counter() - t0, client, True
        )
    log(f"[{name}] done -> {csv_path}")
    return csv_path


def merge_from(name: str, out: Path, other: Path, log: Callable[[str], None] = print) -> int:
    """Append the rows of ``other/training_<name>.csv`` that ``out``'s file lacks; merge the runs.

    For rows computed by a separate process (``--groups ... --out OTHER``): every row is
    checked against the spec this script derives for it (same seed and settings), so a
    merged file is the same as one computed in a single run.
    """
    src_csv = other / f"training_{name}.csv"
    csv_path, json_path = out / f"training_{name}.csv", out / f"training_{name}.json"
    if not csv_path.exists():
        _write_header(csv_path)
    specs = {_key(asdict(s)): s for s in row_specs(name)}
    with csv_path.open("a", newline="") as fh:
        mfs._lock(fh, csv_path)
        mfs._drop_cut_line(csv_path)
        have = {_key(r) for r in _read_existing(csv_path)}
        new = []
        for r in _read_existing(src_csv):
            spec = specs.get(_key(r))
            if spec is None or not _same_spec(r, spec):
                log(f"[{name}] skipped a row of {src_csv} that is not in the grid: {_key(r)}")
                continue
            if _key(r) not in have:
                new.append(r)
                have.add(_key(r))
        csv.DictWriter(fh, fieldnames=COLUMNS).writerows(new)
        fh.flush()
    runs = mfs._previous_runs(json_path) + [
        {**run, "merged_from": str(src_csv)} for run in mfs._previous_runs(other / f"training_{name}.json")
    ]
    _write_meta(
        name,
        csv_path,
        json_path,
        f"merge of {src_csv}",
        mfs._now(),
        runs[:-1] if runs else [],
        len(new),
        0.0,
        None,
        True,
    )
    if runs:  # keep the last run's own record instead of the merge's
        meta = json.loads(json_path.read_text())
        meta["runs"] = runs
        json_path.write_text(json.dumps(mfs._jsonable(meta), indent=2) + "\n")
    log(f"[{name}] merged {len(new)} rows from {src_csv}")
    return len(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "experiments",
        nargs="*",
        metavar="EXPERIMENT",
        help=f"experiments to run (default: all): {', '.join(EXPERIMENTS)}",
    )
    parser.add_argument("--out", type=Path, help=f"output folder (default {lib.training.DATA_DIR})")
    parser.add_argument("--fresh", action="store_true", help="discard existing rows instead of resuming")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        help="local Dask workers (default: the number of cores); 0 runs the rows in this process, without Dask",
    )
    where.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler")
    parser.add_argument(
        "--groups", help="comma-separated groups of configurations to compute, in this order (default: all); e.g. 0,2"
    )
    parser.add_argument(
        "--merge",
        type=Path,
        metavar="DIR",
        help="append the rows of DIR/training_<experiment>.csv (made with --out DIR) "
        "that the output file lacks, then exit",
    )
    parser.add_argument("--no-progress", action="store_true", help="accepted for symmetry with make_finite_size")
    args = parser.parse_args(argv)
    names = args.experiments or list(EXPERIMENTS)
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        parser.error(f"unknown experiment(s) {bad}; available: {list(EXPERIMENTS)}")
    if args.workers is not None and args.workers < 0:
        parser.error(f"--workers must be >= 0; got {args.workers}")
    out = args.out or lib.training.DATA_DIR
    groups = tuple(int(g) for g in args.groups.split(",")) if args.groups else None
    command = "python scripts/make_training.py" + (
        "" if not (argv or sys.argv[1:]) else " " + " ".join(argv or sys.argv[1:])
    )

    def log(msg: str) -> None:
        print(msg, flush=True)

    if args.merge:
        for name in names:
            merge_from(name, out, args.merge, log)
        return 0
    client = None if args.workers == 0 else mfs.start_client(args.workers, args.scheduler)
    try:
        for name in names:
            run_experiment(name, out, args.fresh, command, log, client, groups)
    finally:
        mfs.stop_client(client, args.scheduler)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
