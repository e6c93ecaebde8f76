r"""Asymptotic errors of linear attention for nonlinear teachers.

Through the nonlinearity-noise equivalence (book chapter 3), a teacher :math:`f` acts
on linear attention like the linear teacher :math:`a_1 z` plus label noise
:math:`\rho_{nl} = \rho + E[f^2] - a_1^2` (:func:`lib.teachers.effective_noise`):
:func:`nonlinear_icl_error`, :func:`nonlinear_idg_error`, their :math:`a_1 = 0` branch
:func:`pure_noise_error` (and its integral form :func:`pure_noise_error_integral`),
:func:`nonlinear_optimal_lambda` and the task-diversity transition :func:`transition_kappa`.

Used in chapters 3-6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import quad
from scipy.optimize import brentq

from lib._checks import check_broadcast, check_choice, check_gamma, check_int, check_param, check_rho, check_scalar
from lib._checks import scalar_or_array as _out
from lib.teachers import a1_is_zero, label_moments, rho_nl_from_moments, teacher_moments
from lib.theory.linear import check_lam, check_model_params, icl_error, idg_error, optimal_lambda

__all__ = [
    "pure_noise_error",
    "nonlinear_icl_error",
    "nonlinear_idg_error",
    "nonlinear_optimal_lambda",
    "transition_kappa",
    "pure_noise_error_integral",
    "TRANSITION_KAPPA0",
    "fixed_gamma_icl_error",
]


def pure_noise_error(rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike, lam: ArrayLike = 0.0) -> float | np.ndarray:
    r"""Error of linear attention when no task information reaches it (:math:`a_1 = 0`).

    .. math::

        \begin{aligned}
        e &= \rho_{nl}\Big[1 + \frac1\tau\big(m(-\zeta_0) - \zeta_0\, m'(-\zeta_0)\big)\Big] \\
          &= \rho_{nl}\Big[1 + \frac{2/\tau}{\chi\,(\zeta_0 + 1 + 1/\tau + \chi)}\Big], \\
        \zeta_0 &= \frac{\lambda\alpha}{\rho_{nl}},\quad
        \chi = \sqrt{(\zeta_0 + 1 - 1/\tau)^2 + 4\zeta_0/\tau},
        \end{aligned}

    with :math:`m(\zeta) = \big(1 - 1/\tau - \zeta - \sqrt{(1 - 1/\tau - \zeta)^2 -
    4\zeta/\tau}\big)/(2\zeta/\tau)` the Marchenko-Pastur Stieltjes transform at ratio
    :math:`p/n = 1/\tau`. Ridgeless
    (:math:`\lambda = 0`): :math:`e = \rho_{nl}/(1-\tau)` for :math:`\tau < 1`,
    :math:`e = \rho_{nl}\,\tau/(\tau-1)` for :math:`\tau > 1` and ``inf`` at
    :math:`\tau = 1` (the second form covers all cases, :math:`\lambda = 0` included).
    :math:`\rho_{nl} = 0` (then :math:`f \equiv 0` and there is no noise) gives 0.

    Derivation. With :math:`a_1 = 0` the target :math:`y_{\ell+1}` is uncorrelated
    with the regressor :math:`\operatorname{vec}(H_Z)`, :math:`H_Z = x_{\ell+1}\psi^\top`
    (to leading order, independent of it), so pretraining is least squares on pure noise
    of variance :math:`E[y^2] = \rho_{nl}`, and :math:`e = \rho_{nl} + E[\hat\beta^\top
    \Sigma\hat\beta]`. The regressor covariance is isotropic: :math:`E[u u^\top] \approx
    (d/\ell) E[y^2] I = (\rho_{nl}/\alpha) I` and :math:`E[x x^\top] = I/d`, so
    :math:`\Sigma \approx (\rho_{nl}/(\alpha d))\, I_p` (the last column of
    :math:`\Gamma`, :math:`d` of the :math:`p \approx d^2` parameters, does not matter in
    the limit). Dividing the objective by :math:`n`, the penalty is
    :math:`(\lambda/d)\|\Gamma\|^2`; in whitened coordinates
    :math:`\tilde\beta = \sqrt{\rho_{nl}/(\alpha d)}\;\hat\beta` it becomes
    :math:`\zeta_0\|\tilde\beta\|^2` with :math:`\zeta_0 = \lambda\alpha/\rho_{nl}`. For
    whitened ridge with :math:`n` samples and :math:`p` parameters, :math:`p/n = 1/\tau`,
    the variance term is :math:`(\rho_{nl}/\tau) \int s/(s+\zeta_0)^2\,dF_{1/\tau}(s) =
    (\rho_{nl}/\tau)\,(m(-\zeta_0) - \zeta_0 m'(-\zeta_0))`. Since
    :math:`m(-\zeta_0) = M_\tau(\zeta_0)` (:func:`M_kappa` with :math:`\kappa = \tau`),
    :math:`m(-\zeta_0) - \zeta_0 m'(-\zeta_0) = \tfrac{d}{d\zeta_0}[\zeta_0
    M_\tau(\zeta_0)]`, and with :math:`\zeta_0 M_\tau(\zeta_0) = \tau(\chi - (\zeta_0 + 1
    - 1/\tau))/2` this derivative is :math:`2/(\chi(\zeta_0 + 1 + 1/\tau + \chi))`, free of
    the :math:`1/\zeta_0` cancellation of the first form as :math:`\zeta_0 \to 0` when
    :math:`\tau < 1`.

    It is the :math:`a_1 \to 0` limit of :func:`nonlinear_icl_error` at fixed
    :math:`\rho_{nl}` (checked numerically in ``tests/test_theory.py``).

    Parameters
    ----------
    rho_nl : float or array_like
        Effective noise :math:`\rho_{nl} \ge 0` (:func:`effective_noise`).
    alpha : float or array_like
        :math:`\alpha > 0` (enters only through :math:`\zeta_0`).
    tau : float or array_like
        :math:`\tau > 0`.
    lam : float or array_like, default 0
        :math:`\lambda \ge 0`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    rho_nl = check_param("rho_nl", rho_nl)
    alpha = check_param("alpha", alpha)
    tau = check_param("tau", tau)
    lam = check_lam(lam)
    check_broadcast(("rho_nl", rho_nl), ("alpha", alpha), ("tau", tau), ("lam", lam))
    rho_nl, alpha, tau, lam = (np.array(a, dtype=float) for a in np.broadcast_arrays(rho_nl, alpha, tau, lam))
    out = np.zeros(rho_nl.shape)
    peak = (rho_nl > 0.0) & (lam == 0.0) & (tau == 1.0)
    out[peak] = np.inf
    ok = (rho_nl > 0.0) & ~peak
    r, g = rho_nl[ok], 1.0 / tau[ok]
    with np.errstate(over="ignore"):  # mu = inf (lam > 0, rho_nl subnormal) gives e = rho_nl
        mu = lam[ok] * alpha[ok] / r
        s = np.hypot(mu + 1.0 - g, 2.0 * np.sqrt(g * mu))
        out[ok] = r * (1.0 + 2.0 * g / (s * (mu + 1.0 + g + s)))
    return _out(out)


def nonlinear_icl_error(
    teacher: Any,
    alpha: ArrayLike,
    kappa: ArrayLike,
    tau: ArrayLike,
    rho: ArrayLike,
    lam: ArrayLike = 0.0,
) -> float | np.ndarray:
    r"""Asymptotic ICL error for a nonlinear teacher :math:`y = f(x^\top w) + \varepsilon`.

    The nonlinearity-noise equivalence: with :math:`a_1 = E[f(z)z]` and
    :math:`\rho_{nl} = \rho + E[f^2] - a_1^2` (:func:`effective_noise`),

    .. math::

        e_f(\alpha, \kappa, \tau, \rho, \lambda) =
        \begin{cases}
        a_1^2\, e_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2, \lambda/a_1^2\big)
            & a_1 \ne 0, \\
        e_{\mathrm{noise}}(\rho_{nl}, \alpha, \tau, \lambda) & a_1 = 0,
        \end{cases}

    where :math:`e_{\mathrm{lin}}` is :func:`icl_error` and :math:`e_{\mathrm{noise}}`
    is :func:`pure_noise_error` (ridgeless: :math:`\rho_{nl}/(1-\tau)` for
    :math:`\tau < 1`, :math:`\rho_{nl}\tau/(\tau-1)` for :math:`\tau > 1`, ``inf`` at
    :math:`\tau = 1`; it does not depend on :math:`\kappa`). :math:`a_1` counts as
    zero when :math:`|a_1| \le 10^{-10}\sqrt{E f^2} + 10^{-12}` (``A1_ZERO_RTOL``,
    ``A1_ZERO_ATOL``); the two branches agree in the limit :math:`a_1 \to 0`, so the
    threshold is not delicate. :math:`f \equiv 0` with :math:`\rho = 0` gives 0.
    The linear teacher (:math:`a_1 = 1`, :math:`\rho_{nl} = \rho`) gives
    :func:`icl_error` exactly.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`, as accepted by :func:`lib.teachers.teacher_moments`.
    alpha, kappa, tau, rho, lam : float or array_like
        As in :func:`icl_error`; broadcast together.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.

    Examples
    --------
    >>> import numpy as np
    >>> round(nonlinear_icl_error("relu", 2.0, np.inf, 4.0, 0.1), 6)
    0.648485
    """
    alpha, kappa, tau, rho, lam = check_model_params(alpha, kappa, tau, rho, lam)
    _, a1, ef2 = teacher_moments(teacher)
    rho_nl = rho_nl_from_moments(rho, a1, ef2)
    if a1_is_zero(a1, ef2):
        shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape, lam.shape)
        return _out(np.broadcast_to(pure_noise_error(rho_nl, alpha, tau, lam), shape).copy())
    s = a1 * a1
    return _out(s * np.asarray(icl_error(alpha, kappa, tau, rho_nl / s, lam / s)))


def nonlinear_idg_error(
    teacher: Any, alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike
) -> float | np.ndarray:
    r"""Asymptotic ridgeless IDG error for a nonlinear teacher.

    .. math::

        e_f =
        \begin{cases}
        a_1^2\, e^{\mathrm{IDG}}_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big)
            & a_1 \ne 0, \\
        e_{\mathrm{noise}}(\rho_{nl}, \alpha, \tau, 0) & a_1 = 0,
        \end{cases}

    with :func:`idg_error` and :func:`pure_noise_error`. For :math:`a_1 = 0` no task
    information is learned, so the IDG error equals the ICL error. Conventions as in
    :func:`nonlinear_icl_error`.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    alpha, kappa, tau, rho : float or array_like
        As in :func:`idg_error`; broadcast together.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha, kappa, tau, rho = check_model_params(alpha, kappa, tau, rho)
    _, a1, ef2 = teacher_moments(teacher)
    rho_nl = rho_nl_from_moments(rho, a1, ef2)
    if a1_is_zero(a1, ef2):
        shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape)
        return _out(np.broadcast_to(pure_noise_error(rho_nl, alpha, tau), shape).copy())
    s = a1 * a1
    return _out(s * np.asarray(idg_error(alpha, kappa, tau, rho_nl / s)))


def nonlinear_optimal_lambda(
    teacher: Any, alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike
) -> tuple[float | np.ndarray, float | np.ndarray]:
    r"""The ridge strength that minimizes the ICL error of a nonlinear teacher, and that error.

    By the nonlinearity-noise equivalence (:func:`nonlinear_icl_error`) the teacher's
    error at ridge :math:`\lambda` is the linear error at :math:`\tilde\rho = \rho_{nl}/a_1^2`
    and :math:`\lambda / a_1^2`, times :math:`a_1^2`, so

    .. math::

        \lambda^*_f = a_1^2\, \lambda^*_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big),
        \qquad e^*_f = a_1^2\, e^*_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big),

    with :math:`(\lambda^*_{\mathrm{lin}}, e^*_{\mathrm{lin}})` from :func:`optimal_lambda`
    (numerical minimization; :math:`\lambda^*` is searched in ``[1e-8, 1e4]`` for the
    linear problem, hence in :math:`a_1^2` times that interval here).

    :math:`a_1 = 0` (same test as :func:`nonlinear_icl_error`): the ridge error
    :func:`pure_noise_error` decreases in :math:`\lambda` all the way to
    :math:`\lambda = \infty`, so ``lam_star = inf`` and ``e_star`` is its limit
    :math:`\rho_{nl}`, the error of the zero predictor.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`, as accepted by :func:`lib.teachers.teacher_moments`.
    alpha, kappa, tau, rho : float or array_like
        As in :func:`icl_error`; broadcast together.

    Returns
    -------
    lam_star, e_star : float or numpy.ndarray
        Broadcast shape; floats for scalar input.

    Notes
    -----
    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha, kappa, tau, rho = check_model_params(alpha, kappa, tau, rho)
    _, a1, ef2 = teacher_moments(teacher)
    rho_nl = rho_nl_from_moments(rho, a1, ef2)
    if a1_is_zero(a1, ef2):
        shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape)
        return _out(np.full(shape, np.inf)), _out(np.broadcast_to(rho_nl, shape).copy())
    s = a1 * a1
    lam, e = optimal_lambda(alpha, kappa, tau, rho_nl / s)
    return _out(s * np.asarray(lam)), _out(s * np.asarray(e))


#: :math:`\kappa` at which :func:`transition_kappa` evaluates the memorization level :math:`e(0)`.
TRANSITION_KAPPA0 = 1e-8
#: Grid of :math:`\log_{10}\kappa` scanned by :func:`transition_kappa` for a crossing.
TRANSITION_LOG10_GRID = np.linspace(-4.0, 4.0, 161)


def transition_kappa(
    q: float,
    teacher: Any,
    alpha: float,
    tau: float,
    rho: float,
    lam: float = 0.0,
    *,
    missing: str = "raise",
) -> float:
    r"""Task diversity :math:`\kappa_q` at which the ICL error has covered the fraction ``q`` of its drop.

    .. math::

        e_{\mathrm{ICL}}(\kappa_q) = e_{\mathrm{ICL}}(0) - q\,\big[e_{\mathrm{ICL}}(0) - e_{\mathrm{ICL}}(\infty)\big],

    with :math:`e_{\mathrm{ICL}}` = :func:`nonlinear_icl_error` (ridge ``lam``), the
    memorization level :math:`e_{\mathrm{ICL}}(0)` evaluated at
    :math:`\kappa = 10^{-8}` (``TRANSITION_KAPPA0``) and the generalization level at
    :math:`\kappa = \infty`. :math:`\kappa_{1/2}` is the transition point and
    :math:`\kappa_{0.9} - \kappa_{0.1}` its width. The error can rise slightly before
    it falls (small :math:`\alpha, \tau`), so the level is located as the **last
    down-crossing** on the grid :math:`\log_{10}\kappa \in [-4, 4]` (161 points,
    ``TRANSITION_LOG10_GRID``), refined with :func:`scipy.optimize.brentq` in
    :math:`\log_{10}\kappa` (``xtol = 1e-12``).

    Parameters
    ----------
    q : float
        Fraction of the drop, :math:`0 < q < 1`.
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (:func:`lib.teachers.teacher_moments`).
    alpha, tau : float
        Context length and pretraining data (> 0); scalars.
    rho : float
        Label noise (>= 0).
    lam : float, default 0
        Ridge strength (>= 0).
    missing : {"raise", "nan"}, keyword-only
        What to do when there is no crossing: raise ``ValueError`` (default) or return
        ``nan`` (for curves over a parameter grid, where such points are left blank).

    Returns
    -------
    float
        :math:`\kappa_q`.

    Raises
    ------
    ValueError
        Bad arguments, or (with ``missing="raise"``) no crossing: the memorization
        level is not above the generalization level (e.g. :math:`a_1 = 0`, or short
        contexts with little data), or the error does not fall through the level
        inside :math:`[10^{-4}, 10^4]`.

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """

    q = check_scalar("q", q, low=0.0, high=1.0, low_open=True, high_open=True)
    alpha = check_param("alpha", alpha, scalar=True)
    tau = check_param("tau", tau, scalar=True)
    rho = check_rho(rho)
    lam = float(check_lam(lam))
    check_choice("missing", missing, ("raise", "nan"))

    def e(kappa):
        return nonlinear_icl_error(teacher, alpha, kappa, tau, rho, lam)

    e0, e_inf = e(TRANSITION_KAPPA0), e(np.inf)
    level = e0 - q * (e0 - e_inf)

    def g(u):
        return e(10.0**u) - level

    grid = TRANSITION_LOG10_GRID
    s = g(grid)
    down = np.flatnonzero((s[:-1] > 0) & (s[1:] <= 0))
    if e0 <= e_inf or down.size == 0:
        if missing == "nan":
            return float("nan")
        why = (
            f"the memorization level e(0) = {e0:.6g} is not above the generalization level e(inf) = {e_inf:.6g}"
            if e0 <= e_inf
            else f"the ICL error does not fall through the level {level:.6g} for kappa in [1e-4, 1e4]"
        )
        raise ValueError(
            f"transition_kappa: no kappa_q for q = {q:g} at alpha = {alpha:g}, tau = {tau:g}, rho = {rho:g}, "
            f"lam = {lam:g}: {why}; pass missing='nan' to get nan instead"
        )
    return float(10.0 ** brentq(g, grid[down[-1]], grid[down[-1] + 1], xtol=1e-12))


def pure_noise_error_integral(rho_nl: float, alpha: float, tau: float, lam: float) -> float:
    r"""The pure-noise ridge risk as an integral over the Marchenko-Pastur law.

    .. math::

        e = \rho_{nl}\Big[1 + \frac1\tau \int \frac{r}{(r + \zeta_0)^2}\, dF(r)\Big],
        \qquad \zeta_0 = \frac{\lambda\alpha}{\rho_{nl}},

    with :math:`F` the Marchenko-Pastur law of ratio :math:`p/n = 1/\tau`: density
    :math:`\sqrt{(r_+ - r)(r - r_-)}/(2\pi r/\tau)` on :math:`[r_-, r_+]`,
    :math:`r_\pm = (1 \pm \tau^{-1/2})^2`, plus an atom at 0 of mass
    :math:`1 - \tau` when :math:`\tau < 1` (which does not contribute). The integral is
    computed by adaptive quadrature (:func:`scipy.integrate.quad`). It is the
    definition that :func:`pure_noise_error` evaluates in closed form, and serves as an
    independent check of it; ``lam > 0`` is required (the ridgeless limit at
    :math:`\tau < 1` is a limit, not this integral at :math:`\lambda = 0`).

    Parameters
    ----------
    rho_nl : float
        Effective noise, ``> 0``.
    alpha : float
        Context length per dimension, ``> 0``.
    tau : float
        Pretraining contexts per parameter, ``> 0``.
    lam : float
        Ridge strength, ``> 0``.

    Returns
    -------
    float
        The pure-noise error, as :func:`pure_noise_error` gives it in closed form.

    Raises
    ------
    ValueError
        If an argument is not a positive finite number.

    Notes
    -----
    Used in: chapter 3 (the exercise on the pure-noise risk; tests of
    :func:`pure_noise_error`).
    """

    vals = {"rho_nl": rho_nl, "alpha": alpha, "tau": tau, "lam": lam}
    r, a, t, lm = (check_scalar(k, v, low=0.0, low_open=True) for k, v in vals.items())
    with np.errstate(over="ignore", divide="ignore"):
        ratio, zeta0 = 1.0 / t, lm * a / r
    if not (ratio < 1e150 and zeta0 < 1e150):
        raise ValueError(
            "pure_noise_error_integral: 1/tau and lam alpha / rho_nl must be below 1e150; got "
            f"rho_nl = {r!r}, alpha = {a!r}, tau = {t!r}, lam = {lm!r}"
        )
    lo, hi = (1.0 - np.sqrt(ratio)) ** 2, (1.0 + np.sqrt(ratio)) ** 2

    def integrand(s: float) -> float:
        density = np.sqrt(max((hi - s) * (s - lo), 0.0)) / (2.0 * np.pi * ratio * s)
        return s / (s + zeta0) ** 2 * density

    integral, _ = quad(integrand, lo, hi, limit=200, epsabs=1e-13, epsrel=1e-11)
    return float(r * (1.0 + ratio * integral))


def fixed_gamma_icl_error(gamma: Any, ell: int, teacher: Any, rho: float) -> float:
    r"""Exact ICL error of a fixed :math:`\Gamma` for a nonlinear teacher, at finite d.

    For fresh tasks (:math:`\|w\|^2 = d`, :math:`E[ww^\top] = I`), tokens
    :math:`N(0, I_d/d)` and labels :math:`y = f(z) + \sqrt\rho\,\varepsilon`, split
    :math:`\Gamma = [\Gamma_1, \gamma_2]` (:math:`\gamma_2` its last column). Then

    .. math::

        e(\Gamma) = m_2 - \frac{2a_1^2}{d}\tr\Gamma_1
            + \frac{s_2 + m_2 (d-1)/\ell}{d}\,\|\Gamma_1\|_F^2
            + \frac{q_2}{d}\,\|\gamma_2\|^2,

    with :math:`m_2 = E[y^2]`, :math:`s_2 = a_1^2 + (E[y^2z^2] - a_1^2)/\ell` and
    :math:`q_2 = m_2^2 + (E[y^4] - m_2^2)/\ell`: the error depends on the teacher only
    through :math:`a_1`, :math:`E[y^2]`, :math:`E[y^2 z^2]` and :math:`E[y^4]`
    (:func:`lib.teachers.label_moments`). For the linear teacher it is
    :func:`lib.attention.exact_error` with ``tasks=None``.

    Parameters
    ----------
    gamma : array_like, shape (d, d + 1)
        The matrix :math:`\Gamma`, fixed (not a function of the test context).
    ell : int
        Context length, ``>= 1``.
    teacher : None, str, Link, callable or array_like
        The link ``f``, as in :func:`lib.teachers.resolve_teacher`; its fourth moment
        must be finite.
    rho : float
        Label-noise variance, ``>= 0``.

    Returns
    -------
    float
        The expected squared error on a fresh context, exact at this ``d`` and ``ell``.

    Raises
    ------
    ValueError
        If ``gamma`` is not of shape (d, d + 1), ``ell`` is not a positive integer,
        ``rho`` is negative or the teacher is invalid.

    See Also
    --------
    lib.attention.exact_error : the same for the linear teacher, with task sets.
    lib.simulation.mc_error : its Monte Carlo estimate.

    Notes
    -----
    Used in: chapter 3 (the equivalence at a fixed :math:`\Gamma`). The formula follows
    from the split of the tokens along the task: given :math:`w`, the feature
    :math:`(u, q)` has mean :math:`(a_1 w, m_2)` and second moments set by the four
    label moments above.
    """
    gamma = check_gamma(gamma)
    ell = check_int("ell", ell, low=1)
    rho = float(check_rho(rho))
    d = gamma.shape[0]
    mom = label_moments(teacher, rho)
    a1, m2 = mom.eyz, mom.ey2
    s2 = a1**2 + (mom.ey2z2 - a1**2) / ell
    q2 = m2**2 + (mom.ey4 - m2**2) / ell
    g1, g2 = gamma[:, :-1], gamma[:, -1]
    out = m2 - 2.0 * a1**2 * np.trace(g1) / d + (s2 + m2 * (d - 1) / ell) * np.sum(g1**2) / d + q2 * np.sum(g2**2) / d
    return float(out)
