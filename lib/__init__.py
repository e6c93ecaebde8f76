"""``lib``: the small library behind the book *Linear attention and nonlinear teachers*.

One module per concept, the science apart from the teaching layer:

- :mod:`lib.hermite`      normalized Hermite polynomials, Gaussian integrals, the :class:`~lib.hermite.Link`
  and the catalogue of links with closed-form coefficients (chapter 1).
- :mod:`lib.quadrature`   Gaussian expectations of a user's function (probes, adaptive
  integration, the Gauss-Hermite rule).
- :mod:`lib.teachers`     a teacher resolved once into a ``Link``; its moments, effective
  noise and Gaussian equivalent (chapters 1 and 3).
- :mod:`lib.samplers`     tokens, tasks, labels, contexts and the feature H_Z (chapter 2).
- :mod:`lib.attention`    linear attention, the reduced parameter Gamma, its ridge
  pretraining (dense, dual and matrix-free solvers) and the exact error (chapter 2).
- :mod:`lib.simulation`   ``mc_error``, ``simulate`` and ``simulate_many`` (chapters 2-5).
- :mod:`lib.baselines`    Bayes-optimal ridge and dMMSE predictors (chapters 2 and 5).
- :mod:`lib.bayes`        the Bayes error at finite d, by Monte Carlo over the task's
  posterior (chapter 7).
- :mod:`lib.spectral`     the spectral in-context estimator (chapter 6); its theory is
  :mod:`lib.theory.spectral_limits`.
- :mod:`lib.theory`       the asymptotic error formulas (package: ``marchenko_pastur``,
  ``linear``, ``nonlinear``, ``kappa_inf``, ``gap``, ``context_free``, ``source``,
  ``spectral_limits``).
- :mod:`lib.finite_size`  the large-d simulation tables in ``lib/data/`` and the finite-size
  extrapolation ``e(d) = e_inf + c/d`` (package: ``data``, ``fits``, ``study``).

The teaching layer is the subpackage :mod:`lib.teaching`: :mod:`~lib.teaching.claims`
(asserted sentences), :mod:`~lib.teaching.tables` (Markdown tables),
:mod:`~lib.teaching.benchmarks` (the stored benchmark reports, read back),
:mod:`~lib.teaching.labs` (lab checks), :mod:`~lib.teaching.plotting` (figures, imports
matplotlib), :mod:`~lib.teaching.widgets` (explorers, imports ipywidgets) and
:mod:`~lib.teaching.training_widgets`; its modules are loaded on first use, so ``import
lib`` imports neither matplotlib nor ipywidgets. :mod:`lib.training` (trained networks,
chapter 7), :mod:`lib.transformers`, :mod:`lib.training_runs` and :mod:`lib.loss_curves` are
loaded on first use too (the first two import JAX, which is the package's optional extra ``training``,
``pip install -c constraints.txt ".[training]"`` in the package's folder): everything
else runs without it.

The most used names are re-exported here, so ``from lib import simulate, icl_error``
works; everything else is reached through its module (``lib.hermite.LINKS``).
"""

import importlib

__version__ = "0.1.0"

from . import (
    attention,
    baselines,
    bayes,
    finite_size,
    hermite,
    quadrature,
    samplers,
    simulation,
    spectral,
    teachers,
    teaching,
    theory,
)
from .attention import exact_error, fit_gamma, gamma_from_weights, linear_attention, predict
from .baselines import baseline_errors, bayes_ridge_predict, dmmse_predict
from .finite_size import extrapolate
from .hermite import LINKS, coefficients, get_link, hermite_function, hermite_polynomial
from .samplers import sample_contexts, sample_features, sample_task_set
from .simulation import mc_error, simulate, simulate_many
from .teachers import effective_noise, gaussian_equivalent, teacher_moments
from .theory import (
    icl_error,
    idg_error,
    nonlinear_icl_error,
    nonlinear_idg_error,
    nonlinear_optimal_lambda,
    optimal_lambda,
    pure_noise_error,
    transition_kappa,
)

#: Modules imported on first access (``lib.training``), so that ``import lib`` stays free
#: of JAX.
_LAZY = ("training", "training_runs", "transformers", "loss_curves")

__all__ = [
    "__version__",
    "attention", "baselines", "bayes", "finite_size", "hermite", "quadrature", "samplers", "simulation",
    "spectral", "teachers", "teaching", "theory",
    "simulate", "simulate_many", "fit_gamma", "predict", "exact_error", "mc_error", "linear_attention",
    "gamma_from_weights",
    "baseline_errors", "bayes_ridge_predict", "dmmse_predict",
    "extrapolate",
    "LINKS", "coefficients", "gaussian_equivalent", "get_link", "hermite_function", "hermite_polynomial", "teacher_moments",
    "sample_contexts", "sample_features", "sample_task_set",
    "effective_noise", "icl_error", "idg_error", "nonlinear_icl_error", "nonlinear_idg_error",
    "nonlinear_optimal_lambda", "optimal_lambda", "pure_noise_error", "transition_kappa",
]  # fmt: skip

#: Names that left ``lib`` (issue 33: the teaching layer's own package, one address per
#: name), and where they are now: an old notebook gets an AttributeError that says so.
_MOVED = {
    **dict.fromkeys(
        ("claims", "tables", "benchmarks", "labs", "plotting", "widgets", "training_widgets"), "lib.teaching"
    ),
    "spectral_predict": "lib.spectral",
    "spectral_overlap": "lib.theory.spectral_limits",
    "spectral_error": "lib.theory.spectral_limits",
}


def __getattr__(name: str):
    """Import the lazily loaded modules (``_LAZY``: training, training_runs, transformers, loss_curves) on first use."""
    if name in _LAZY:
        return importlib.import_module(f"lib.{name}")
    if name in _MOVED:
        raise AttributeError(f"lib.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
