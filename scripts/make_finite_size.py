"""Regenerate the large-d simulation tables lib/data/finite_size_<experiment>.csv/.json.

Usage (from the repository root)::

    python scripts/make_finite_size.py [EXPERIMENT ...] [--quick] [--draws N]
                                       [--dims 50,100,...] [--n-test N] [--labels L,...]
                                       [--out DIR] [--fresh]
                                       [--workers N | --scheduler ADDRESS] [--no-progress]

Rows run as tasks on a Dask cluster: by default a local one with one single-threaded
worker process per core (``--workers N`` to choose, ``--workers 0`` for no Dask at all),
or an existing scheduler given by ``--scheduler tcp://host:8786`` (a lab server, or a
SLURM allocation through ``dask-jobqueue``; see lib/data/README.md).

Experiments: ``linear_points``, ``teachers``, ``h2_study``, ``nonlinear_points``, ``task_diversity``,
``stretched`` and ``smoke`` (default: all, in that order). Each row is one call of :func:`lib.simulation.simulate` (pretrain Gamma
on n = tau d^2 contexts, then measure its ICL and IDG errors) for one configuration,
one variant, one dimension ``d`` and one draw. Rows are appended to the CSV and flushed
one by one as they finish, so an interrupted run can be resumed by running the same command again:
rows already present with the same seed and parameters are skipped. ``--fresh``
discards the existing file first.

Seeds: the seed of a row is derived from
``numpy.random.SeedSequence([BASE_SEED, experiment_index, config_index, d, draw])``
(its first 64-bit word, shifted right by one bit so it fits in a signed 64-bit integer).
The variants of one configuration (a teacher and its Gaussian equivalent, h2 and pure
noise) share the seed of the draw: they see the same task set, the same tokens, the same
Gaussian noise draws and the same test contexts (common random numbers), so the gap
between them is measured with much less noise than either error on its own.

See lib/data/README.md for what each experiment holds and how long it takes.
Used in: chapters 2, 3 and the Performance appendix (through lib.finite_size).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import platform
import re
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
    #: run order: "draw" (draw, then d, then configuration) or "d" (d, then draw, then
    #: configuration): every configuration at the small d before any larger d
    order: str = "draw"


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


NONLINEAR_POINTS_TEACHERS = ("relu", "tanh", "h2")


def _lam_star(teacher: str, alpha: float, kappa: float, tau: float, rho: float) -> float:
    """lambda* of the equivalence (``lib.theory.nonlinear_optimal_lambda``), 4 significant digits.

    Rounded so that the grid (and the seeds' parameters recorded with each row) do not move
    when the minimizer's last digits do.
    """
    from lib import theory

    return float(f"{float(theory.nonlinear_optimal_lambda(teacher, alpha, kappa, tau, rho)[0]):.4g}")


def _nonlinear_points() -> tuple[Config, ...]:
    """The parameter points of the ``nonlinear_points`` experiment, teacher by teacher."""
    tg = ("teacher", "gaussian")
    configs = []
    for t in NONLINEAR_POINTS_TEACHERS:
        configs += [
            Config(f"{t} tau=0.5 kappa=inf", t, tg, 2.0, INF, 0.5, 0.1, 0.0),
            Config(f"{t} tau=0.5 kappa=1.5", t, tg, 2.0, 1.5, 0.5, 0.1, 0.0),
            Config(f"{t} lam=0.5", t, tg, 2.0, 1.5, 3.0, 0.1, 0.5),
        ]
        if t != "h2":  # a_1 = 0: the ridge error decreases all the way to lambda = inf
            configs.append(Config(f"{t} lam=lam_star", t, tg, 2.0, 1.5, 3.0, 0.1, _lam_star(t, 2.0, 1.5, 3.0, 0.1)))
        configs += [
            Config(f"{t} alpha=1", t, tg, 1.0, 1.5, 3.0, 0.1, 0.0),
            Config(f"{t} alpha=4", t, tg, 4.0, 1.5, 3.0, 0.1, 0.0),
        ]
    return tuple(configs)


NONLINEAR_POINTS = _nonlinear_points()

#: Teachers given by Hermite coefficients (a_0, a_1, ...), named for the CSV's teacher column.
#: "0.3h1+h2": a small linear part, a_1^2 / E f^2 = 0.09 / 1.09 = 0.083.
COEFFICIENT_TEACHERS: dict[str, tuple[float, ...]] = {"0.3h1+h2": (0.0, 0.3, 1.0)}

#: The teachers of ``stretched``: h2 (a_1 = 0) and relu (a_1 = 1/2); each with its twin.
STRETCHED_TEACHERS = ("h2", "relu")


def _stretched() -> tuple[Config, ...]:
    """The points of the ``stretched`` experiment, around the reference (2, 1.5, 3, 0.1, 0)."""
    tg = ("teacher", "gaussian")
    points = (
        # label, alpha, kappa, tau, rho, lam
        ("rho=0.02", 2.0, 1.5, 3.0, 0.02, 0.0),
        ("rho=0.5", 2.0, 1.5, 3.0, 0.5, 0.0),
        ("tau=0.8", 2.0, 1.5, 0.8, 0.1, 0.0),
        ("tau=0.8 lam=0.01", 2.0, 1.5, 0.8, 0.1, 0.01),
        ("tau=1.25", 2.0, 1.5, 1.25, 0.1, 0.0),
        ("tau=1.25 lam=0.01", 2.0, 1.5, 1.25, 0.1, 0.01),
        ("tau=0.5 kappa=0.5", 2.0, 0.5, 0.5, 0.1, 0.0),
        ("tau=0.5 kappa=0.8", 2.0, 0.8, 0.5, 0.1, 0.0),
        ("tau=3 kappa=0.5", 2.0, 0.5, 3.0, 0.1, 0.0),
        ("tau=3 kappa=0.8", 2.0, 0.8, 3.0, 0.1, 0.0),
        ("alpha=0.5", 0.5, 1.5, 3.0, 0.1, 0.0),
    )
    configs = [Config(f"{t} {lab}", t, tg, *par) for t in STRETCHED_TEACHERS for lab, *par in points]
    small = dict((lab, par) for lab, *par in points)
    for t in COEFFICIENT_TEACHERS:  # the small linear part at two of the points
        for lab in ("rho=0.02", "tau=1.25 lam=0.01"):
            configs.append(Config(f"{t} {lab}", t, tg, *small[lab]))
    return tuple(configs)


STRETCHED = _stretched()
STRETCHED_DIMS = (40, 60, 100, 150)

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            name="linear_points",
            index=0,
            description=(
                "Linear teacher f(z) = z at five (alpha, kappa, tau, rho, lambda) points, "
                "exact finite-d ICL and IDG errors of the pretrained Gamma (book chapter 2.1, lib.attention.exact_error)."
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
            configs=tuple(Config(t, t, ("teacher", "gaussian"), 2.0, 1.5, 3.0, 0.1, 0.0) for t in CHAPTER3_TEACHERS),
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
            dims=(50, 100, 150, 200, 300, 400),
            draws={50: 12, 100: 12, 150: 12, 200: 12, 300: 8, 400: 8},
            n_test={50: 200_000, 100: 200_000, 150: 200_000, 200: 200_000, 300: 1_000_000, 400: 1_000_000},
        ),
        Experiment(
            name="nonlinear_points",
            index=4,
            description=(
                "Three nonlinear teachers (relu, tanh and the a_1 = 0 teacher h2) and their "
                "Gaussian-equivalent linear teachers away from the chapter-3 point: tau < 1 at "
                "kappa = inf and kappa = 1.5, a fixed ridge lambda = 0.5 and the optimal ridge "
                "lambda* of the equivalence (relu and tanh; for h2 lambda* is infinite), "
                "alpha = 1 and alpha = 4; Monte Carlo test errors."
            ),
            configs=NONLINEAR_POINTS,
            dims=(50, 75, 100, 150),
            draws={50: 4, 75: 4, 100: 4, 150: 4},
            n_test={50: 200_000, 75: 200_000, 100: 200_000, 150: 200_000},
        ),
        Experiment(
            name="task_diversity",
            index=5,
            description=(
                "The ReLU teacher across the memorization-to-generalization transition of "
                "chapter 5, (alpha, tau, rho, lambda) = (5, 5, 0.1, 0) at kappa = 0.1, 0.3, 1 "
                "and 3, at d = 30 (the chapter's live dimension), 60 and 100; Monte Carlo test errors."
            ),
            configs=tuple(
                Config(f"kappa={k:g}", "relu", ("teacher",), 5.0, k, 5.0, 0.1, 0.0) for k in (0.1, 0.3, 1.0, 3.0)
            ),
            dims=(30, 60, 100),
            draws={30: 4, 60: 4, 100: 4},
            n_test={30: 100_000, 60: 100_000, 100: 100_000},
        ),
        Experiment(
            name="stretched",
            index=6,
            description=(
                "The equivalence stretched away from the chapter-3 point (alpha, kappa, tau, rho, "
                "lambda) = (2, 1.5, 3, 0.1, 0), for h2 (a_1 = 0), relu and the teacher 0.3 h1 + h2 "
                "(a_1^2 = 0.083 E f^2), each against its Gaussian-equivalent linear teacher: "
                "label noise rho = 0.02 and 0.5; tau = 0.8 and 1.25 (both sides of the "
                "interpolation peak) ridgeless and with lambda = 0.01; kappa = 0.5 and 0.8 at "
                "tau = 0.5 and tau = 3; alpha = 0.5. The 0.3 h1 + h2 teacher at rho = 0.02 and at "
                "tau = 1.25, lambda = 0.01 only. Rows run d by d (every configuration at d = 40 "
                "first); Monte Carlo test errors; the method column records the CG iterations."
            ),
            configs=STRETCHED,
            dims=STRETCHED_DIMS,
            draws={d: 4 for d in STRETCHED_DIMS},
            n_test={d: 200_000 for d in STRETCHED_DIMS},
            order="d",
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
    """All rows of an experiment, in run order.

    ``order="draw"`` (the default): draw, then d, then configuration, then variant; an
    interrupted run leaves every (d, configuration) with about the same number of draws.
    ``order="d"``: d, then draw, then configuration, then variant; the cost of a row grows
    like d^4, so an interrupted run has every configuration at every small d. ``dims``,
    ``draws`` and ``n_test`` override the experiment's grid (``draws`` then applies to every d, ``n_test`` to every Monte Carlo
    row).
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {list(EXPERIMENTS)}; got {name!r}")
    exp = EXPERIMENTS[name]
    dims = exp.dims if dims is None else tuple(dims)
    n_draws = {d: (draws if draws is not None else exp.draws.get(d, max(exp.draws.values()))) for d in dims}
    if exp.order == "d":
        cells = [(d, draw) for d in dims for draw in range(n_draws[d])]
    else:
        cells = [(d, draw) for draw in range(max(n_draws.values())) for d in dims if draw < n_draws[d]]
    specs = []
    for d, draw in cells:
        for ci, cfg in enumerate(exp.configs):
            seed = row_seed(exp.index, ci, d, draw)
            for variant in cfg.variants:
                mc = variant != "linear"
                nt = (
                    (n_test if n_test is not None else exp.n_test.get(d, max(exp.n_test.values(), default=0)))
                    if mc
                    else 0
                )
                specs.append(
                    RowSpec(
                        experiment=name,
                        experiment_index=exp.index,
                        config_index=ci,
                        label=cfg.label,
                        teacher=cfg.teacher,
                        variant=variant,
                        d=d,
                        draw=draw,
                        seed=seed,
                        alpha=cfg.alpha,
                        kappa=cfg.kappa,
                        tau=cfg.tau,
                        rho=cfg.rho,
                        lam=cfg.lam,
                        n_test=nt,
                    )
                )
    return specs


# ----------------------------------------------------------------------------------------
# one row
# ----------------------------------------------------------------------------------------


def zero_teacher(z: np.ndarray) -> np.ndarray:
    """The teacher f = 0 of the pure-noise variant (labels are noise only)."""
    return np.zeros(np.shape(z))


def variant_teacher(teacher: str, variant: str, rho: float) -> tuple[Any, float]:
    """The teacher and label-noise variance that ``simulate`` receives for a variant.

    - ``"teacher"``: the link called ``teacher`` (or the Hermite coefficients
      ``COEFFICIENT_TEACHERS[teacher]``), noise ``rho``;
    - ``"gaussian"``: ``g, rho_eq = lib.teachers.gaussian_equivalent(teacher, rho)``;
    - ``"noise"``: ``f = 0`` with ``rho_nl = rho + E[f^2] - a_1^2``;
    - ``"linear"``: ``None`` (the linear teacher, exact errors), noise ``rho``.
    """
    if variant == "linear":
        return None, rho
    from lib import teachers

    if teacher in COEFFICIENT_TEACHERS:  # a name of this script for Hermite coefficients
        teacher = np.asarray(COEFFICIENT_TEACHERS[teacher], dtype=float)
    if variant == "teacher":
        return teacher, rho
    if variant == "gaussian":
        g, rho_eq = teachers.gaussian_equivalent(teacher, rho)
        return g, float(rho_eq)
    if variant == "noise":
        _, a1, ef2 = teachers.teacher_moments(teacher)
        return zero_teacher, float(rho + ef2 - a1**2)
    raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}")


def run_row(spec: RowSpec) -> dict[str, Any]:
    """Compute one row: ``lib.simulation.simulate`` with the spec's parameters and seed."""
    from lib.simulation import simulate

    f, rho_used = variant_teacher(spec.teacher, spec.variant, spec.rho)
    res = simulate(
        spec.d,
        spec.alpha,
        spec.kappa,
        spec.tau,
        rho_used,
        lam=spec.lam,
        teacher=f,
        rng=spec.seed,
        n_test=(spec.n_test or None),
    )
    return {
        "experiment": spec.experiment,
        "label": spec.label,
        "teacher": spec.teacher,
        "variant": spec.variant,
        "d": spec.d,
        "draw": spec.draw,
        "seed": spec.seed,
        "alpha": spec.alpha,
        "kappa": spec.kappa,
        "tau": spec.tau,
        "rho": spec.rho,
        "lam": spec.lam,
        "icl": float(res["icl"]),
        "icl_se": float(res["icl_se"]),
        "idg": float(res["idg"]),
        "idg_se": float(res["idg_se"]),
        "n_test": spec.n_test,
        # the CG iteration count, when the solver is iterative: "matfree (212 CG iterations)"
        "method": str(res["method"]) + ("" if res["iterations"] is None else f" ({res['iterations']} CG iterations)"),
        "seconds": float(res["seconds"]),
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


def _drop_cut_line(path: Path) -> bool:
    """Remove a last line that has no line break (a write cut by an interruption).

    ``csv`` ends every row it writes with a line break, so such a line is incomplete, even
    when all its fields are there (the last number may have lost digits); appending to it
    would also glue the next row onto it. Returns whether a line was removed.
    """
    raw = path.read_bytes() if path.exists() else b""
    if not raw or raw.endswith(b"\n"):
        return False
    with path.open("r+b") as fh:
        fh.truncate(raw.rfind(b"\n") + 1)
    return True


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _replaced(fh: Any, path: Path) -> bool:
    """Whether ``path`` is no longer the file that ``fh`` appends to.

    ``git stash``, ``git checkout`` or an editor's save replace a file by a new one; rows
    appended through the old handle would then go to a file that no longer has a name.
    """
    try:
        now, ours = os.stat(path), os.fstat(fh.fileno())
    except FileNotFoundError:
        return True
    return (now.st_ino, now.st_dev) != (ours.st_ino, ours.st_dev)


def _reopen(fh: Any, path: Path, mine: list[dict[str, Any]]) -> tuple[Any, int]:
    """Append to the file now at ``path``, first restoring the rows of this run it lacks.

    Returns the new handle and how many rows were restored.
    """
    fh.close()
    if not path.exists():
        _write_rows(path, [])
    new = path.open("a", newline="")
    _lock(new, path)
    have = {tuple(r[k] for k in _KEY) for r in _read_existing(path)}
    missing = [r for r in mine if tuple(str(r[k]) for k in _KEY) not in have]
    csv.DictWriter(new, fieldnames=COLUMNS).writerows(missing)
    new.flush()
    return new, len(missing)


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


def _same_int(text: str, value: int) -> bool:
    """Whether a CSV field holds the integer ``value`` exactly (not merely as a float)."""
    try:
        return int(text) == value
    except ValueError:
        return False


def _same_spec(row: dict[str, str], spec: RowSpec) -> bool:
    s = asdict(spec)
    for k in _SPEC_FIELDS:
        if isinstance(s[k], str):
            if row[k] != s[k]:
                return False
        elif isinstance(s[k], int):  # exact: a 63-bit seed has more digits than a float
            if not _same_int(row[k], s[k]):
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
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or "unknown",
        "cpu_count": os.cpu_count(),
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


def _row_key(spec: RowSpec) -> str:
    """The Dask task name of a row."""
    return f"row-{spec.experiment}-{spec.label}-{spec.variant}-{spec.d}-{spec.draw}-{spec.seed}"


def _compute_rows(
    todo: list[Any],
    client: Any,
    on_row: Callable[[Any, dict[str, Any]], None],
    run: Callable[[Any], dict[str, Any]] = run_row,
    key: Callable[[Any], str] = _row_key,
) -> None:
    """Compute the rows of ``todo``, calling ``on_row(spec, row)`` as each one finishes.

    ``client`` is a :class:`dask.distributed.Client` (every row becomes one task, submitted
    in run order with decreasing priority, so workers pick them up in that order) or None
    (rows run one after another in this process). A row's result depends only on its spec
    (its seed), not on which worker runs it or when. ``run`` computes a row and ``key``
    names its Dask task (:func:`_row_key` by default); scripts/make_training.py passes its
    own.
    """
    if client is None:
        for spec in todo:
            on_row(spec, run(spec))
        return
    from dask.distributed import as_completed

    futures = {}
    for i, spec in enumerate(todo):
        fut = client.submit(run, spec, key=key(spec), priority=len(todo) - i, pure=False)
        futures[fut] = spec
    try:
        for fut in as_completed(futures):
            on_row(futures[fut], fut.result())
    finally:
        for fut in futures:
            fut.cancel()


def _previous_runs(json_path: Path) -> list[dict[str, Any]]:
    """The ``runs`` recorded in an experiment's JSON (empty if there is none)."""
    if not json_path.exists():
        return []
    try:
        return list(json.loads(json_path.read_text()).get("runs", []))
    except (ValueError, OSError):
        return []


def _write_meta(
    name: str,
    csv_path: Path,
    json_path: Path,
    specs: list[RowSpec],
    command: str,
    started: str,
    previous: list[dict[str, Any]],
    rows_computed: int,
    wall: float,
    client: Any,
    finished: bool,
) -> None:
    """Write the experiment's JSON from the rows now in its CSV.

    Called after every row, so that the JSON matches the CSV even when the run is
    interrupted; the current run is recorded with ``"finished": null`` until it ends.
    """
    exp = EXPERIMENTS[name]
    rows = _read_existing(csv_path)
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
            "draws": {
                d: sum(1 for s in specs if s.d == d and s.config_index == 0 and s.variant == exp.configs[0].variants[0])
                for d in grid_dims
            },
            "n_test": {d: max(s.n_test for s in specs if s.d == d) for d in grid_dims},
            "solver": "lib.simulation.simulate(method='auto')",
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
        "solver_cost": _solver_cost(rows),
        "runs": previous
        + [
            {
                "command": command,
                "started": started,
                "finished": _now() if finished else None,
                "rows_computed": rows_computed,
                "wall_seconds": round(wall, 1),
                "workers": _describe_workers(client),
                "machine": _machine(),
            }
        ],
    }
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(_jsonable(meta), indent=2) + "\n")
    tmp.replace(json_path)


def _solver_cost(rows: list[dict[str, str]]) -> dict[str, dict[str, Any]]:
    """What the rows cost, per configuration and d, from the CSV's seconds and method columns.

    ``{label: {d: {"rows", "median_seconds", "max_seconds", "methods", "max_cg_iterations"}}}``;
    ``max_cg_iterations`` is None when no row of the cell used the iterative solver.
    """
    cells: dict[str, dict[str, list[dict[str, str]]]] = {}
    for r in rows:
        cells.setdefault(r["label"], {}).setdefault(str(r["d"]), []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for label, by_d in cells.items():
        out[label] = {}
        for d in sorted(by_d, key=int):
            rs = by_d[d]
            secs = [float(r["seconds"]) for r in rs]
            its = [int(m.group(1)) for r in rs if (m := re.search(r"\((\d+) CG iterations\)", r["method"]))]
            out[label][d] = {
                "rows": len(rs),
                "median_seconds": round(float(np.median(secs)), 2),
                "max_seconds": round(max(secs), 2),
                "methods": sorted({r["method"].split(" (")[0] for r in rs}),
                "max_cg_iterations": max(its) if its else None,
            }
    return out


def run_experiment(
    name: str,
    out: Path,
    dims: tuple[int, ...] | None = None,
    draws: int | None = None,
    n_test: int | None = None,
    fresh: bool = False,
    command: str = "",
    log: Callable[[str], None] = print,
    client: Any = None,
    labels: tuple[str, ...] | None = None,
    progress: bool = False,
) -> Path:
    """Compute the missing rows of one experiment, append them to its CSV, write its JSON.

    Rows are written (and flushed to disk) in the order they finish, so an interrupted run
    loses only the rows in progress; the file's order is therefore not the run order (the
    readers in :mod:`lib.finite_size` do not depend on it). ``client``: a
    ``dask.distributed.Client`` to run the rows on, or None to run them here, one by one.
    ``labels``: compute only the configurations with these labels (the others keep what
    the file has).
    """
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"finite_size_{name}.csv"
    json_path = out / f"finite_size_{name}.json"
    specs = row_specs(name, dims, draws, n_test)
    if labels:
        known = {s.label for s in specs}
        bad = [lab for lab in labels if lab not in known]
        if bad:
            raise SystemExit(f"[{name}] unknown label(s) {bad}; the experiment has {sorted(known)}")
    if not csv_path.exists():
        _write_rows(csv_path, [])
    started, t0 = _now(), time.perf_counter()
    with csv_path.open("a", newline="") as fh:
        _lock(fh, csv_path)  # before reading: another run may be appending
        if _drop_cut_line(csv_path):
            log(f"[{name}] dropped the cut last line of {csv_path} (an interrupted write)")
        if fresh:
            _write_rows(csv_path, [])
            json_path.unlink(missing_ok=True)
        existing = {tuple(r[k] for k in _KEY): r for r in _read_existing(csv_path)}
        previous = _previous_runs(json_path)
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
            if labels and spec.label not in labels:
                continue
            todo.append(spec)
        log(
            f"[{name}] {len(specs)} rows, {len(specs) - len(todo)} already present or not selected, "
            f"{len(todo)} to compute"
        )
        out_file = {"fh": fh, "writer": csv.DictWriter(fh, fieldnames=COLUMNS)}
        mine: list[dict[str, Any]] = []  # this run's rows, to restore a replaced file
        bar = None
        if progress and todo:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), desc=name, unit="row", file=sys.stderr, dynamic_ncols=True)
        done = [0]

        def on_row(spec: RowSpec, row: dict[str, Any]) -> None:
            mine.append(row)
            if _replaced(out_file["fh"], csv_path):
                out_file["fh"], n = _reopen(out_file["fh"], csv_path, mine[:-1])
                log(
                    f"[{name}] {csv_path} was replaced while this run was writing to it (git "
                    f"stash or checkout?); appending to the new file, {n} rows of this run "
                    "restored"
                )
                out_file["writer"] = csv.DictWriter(out_file["fh"], fieldnames=COLUMNS)
            out_file["writer"].writerow(row)
            out_file["fh"].flush()
            os.fsync(out_file["fh"].fileno())
            done[0] += 1
            el = time.perf_counter() - t0
            log(
                f"[{name}] {done[0]}/{len(todo)} {spec.label} {spec.variant} d={spec.d} draw={spec.draw} "
                f"icl={row['icl']:.5f}±{row['icl_se']:.5f} idg={row['idg']:.5f} "
                f"({row['seconds']:.1f} s, {row['method']}; elapsed {el / 60:.1f} min)"
            )
            _write_meta(
                name, csv_path, json_path, specs, command, started, previous, done[0], el, client, finished=False
            )
            if bar is not None:
                bar.update(1)

        try:
            _compute_rows(todo, client, on_row)
        finally:
            if bar is not None:
                bar.close()
            if out_file["fh"] is not fh:
                out_file["fh"].close()
    wall = time.perf_counter() - t0
    if not todo and json_path.exists():  # nothing new: keep the record of the runs that made the file
        log(f"[{name}] nothing to do: {csv_path} is complete")
        return csv_path
    _write_meta(name, csv_path, json_path, specs, command, started, previous, len(todo), wall, client, finished=True)
    log(f"[{name}] done: {len(todo)} rows in {wall / 60:.1f} min -> {csv_path}")
    return csv_path


def _describe_workers(client: Any) -> Any:
    """What ran the rows: ``"in-process"`` or the Dask workers' count and threads."""
    if client is None:
        return "in-process"
    try:
        info = client.scheduler_info()
        workers = info.get("workers", {})
        return {
            "scheduler": str(info.get("address", "")),
            "n_workers": len(workers),
            "threads_per_worker": sorted({int(w.get("nthreads", 0)) for w in workers.values()}),
        }
    except Exception:  # pragma: no cover - a scheduler that went away
        return "dask (unknown)"


def start_client(workers: int | None = None, scheduler: str | None = None) -> Any:
    """A ``dask.distributed.Client``: on an existing scheduler, or on a new local cluster.

    ``scheduler``: the address of a running scheduler (``tcp://host:8786``); its workers
    must be able to ``import lib`` (install the repository on them with ``pip install``).
    Otherwise a :class:`~dask.distributed.LocalCluster` with ``workers`` processes (default:
    the number of cores) of one thread each is started; every worker uses one BLAS thread
    (two BLAS threads per process on a 2-core machine cost up to 10x, see the Makefile).
    Run as a script, its own functions are sent to the workers by value (they live in
    ``__main__``), so a remote worker needs the library, not this file.
    """
    from dask.distributed import Client, LocalCluster

    if __name__ != "__main__" and str(ROOT / "scripts") not in sys.path:
        # imported as the module make_finite_size (as the tests do): the workers, whose
        # sys.path is this process's, must be able to import it to unpickle its functions
        sys.path.append(str(ROOT / "scripts"))
    if scheduler:
        return Client(scheduler)
    n = workers or os.cpu_count() or 1
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # inherited by the worker processes
    # so that local workers import this repository's lib (and, when this file was imported
    # as the module make_finite_size, this file) even when neither is installed
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "scripts")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit="auto",
        silence_logs=40,
    )
    return Client(cluster)


def stop_client(client: Any, scheduler: str | None) -> None:
    """Close a client of :func:`start_client` (None: nothing to do), and its local cluster,
    but never the cluster of a running scheduler given by its address."""
    if client is None:
        return
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None and scheduler is None:
        cluster.close()


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
    parser.add_argument(
        "experiments",
        nargs="*",
        metavar="EXPERIMENT",
        help=f"experiments to run (default: all): {', '.join(EXPERIMENTS)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny grid (d = 12, 16; 1 draw; n_test = 2000) written to a temporary "
        "folder unless --out is given: checks the pipeline in seconds",
    )
    parser.add_argument("--draws", type=int, help="draws per d (overrides the experiment's)")
    parser.add_argument("--dims", type=_parse_dims, help="comma-separated dimensions, e.g. 50,100")
    parser.add_argument("--n-test", type=int, help="test contexts per Monte Carlo row")
    parser.add_argument(
        "--labels", help="comma-separated configuration labels to compute (default: all), e.g. kappa=inf"
    )
    parser.add_argument("--out", type=Path, help=f"output folder (default {DATA_DIR})")
    parser.add_argument("--fresh", action="store_true", help="discard existing rows instead of resuming")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        help="local Dask workers (default: the number of cores, here "
        f"{os.cpu_count()}); 0 runs the rows in this process, without Dask",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a running Dask scheduler to submit the rows to "
        "(e.g. tcp://10.0.0.5:8786; see lib/data/README.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    names = args.experiments or list(EXPERIMENTS)
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        parser.error(f"unknown experiment(s) {bad}; available: {list(EXPERIMENTS)}")
    if args.draws is not None and args.draws < 1:
        parser.error(f"--draws must be >= 1; got {args.draws}")
    if args.n_test is not None and args.n_test < 2:
        parser.error(f"--n-test must be >= 2; got {args.n_test}")
    if args.workers is not None and args.workers < 0:
        parser.error(f"--workers must be >= 0; got {args.workers}")
    labels = tuple(t.strip() for t in args.labels.split(",") if t.strip()) if args.labels else None
    dims, draws, n_test, out = args.dims, args.draws, args.n_test, args.out
    if args.quick:
        dims = dims or (12, 16)
        draws = draws or 1
        n_test = n_test or 2000
        out = out or Path(tempfile.mkdtemp(prefix="finite_size_quick_"))
    out = out or DATA_DIR
    command = "python scripts/make_finite_size.py" + (
        "" if argv is None and len(sys.argv) <= 1 else " " + " ".join(sys.argv[1:] if argv is None else argv)
    )

    def log(msg: str) -> None:
        print(msg, flush=True)

    client = None if args.workers == 0 else start_client(args.workers, args.scheduler)
    try:
        if client is not None:
            log(f"Dask: {_describe_workers(client)}")
        for name in names:
            run_experiment(
                name,
                out,
                dims,
                draws,
                n_test,
                args.fresh,
                command,
                log,
                client=client,
                labels=labels,
                progress=not args.no_progress,
            )
    finally:
        stop_client(client, args.scheduler)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
