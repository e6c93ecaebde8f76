r"""Closed forms at infinite task diversity and the context-ridge baseline's theory.

At :math:`\kappa = \infty` (a fresh task for every context) the errors of linear
attention have closed forms in :math:`(a_1, \rho_{nl}, \alpha)` (book chapter 4):
:func:`kappa_inf_floor`, :func:`kappa_inf_ridgeless_error`,
:func:`kappa_inf_optimal_lambda`. :func:`context_ridge_error` is the asymptotic error of
ridge regression on one context, the query-affine baseline of chapter 5.

Used in :doc:`finite pretraining data </book/regimes/finite_data>` and
:doc:`task diversity </book/regimes/task_diversity>`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lib._checks import check_param, check_real, check_result
from lib._checks import scalar_or_array as _out
from lib.teachers import rho_nl_from_moments, teacher_moments
from lib.theory.marchenko_pastur import M_kappa, dM_kappa

__all__ = ["kappa_inf_floor", "kappa_inf_ridgeless_error", "kappa_inf_optimal_lambda", "context_ridge_error"]


#: Largest absolute value of ``a_1`` accepted (its square and fourth power must stay
#: finite in float64).
A1_MAX = 1e50


def _check_a1_rho_nl(a1: Any, rho_nl: Any) -> tuple[np.ndarray, np.ndarray]:
    a1 = check_real("a1", a1, low=-A1_MAX, high=A1_MAX)
    rho_nl = check_param("rho_nl", rho_nl)
    return a1, rho_nl


def kappa_inf_floor(a1: ArrayLike, rho_nl: ArrayLike, alpha: ArrayLike) -> tuple[Any, Any]:
    r"""The explained part :math:`B` and the pretraining limit :math:`E_\infty` of the ridgeless error at :math:`\kappa = \infty`.

    .. math::

        B = \frac{\alpha a_1^4}{(1+\alpha)\,a_1^2 + \rho_{nl}}, \qquad
        E_\infty = a_1^2 + \rho_{nl} - B
          = \rho_{nl} + \frac{a_1^2 (a_1^2 + \rho_{nl})}{(1+\alpha) a_1^2 + \rho_{nl}} .

    :math:`a_1^2 + \rho_{nl} = E[y^2]` is the label variance, :math:`B` the part of it
    that the best :math:`\Gamma` explains, and :math:`E_\infty` the
    :math:`\tau \to \infty` limit of the ridgeless ICL error. :math:`a_1 = 0` gives
    :math:`B = 0`, :math:`E_\infty = \rho_{nl}`.

    Parameters
    ----------
    a1 : float or array_like
        Linear Hermite coefficient :math:`a_1` (any sign).
    rho_nl : float or array_like
        Effective noise :math:`\rho_{nl} \ge 0` (:func:`effective_noise`).
    alpha : float or array_like
        Context length per dimension, :math:`\alpha > 0`.

    Returns
    -------
    B, E_inf : float or numpy.ndarray
        Broadcast shape (floats for scalar input). ``a1 = rho_nl = 0`` gives 0, 0.

    Notes
    -----
    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    a1, rho_nl = _check_a1_rho_nl(a1, rho_nl)
    alpha = check_param("alpha", alpha)
    a1, rho_nl, alpha = (np.array(v, dtype=float) for v in np.broadcast_arrays(a1, rho_nl, alpha))
    s = a1 * a1
    den = (1.0 + alpha) * s + rho_nl
    B = np.divide(alpha * s * s, den, out=np.zeros_like(den), where=den > 0)
    check_result("kappa_inf_floor", B, a1=a1, rho_nl=rho_nl, alpha=alpha)
    return _out(B), _out(s + rho_nl - B)


def kappa_inf_ridgeless_error(a1: ArrayLike, rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike) -> float | np.ndarray:
    r"""Closed form of the ridgeless ICL (= IDG) error at :math:`\kappa = \infty`.

    .. math::

        e(\tau) = \begin{cases}
          E_\infty/(1-\tau) + B\,(1-\tau), & \tau < 1,\\
          E_\infty\,\tau/(\tau-1), & \tau > 1,
        \end{cases}

    with :math:`B, E_\infty` from :func:`kappa_inf_floor`, and ``inf`` at
    :math:`\tau = 1` (unless :math:`E_\infty = 0`). It equals
    :func:`nonlinear_icl_error` at :math:`\kappa = \infty`, :math:`\lambda = 0`, for
    any teacher with these :math:`a_1` and :math:`\rho_{nl}` (``tests/test_theory.py``
    checks it to 1e-10 against the general formulas).

    Parameters
    ----------
    a1, rho_nl, alpha : float or array_like
        As in :func:`kappa_inf_floor`.
    tau : float or array_like
        Pretraining contexts per parameter, :math:`\tau > 0`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Notes
    -----
    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    tau = check_param("tau", tau)
    B, E = (np.asarray(v) for v in kappa_inf_floor(a1, rho_nl, alpha))
    B, E, tau = (np.array(v, dtype=float) for v in np.broadcast_arrays(B, E, tau))
    out = np.full(tau.shape, np.inf)
    lo, hi = tau < 1.0, tau > 1.0
    out[lo] = E[lo] / (1.0 - tau[lo]) + B[lo] * (1.0 - tau[lo])
    out[hi] = E[hi] * tau[hi] / (tau[hi] - 1.0)
    out[(tau == 1.0) & (E == 0.0)] = 0.0
    check_result("kappa_inf_ridgeless_error", out, a1=a1, rho_nl=rho_nl, alpha=alpha, tau=tau)
    return _out(out)


def kappa_inf_optimal_lambda(a1: ArrayLike, rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike) -> float | np.ndarray:
    r"""The optimal ridge at :math:`\kappa = \infty` in closed form.

    .. math::

        \lambda^* = \frac{E_\infty}{\tau}
          \left(\frac{(1+\alpha)\,a_1^2 + \rho_{nl}}{\alpha\, a_1^2}\right)^2 ,

    with :math:`E_\infty` from :func:`kappa_inf_floor`: the residual variance over
    the squared norm of the best :math:`\Gamma` per parameter, divided by :math:`\tau`.
    It agrees with the numerical minimizer :func:`nonlinear_optimal_lambda` at
    :math:`\kappa = \infty` (to its optimizer tolerance, about 1e-6 relative; checked in
    ``tests/test_theory.py``). ``inf`` when :math:`a_1 = 0`.

    Parameters
    ----------
    a1, rho_nl, alpha, tau : float or array_like
        As in :func:`kappa_inf_ridgeless_error`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\lambda^*`, broadcast shape.

    Notes
    -----
    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    tau = check_param("tau", tau)
    _, E = kappa_inf_floor(a1, rho_nl, alpha)
    a1, rho_nl = _check_a1_rho_nl(a1, rho_nl)
    alpha = check_param("alpha", alpha)
    s = np.asarray(a1, dtype=float) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ((1.0 + alpha) * s + rho_nl) / (alpha * s)
        out = np.where(s > 0, E * ratio**2 / tau, np.inf)
    check_result("kappa_inf_optimal_lambda", out, a1=a1, rho_nl=rho_nl, alpha=alpha, tau=tau)
    return _out(np.asarray(out, dtype=float))


def context_ridge_error(
    teacher: Any, alpha: ArrayLike, rho: ArrayLike, ridge: ArrayLike, *, intercept: bool = False
) -> float | np.ndarray:
    r"""Asymptotic test error of ridge regression on one context (a query-affine baseline).

    The predictor, with :math:`X` the :math:`\ell \times d` context tokens, ridge
    :math:`\lambda_{\mathrm{ctx}}` and intercept :math:`\hat a_0` (:math:`\hat a_0 = a_0`
    if ``intercept`` else 0), is

    .. math::

        \hat y = \hat a_0 + x_{\ell+1}^\top (X^\top X + \lambda_{\mathrm{ctx}} I)^{-1}
            X^\top (y - \hat a_0),

    and in the limit :math:`d, \ell \to \infty`, :math:`\ell = \alpha d` its error on a
    fresh task is, with :math:`\lambda_{\mathrm{ctx}} = \alpha x`,

    .. math::

        \begin{aligned}
        e &= \rho_{\mathrm{ctx}} + \frac{1}{\alpha^2}\Big[
            -a_1^2 \lambda_{\mathrm{ctx}}^2 M'_\alpha(x)
            + \rho_{\mathrm{ctx}}\big(\alpha M_\alpha(x)
            + \lambda_{\mathrm{ctx}} M'_\alpha(x)\big)\Big], \\
        \rho_{\mathrm{ctx}} &= \rho_{nl} - 2 \hat a_0 a_0 + \hat a_0^2 ,
        \end{aligned}

    where :math:`M_\alpha` is :func:`M_kappa` at :math:`\kappa = \alpha` (the tokens'
    Gram matrix :math:`X^\top X` is :math:`\alpha` times a sample covariance of
    :math:`\alpha d` standard Gaussian vectors) and :math:`\rho_{\mathrm{ctx}}` is the
    second moment of the part of :math:`y - \hat a_0` that is not :math:`a_1 z` (label
    noise, :math:`a_0 - \hat a_0` and the higher Hermite modes, which act on the fit like
    noise: Gaussian equivalence, proved in chapter 5); it is :math:`\rho_{nl}` without the
    intercept and :math:`\rho_{\mathrm{eq}} = \rho_{nl} - a_0^2` with it. Derivation:
    :math:`e = \rho_{\mathrm{ctx}} + \frac1d E\|\widehat{a_1 w} - a_1 w\|^2`, with
    :math:`\widehat{a_1 w}` the fitted coefficients (Stein's lemma removes the cross
    term), and, with :math:`A = X^\top X` and the residual
    :math:`y - \hat a_0 - a_1 X w` of the context,
    :math:`\widehat{a_1 w} - a_1 w = -\lambda_{\mathrm{ctx}}(A + \lambda_{\mathrm{ctx}})^{-1}
    a_1 w + (A + \lambda_{\mathrm{ctx}})^{-1}X^\top (y - \hat a_0 - a_1 X w)`.

    At :math:`\lambda_{\mathrm{ctx}} = \rho_{\mathrm{ctx}}/a_1^2` the two :math:`M'` terms
    cancel and :math:`e = \rho_{\mathrm{ctx}} + (\rho_{\mathrm{ctx}}/\alpha)\, M_\alpha(x)`:
    this is the Bayes error of the Gaussian-equivalent teacher
    :math:`y = \hat a_0 + a_1 z + N(0, \rho_{\mathrm{ctx}})`, the smallest error of this
    family of predictors. The linear teacher with :math:`\lambda_{\mathrm{ctx}} = \rho`
    gives the Bayes-optimal error :math:`\rho + (\rho/\alpha) M_\alpha(\rho/\alpha)`.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (:func:`lib.teachers.teacher_moments`).
    alpha : float or array_like
        Context length per dimension (> 0).
    rho : float or array_like
        Label-noise variance (>= 0).
    ridge : float or array_like
        Ridge :math:`\lambda_{\mathrm{ctx}} > 0` of the context regression.
    intercept : bool, keyword-only
        Subtract and add back the teacher's mean :math:`a_0` (:math:`\hat a_0 = a_0`).

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha = check_param("alpha", alpha)
    rho = check_param("rho", rho)
    ridge = check_param("ridge", ridge)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"intercept must be True or False; got {intercept!r}")
    a0, a1, ef2 = teacher_moments(teacher)
    c = a0 if intercept else 0.0
    s2 = rho_nl_from_moments(rho, a1, ef2) - 2.0 * c * a0 + c * c
    x = ridge / alpha
    m, dm = np.asarray(M_kappa(x, alpha)), np.asarray(dM_kappa(x, alpha))
    with np.errstate(over="ignore", invalid="ignore"):
        e = s2 + (-(a1 * a1) * ridge**2 * dm + s2 * (alpha * m + ridge * dm)) / alpha**2
    check_result("context_ridge_error", e, alpha=alpha, rho=rho, ridge=ridge)
    return _out(np.asarray(e, dtype=float))
