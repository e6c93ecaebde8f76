"""Large-d simulation data and finite-size extrapolation (chapters 2, 3, Performance appendix).

Three modules, re-exported here so that ``lib.finite_size.<name>`` reaches all of them:

- :mod:`lib.finite_size.data`   the CSV tables in ``lib/data/`` (``load``, ``table``,
  ``summarize``, ``gap``, ``cg_iterations``);
- :mod:`lib.finite_size.fits`   weighted least-squares fits of ``e(d) = e_inf + c/d**b``
  (``extrapolate``, ``fit``, ``extrapolate_quadratic``);
- :mod:`lib.finite_size.study`  the analysis helpers of chapter 3 (``fits_for``,
  ``gap_for``, ``paired_limits``, ``slope_through_origin``, ...).
"""

from lib.finite_size import data, fits, study
from lib.finite_size.data import COLUMNS, DATA_DIR, available_experiments, cg_iterations, gap, load, summarize, table
from lib.finite_size.fits import (
    B_BOUNDS,
    MAX_CONDITION,
    POWER_BOUNDS,
    FiniteSizeFit,
    QuadraticFit,
    WeightedMean,
    extrapolate,
    extrapolate_quadratic,
    fit,
    point_label,
    t_quantile,
    weighted_mean,
)
from lib.finite_size.study import (
    GapFits,
    OriginFit,
    PairedLimits,
    VariantFits,
    extrapolate_summary,
    fits_for,
    floored_se,
    gap_for,
    paired_limits,
    slope_through_origin,
)

__all__ = [
    "data",
    "fits",
    "study",
    *data.__all__,
    *fits.__all__,
    *study.__all__,
]
