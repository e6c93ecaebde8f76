"""Regenerate the large-d simulation tables data/finite_size_<experiment>.csv/.json.

Usage (from the repository root)::

    python scripts/make_finite_size.py [EXPERIMENT ...] [--quick] [--draws N]
                                       [--dims 50,100,...] [--n-test N] [--out DIR] [--fresh]

Experiments: ``linear_points``, ``teachers``, ``h2_study`` and ``smoke`` (default: all,
in that order). Each row is one call of :func:`lib.attention.simulate` (pretrain Gamma
on n = tau d^2 contexts, then measure its ICL and IDG errors) for one configuration,
one variant, one dimension ``d`` and one draw. Rows are appended to the CSV and flushed
one by one, so an interrupted run can be resumed by running the same command again:
rows already present with the same seed and parameters are skipped. ``--fresh``
discards the existing file first.

Seeds: the seed of a row is derived from
``numpy.random.SeedSequence([BASE_SEED, experiment_index, config_index, d, draw])``
(its first 64-bit word, shifted right by one bit so it fits in a signed 64-bit integer).
The variants of one configuration (a teacher and its Gaussian equivalent, h2 and pure
noise) share the seed of the draw: they see the same task set, the same tokens, the same
Gaussian noise draws and the same test contexts (common random numbers), so the gap
between them is measured with much less noise than either error on its own.

See data/README.md for what each experiment holds and how long it takes.
Used in: chapters 2, 3 and the Performance appendix (through lib.finite_size).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # so that `python scripts/make_finite_size.py` finds lib
    sys.path.insert(0, str(ROOT))

import lib  # noqa: E402
from lib.finite_size import COLUMNS, DATA_DIR  # noqa: E402

#: Root of every seed of the tables; changing it changes every row.
BASE_SEED = 20_251_130
VARIANTS = ("teacher", "gaussian", "noise", "linear")


# ----------------------------------------------------------------------------------------
# the experiments
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """One parameter point of an experiment, simulated for each of its variants."""

    label: str
    teacher: str  # link name of lib.hermite, or "linear"
    variants: tuple[str, ...]
    alpha: float
    kappa: float
    tau: float
    rho: float
    lam: float = 0.0


@dataclass(frozen=True)
class Experiment:
    """An experiment: configurations, dimensions, draws per d and test-set size per d."""

    name: str
    index: int
    description: str
    configs: tuple[Config, ...]
    dims: tuple[int, ...]
    draws: dict[int, int]
    n_test: dict[int, int] = field(default_factory=dict)  # empty: exact errors only


@dataclass(frozen=True)
class RowSpec:
    """Everything needed to compute one row (and to recompute it in a test)."""

    experiment: str
    experiment_index: int
    config_index: int
    label: str
    teacher: str
    variant: str
    d: int
    draw: int
    seed: int
    alpha: float
    kappa: float
    tau: float
    rho: float
    lam: float
    n_test: int  # 0: exact errors (linear teacher)


INF = float("inf")
CHAPTER3_TEACHERS = ("offset", "relu", "tanh", "sign", "cubic", "h2", "abs")


def _teachers_n_test(d: int) -> int:
    # Monte Carlo relative standard error of the test error is sqrt(Var(r^2) / n_test) / E[r^2]
    # (r the residual). Measured at d = 100 with 200,000 test contexts: 0.35% for ReLU
    # (Gaussian-like residuals); 300,000 brings it to about 0.3% at a cost of a few seconds.
    return 300_000


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            name="linear_points",
            index=0,
            description=(
                "Linear teacher f(z) = z at five (alpha, kappa, tau, rho, lambda) points, "
                "exact finite-d ICL and IDG errors of the pretrained Gamma (THEORY.md section 2)."
            ),
            configs=(
                Config("theory_check", "linear", ("linear",), 1.0, 0.5, 2.0, 0.01, 0.0),
                Config("ridge_check", "linear", ("linear",), 2.0, 1.5, 3.0, 0.1, 0.5),
                Config("ridgeless", "linear", ("linear",), 2.0, 1.5, 3.0, 0.1, 0.0),
                Config("tau_below_1", "linear", ("linear",), 2.0, INF, 0.5, 0.1, 0.0),
                Config("high_noise", "linear", ("linear",), 1.0, 2.0, 4.0, 0.25, 0.0),
            ),
            dims=(20, 40, 60, 100, 150, 200),
            draws={20: 5, 40: 5, 60: 5, 100: 3, 150: 3, 200: 3},
        ),
        Experiment(
            name="teachers",
            index=1,
            description=(
                "The chapter-3 teachers and their Gaussian-equivalent linear teachers at "
                "(alpha, kappa, tau, rho, lambda) = (2, 1.5, 3, 0.1, 0); Monte Carlo test errors."
            ),
            configs=tuple(
                Config(t, t, ("teacher", "gaussian"), 2.0, 1.5, 3.0, 0.1, 0.0) for t in CHAPTER3_TEACHERS
            ),
            dims=(50, 100, 150, 200),
            draws={50: 3, 100: 3, 150: 3, 200: 3},
            n_test={d: _teachers_n_test(d) for d in (50, 100, 150, 200)},
        ),
        Experiment(
            name="h2_study",
            index=2,
            description=(
                "The a_1 = 0 teacher h2 against pure label noise of the same variance "
                "rho_nl = rho + 1, at kappa = 1.5 and kappa = inf, (alpha, tau, rho) = (2, 3, 0.1), "
                "ridgeless; Monte Carlo test errors."
            ),
            configs=(
                Config("kappa=1.5", "h2", ("teacher", "noise"), 2.0, 1.5, 3.0, 0.1, 0.0),
                Config("kappa=inf", "h2", ("teacher", "noise"), 2.0, INF, 3.0, 0.1, 0.0),
            ),
            dims=(50, 100, 150, 200),
            draws={50: 12, 100: 12, 150: 12, 200: 12},
            n_test={d: 200_000 for d in (50, 100, 150, 200)},
        ),
        Experiment(
            name="smoke",
            index=3,
            description=(
                "Tiny dimensions, every variant once per configuration: a fast end-to-end check "
                "of the pipeline, regenerated by tests/test_finite_size.py."
            ),
            configs=(
                Config("theory_check", "linear", ("linear",), 1.0, 0.5, 2.0, 0.01, 0.0),
                Config("relu", "relu", ("teacher", "gaussian"), 2.0, 1.5, 3.0, 0.1, 0.0),
                Config("h2", "h2", ("teacher", "noise"), 2.0, INF, 3.0, 0.1, 0.0),
            ),
            dims=(12, 16),
            draws={12: 2, 16: 2},
            n_test={12: 4000, 16: 4000},
        ),
    )
}


def row_seed(experiment_index: int, config_index: int, d: int, draw: int) -> int:
    """Seed of one row: the first word of SeedSequence([BASE_SEED, e, c, d, draw]) >> 1."""
    ss = np.random.SeedSequence([BASE_SEED, experiment_index, config_index, d, draw])
    return int(ss.generate_state(1, dtype=np.uint64)[0]) >> 1


def row_specs(
    name: str,
    dims: tuple[int, ...] | None = None,
    draws: int | None = None,
    n_test: int | None = None,
) -> list[RowSpec]:
    """All rows of an experiment, in run order: draw, then d, then configuration, then variant.

    Running draw by draw means an interrupted run leaves every (d, configuration) with
    about the same number of draws. ``dims``, ``draws`` and ``n_test`` override the
    experiment's grid (``draws`` then applies to every d, ``n_test`` to every Monte Carlo
    row).
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {list(EXPERIMENTS)}; got {name!r}")
    exp = EXPERIMENTS[name]
    dims = exp.dims if dims is None else tuple(dims)
    n_draws = {d: (draws if draws is not None else exp.draws.get(d, max(exp.draws.values()))) for d in dims}
    specs = []
    for draw in range(max(n_draws.values())):
        for d in dims:
            if draw >= n_draws[d]:
                continue
            for ci, cfg in enumerate(exp.configs):
                seed = row_seed(exp.index, ci, d, draw)
                for variant in cfg.variants:
                    mc = variant != "linear"
                    nt = (n_test if n_test is not None else exp.n_test.get(d, max(exp.n_test.values(), default=0))) if mc else 0
                    specs.append(RowSpec(
                        experiment=name, experiment_index=exp.index, config_index=ci, label=cfg.label,
                        teacher=cfg.teacher, variant=variant, d=d, draw=draw, seed=seed,
                        alpha=cfg.alpha, kappa=cfg.kappa, tau=cfg.tau, rho=cfg.rho, lam=cfg.lam, n_test=nt,
                    ))
    return specs


# ----------------------------------------------------------------------------------------
# one row
# ----------------------------------------------------------------------------------------


def zero_teacher(z: np.ndarray) -> np.ndarray:
    """The teacher f = 0 of the pure-noise variant (labels are noise only)."""
    return np.zeros(np.shape(z))


def variant_teacher(teacher: str, variant: str, rho: float) -> tuple[Any, float]:
    """The teacher and label-noise variance that ``simulate`` receives for a variant.

    - ``"teacher"``: the link called ``teacher``, noise ``rho``;
    - ``"gaussian"``: ``g, rho_eq = lib.hermite.gaussian_equivalent(teacher, rho)``;
    - ``"noise"``: ``f = 0`` with ``rho_nl = rho + E[f^2] - a_1^2``;
    - ``"linear"``: ``None`` (the linear teacher, exact errors), noise ``rho``.
    """
    if variant == "linear":
        return None, rho
    from lib import hermite

    if variant == "teacher":
        return teacher, rho
    if variant == "gaussian":
        g, rho_eq = hermite.gaussian_equivalent(teacher, rho)
        return g, float(rho_eq)
    if variant == "noise":
        _, a1, ef2 = hermite.teacher_moments(teacher)
        return zero_teacher, float(rho + ef2 - a1 ** 2)
    raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}")


def run_row(spec: RowSpec) -> dict[str, Any]:
    """Compute one row: ``lib.attention.simulate`` with the spec's parameters and seed."""
    from lib.attention import simulate

    f, rho_used = variant_teacher(spec.teacher, spec.variant, spec.rho)
    res = simulate(
        spec.d, spec.alpha, spec.kappa, spec.tau, rho_used, lam=spec.lam, teacher=f,
        rng=spec.seed, n_test=(spec.n_test or None),
    )
    return {
        "experiment": spec.experiment, "label": spec.label, "teacher": spec.teacher,
        "variant": spec.variant, "d": spec.d, "draw": spec.draw, "seed": spec.seed,
        "alpha": spec.alpha, "kappa": spec.kappa, "tau": spec.tau, "rho": spec.rho, "lam": spec.lam,
        "icl": float(res["icl"]), "icl_se": float(res["icl_se"]),
        "idg": float(res["idg"]), "idg_se": float(res["idg_se"]),
        "n_test": spec.n_test, "method": str(res["method"]), "seconds": float(res["seconds"]),
    }


# ----------------------------------------------------------------------------------------
# files
# ----------------------------------------------------------------------------------------

_KEY = ("label", "variant", "d", "draw")
_SPEC_FIELDS = ("seed", "alpha", "kappa", "tau", "rho", "lam", "n_test", "teacher")


def _read_existing(path: Path) -> list[dict[str, str]]:
    """Rows already in ``path`` (a truncated last line from an interrupted run is dropped)."""
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise SystemExit(f"{path} does not have the columns {COLUMNS}; rerun with --fresh")
        rows = list(reader)
    good, seen = [], set()
    for r in rows:  # drop broken lines and repeated rows (keep the first of each key)
        key = tuple(r.get(k) for k in _KEY)
        if None in r.values() or None in r or key in seen:
            continue
        seen.add(key)
        good.append(r)
    if len(good) != len(rows):
        _write_rows(path, good)
    return good


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _lock(fh: Any, path: Path) -> None:
    """Refuse to run if another process is appending to the same file (POSIX only)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise SystemExit(f"{path} is being written by another run of this script; wait for it to finish")


def _same_spec(row: dict[str, str], spec: RowSpec) -> bool:
    s = asdict(spec)
    for k in _SPEC_FIELDS:
        if isinstance(s[k], str):
            if row[k] != s[k]:
                return False
        elif float(row[k]) != float(s[k]):
            return False
    return True


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(), "machine": platform.machine(),
        "processor": platform.processor() or "unknown", "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not np.isfinite(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def run_experiment(
    name: str,
    out: Path,
    dims: tuple[int, ...] | None = None,
    draws: int | None = None,
    n_test: int | None = None,
    fresh: bool = False,
    command: str = "",
    log: Callable[[str], None] = print,
) -> Path:
    """Compute the missing rows of one experiment, append them to its CSV, write its JSON."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"finite_size_{name}.csv"
    json_path = out / f"finite_size_{name}.json"
    specs = row_specs(name, dims, draws, n_test)
    if not csv_path.exists():
        _write_rows(csv_path, [])
    started, t0 = _now(), time.perf_counter()
    with csv_path.open("a", newline="") as fh:
        _lock(fh, csv_path)  # before reading: another run may be appending
        if fresh:
            _write_rows(csv_path, [])
            json_path.unlink(missing_ok=True)
        existing = {tuple(r[k] for k in _KEY): r for r in _read_existing(csv_path)}
        todo = []
        for spec in specs:
            key = (spec.label, spec.variant, str(spec.d), str(spec.draw))
            if key in existing:
                if not _same_spec(existing[key], spec):
                    raise SystemExit(
                        f"{csv_path}: the row {dict(zip(_KEY, key))} was made with other parameters "
                        "or another seed; rerun with --fresh to start over"
                    )
                continue
            todo.append(spec)
        log(f"[{name}] {len(specs)} rows, {len(specs) - len(todo)} already present, {len(todo)} to compute")
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        for i, spec in enumerate(todo, 1):
            row = run_row(spec)
            writer.writerow(row)
            fh.flush()
            os.fsync(fh.fileno())
            el = time.perf_counter() - t0
            log(
                f"[{name}] {i}/{len(todo)} {spec.label} {spec.variant} d={spec.d} draw={spec.draw} "
                f"icl={row['icl']:.5f}±{row['icl_se']:.5f} idg={row['idg']:.5f} "
                f"({row['seconds']:.1f} s, {row['method']}; elapsed {el / 60:.1f} min)"
            )
    wall = time.perf_counter() - t0
    if not todo and json_path.exists():  # nothing new: keep the record of the runs that made the file
        log(f"[{name}] nothing to do: {csv_path} is complete")
        return csv_path

    exp = EXPERIMENTS[name]
    rows = _read_existing(csv_path)
    previous = []
    if json_path.exists():
        try:
            previous = json.loads(json_path.read_text()).get("runs", [])
        except (ValueError, OSError):
            previous = []
    configs = []
    for cfg in exp.configs:
        c = asdict(cfg)
        c["rho_used"] = {v: variant_teacher(cfg.teacher, v, cfg.rho)[1] for v in cfg.variants}
        configs.append(c)
    grid_dims = sorted({s.d for s in specs})
    meta = {
        "experiment": name,
        "description": exp.description,
        "file": csv_path.name,
        "columns": list(COLUMNS),
        "command": command,
        "parameters": {
            "configs": configs,
            "dims": grid_dims,
            "draws": {d: sum(1 for s in specs if s.d == d and s.config_index == 0 and s.variant == exp.configs[0].variants[0]) for d in grid_dims},
            "n_test": {d: max(s.n_test for s in specs if s.d == d) for d in grid_dims},
            "solver": "lib.attention.simulate(method='auto')",
        },
        "seeds": {
            "base_seed": BASE_SEED,
            "scheme": (
                "seed = SeedSequence([base_seed, experiment_index, config_index, d, draw])"
                ".generate_state(1, uint64)[0] >> 1; rng = numpy.random.default_rng(seed); "
                "the variants of a configuration share the seed (common random numbers)"
            ),
            "experiment_index": exp.index,
        },
        "rows": len(rows),
        "lib_version": lib.__version__,
        "git_commit": _git_commit(),
        "date": _now(),
        "machine": _machine(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "total_seconds": round(sum(float(r["seconds"]) for r in rows), 1),
        "runs": previous + [{
            "command": command, "started": started, "finished": _now(),
            "rows_computed": len(todo), "wall_seconds": round(wall, 1),
        }],
    }
    json_path.write_text(json.dumps(_jsonable(meta), indent=2) + "\n")
    log(f"[{name}] done: {len(todo)} rows in {wall / 60:.1f} min -> {csv_path}")
    return csv_path


def _parse_dims(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--dims must be comma-separated integers; got {text!r}") from exc
    if not dims or min(dims) < 2:
        raise argparse.ArgumentTypeError(f"--dims must list integers >= 2; got {text!r}")
    return dims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                        help=f"experiments to run (default: all): {', '.join(EXPERIMENTS)}")
    parser.add_argument("--quick", action="store_true",
                        help="tiny grid (d = 12, 16; 1 draw; n_test = 2000) written to a temporary "
                             "folder unless --out is given: checks the pipeline in seconds")
    parser.add_argument("--draws", type=int, help="draws per d (overrides the experiment's)")
    parser.add_argument("--dims", type=_parse_dims, help="comma-separated dimensions, e.g. 50,100")
    parser.add_argument("--n-test", type=int, help="test contexts per Monte Carlo row")
    parser.add_argument("--out", type=Path, help=f"output folder (default {DATA_DIR})")
    parser.add_argument("--fresh", action="store_true", help="discard existing rows instead of resuming")
    args = parser.parse_args(argv)

    names = args.experiments or list(EXPERIMENTS)
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        parser.error(f"unknown experiment(s) {bad}; available: {list(EXPERIMENTS)}")
    if args.draws is not None and args.draws < 1:
        parser.error(f"--draws must be >= 1; got {args.draws}")
    if args.n_test is not None and args.n_test < 2:
        parser.error(f"--n-test must be >= 2; got {args.n_test}")
    dims, draws, n_test, out = args.dims, args.draws, args.n_test, args.out
    if args.quick:
        dims = dims or (12, 16)
        draws = draws or 1
        n_test = n_test or 2000
        out = out or Path(tempfile.mkdtemp(prefix="finite_size_quick_"))
    out = out or DATA_DIR
    command = "python scripts/make_finite_size.py" + ("" if argv is None and len(sys.argv) <= 1 else " " + " ".join(sys.argv[1:] if argv is None else argv))

    def log(msg: str) -> None:
        print(msg, flush=True)

    for name in names:
        run_experiment(name, out, dims, draws, n_test, args.fresh, command, log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
