"""``lib``: the small library behind the book *Linear attention and nonlinear teachers*.

One module per concept:

- :mod:`lib.hermite`     Hermite expansions of link functions (chapter 1).
- :mod:`lib.samplers`    tokens, tasks, teachers, contexts and the feature H_Z (chapter 2).
- :mod:`lib.attention`   linear attention, the reduced parameter Gamma, its ridge
  pretraining (dense, dual and matrix-free solvers) and ``simulate`` (chapters 2-5).
- :mod:`lib.baselines`   Bayes-optimal ridge and dMMSE predictors (chapters 2 and 5).
- :mod:`lib.theory`      the asymptotic error formulas, linear and nonlinear (chapters 2-5).
- :mod:`lib.finite_size` the large-d simulation tables in ``lib/data/`` and the finite-size
  extrapolation ``e(d) = e_inf + c/d`` (chapters 2, 3, Performance appendix).
- :mod:`lib.plotting`    the book's plotting helpers (every chapter).
- :mod:`lib.widgets`     the interactive explorers (imported on demand: it needs ipywidgets).

The most used names are re-exported here, so ``from lib import simulate, icl_error``
works; everything else is reached through its module (``lib.hermite.LINKS``).
"""

__version__ = "0.1.0"

from . import attention, baselines, finite_size, hermite, plotting, samplers, theory
from .attention import (
    exact_error, fit_gamma, gamma_from_weights, linear_attention, mc_error, predict, simulate, simulate_many,
)
from .baselines import baseline_errors, bayes_ridge_predict, dmmse_predict, spectral_predict
from .finite_size import extrapolate
from .hermite import LINKS, coefficients, gaussian_equivalent, get_link, hermite_function, teacher_moments
from .samplers import sample_contexts, sample_features, sample_task_set
from .theory import (
    effective_noise,
    icl_error,
    idg_error,
    nonlinear_icl_error,
    nonlinear_idg_error,
    nonlinear_optimal_lambda,
    optimal_lambda,
    pure_noise_error,
    spectral_error,
    spectral_overlap,
    transition_kappa,
)

__all__ = [
    "__version__",
    "attention", "baselines", "finite_size", "hermite", "plotting", "samplers", "theory",
    "simulate", "simulate_many", "fit_gamma", "predict", "exact_error", "mc_error", "linear_attention", "gamma_from_weights",
    "baseline_errors", "bayes_ridge_predict", "dmmse_predict", "spectral_predict",
    "extrapolate",
    "LINKS", "coefficients", "gaussian_equivalent", "get_link", "hermite_function", "teacher_moments",
    "sample_contexts", "sample_features", "sample_task_set",
    "effective_noise", "icl_error", "idg_error", "nonlinear_icl_error", "nonlinear_idg_error",
    "nonlinear_optimal_lambda", "optimal_lambda", "pure_noise_error", "transition_kappa",
    "spectral_overlap", "spectral_error",
]
