r"""Asymptotic error formulas for linear attention trained in context.

The model (see the book's notation page): tokens :math:`x_i \sim N(0, I_d/d)`, tasks
:math:`\|w\|^2 = d`, labels :math:`y_i = f(x_i^\top w) + \varepsilon_i` with
:math:`\varepsilon_i \sim N(0, \rho)`, context length :math:`\ell = \alpha d`,
:math:`k = \kappa d` pretraining tasks (:math:`\kappa = \infty`: a fresh task for every
context), :math:`n = \tau d^2` pretraining contexts and the ridge penalty
:math:`(n/d)\lambda\|\Gamma\|_F^2`. In the limit :math:`d \to \infty` at fixed
:math:`(\alpha, \kappa, \tau, \rho, \lambda)` the test errors of the pretrained
one-layer linear attention are deterministic; this package evaluates them:

- :mod:`lib.theory.marchenko_pastur`  the transform :math:`M_\kappa` everything is built on;
- :mod:`lib.theory.linear`            the linear teacher (chapter 2);
- :mod:`lib.theory.nonlinear`         nonlinear teachers through the effective noise
  (chapters 3-5);
- :mod:`lib.theory.kappa_inf`         closed forms at :math:`\kappa = \infty` and the
  context-ridge baseline (chapters 4-5);
- :mod:`lib.theory.gap`               the finite-size gap heuristic (section 3.2);
- :mod:`lib.theory.spectral_limits`   the limit of the spectral estimator of
  :mod:`lib.spectral` (chapter 6);
- :mod:`lib.theory.context_free`      the error of the best predictor that reads only
  the query, at finite :math:`d` (chapter 7);
- :mod:`lib.theory.source`            the source's formulas as its authors' code
  evaluates them, to check the linear ones against (chapter 2).

Their public names are re-exported here (``lib.theory.icl_error``), but for those of
:mod:`lib.theory.spectral_limits`, which are reached through that module only
(``lib.theory.spectral_limits.spectral_error``), beside the estimator's module
:mod:`lib.spectral`. The teacher's statistics (:func:`lib.teachers.effective_noise`)
live in :mod:`lib.teachers`.
"""

from lib.theory import context_free, gap, kappa_inf, linear, marchenko_pastur, nonlinear, source, spectral_limits
from lib.theory.context_free import CONTEXT_FREE_QUAD_ATOL, context_free_error, sphere_moment
from lib.theory.gap import GapEstimate, gap_estimate
from lib.theory.kappa_inf import (
    context_ridge_error,
    kappa_inf_floor,
    kappa_inf_optimal_lambda,
    kappa_inf_ridgeless_error,
)
from lib.theory.linear import RIDGE_MAX, X_MAX, icl_error, icl_limit, idg_error, optimal_lambda, ridge_epsilon
from lib.theory.marchenko_pastur import KAPPA_MIN, M_kappa, dM_kappa
from lib.theory.nonlinear import (
    TRANSITION_KAPPA0,
    fixed_gamma_icl_error,
    nonlinear_icl_error,
    nonlinear_idg_error,
    nonlinear_optimal_lambda,
    pure_noise_error,
    pure_noise_error_integral,
    transition_kappa,
)

__all__ = [
    "context_free",
    "gap",
    "kappa_inf",
    "linear",
    "marchenko_pastur",
    "nonlinear",
    "source",
    "spectral_limits",
    *marchenko_pastur.__all__,
    *linear.__all__,
    *nonlinear.__all__,
    *kappa_inf.__all__,
    *gap.__all__,
    *context_free.__all__,
]

#: Names that moved out of ``lib.theory`` in the split of ``lib`` by concept, and where
#: they are now (an old notebook gets an AttributeError that says where to look).
_MOVED = {
    "effective_noise": "lib.teachers",
    "gaussian_equivalent_ridge": "lib.teachers",
    "A1_ZERO_RTOL": "lib.teachers",
    "A1_ZERO_ATOL": "lib.teachers",
    **{name: "lib.theory.spectral_limits" for name in spectral_limits.__all__},
}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"lib.theory.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib.theory' has no attribute {name!r}")
