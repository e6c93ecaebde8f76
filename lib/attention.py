"""One layer of linear attention, its reduced parameter Gamma, and ridge pretraining.

The chain of this module follows the book:

1. :func:`embed` and :func:`linear_attention`: the full one-layer linear self-attention
   (LSA) with key-query matrix ``W_kq`` and projection-value matrix ``W_pv``, read out at
   the label slot of the query token.
2. :func:`gamma_from_weights`: the reduction to one matrix ``Gamma`` (d x (d+1)) such that
   the prediction is ``y_hat = <Gamma, H_Z> = x_query^T Gamma f`` with the context
   features ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]`` (book section 2.1);
   :func:`predict` evaluates it and :func:`weights_from_gamma` goes back.
3. :func:`fit_gamma`: ridge pretraining of ``Gamma`` on ``n`` contexts, with three solvers
   (dense primal normal equations, dual kernel, matrix-free preconditioned CG; the
   solvers themselves are in ``lib._ridge_solvers``).
4. :func:`exact_error`: the finite-d test error for the linear teacher. The Monte Carlo
   error of any teacher and the experiment runner (:func:`lib.simulation.simulate`) are
   in :mod:`lib.simulation`.

Conventions: ``vec`` stacks columns: ``theta = vec(Gamma)`` has ``theta[j * d + i] = Gamma[i, j]``
(``Gamma.reshape(-1, order="F")``). Then ``<Gamma, x f^T> = theta^T (f kron x)``, so the
regression feature of a context is ``phi = f kron x`` (``np.kron(f, x)``) and the
design matrix ``Phi`` (n x p, p = d(d+1)) has these rows.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from lib._checks import as_matrix as _as_matrix
from lib._checks import check_batch as _check_batch
from lib._checks import check_choice, check_int, check_memory, check_param, check_real, check_rho, check_scalar
from lib._checks import check_gamma as _check_gamma
from lib._checks import check_unit_tasks as _check_unit_tasks
from lib._limits import ConvergenceError, solve_rescaled
from lib._ridge_solvers import _BATCH_BYTES, _fit_dense, _fit_dual, _fit_matfree, _predict

__all__ = [
    "ConvergenceError",
    "embed",
    "linear_attention",
    "gamma_from_weights",
    "weights_from_gamma",
    "predict",
    "fit_gamma",
    "exact_error",
    "METHODS",
]

#: Solvers accepted by :func:`fit_gamma`.
METHODS = ("auto", "dense", "dual", "matfree")

# --- rule of method="auto" (measured on the book's machine; see bench/bench_solvers.py) ---
# Single-thread CPU time, alpha = 2, kappa = inf, lam = 0 (bench/bench_solvers.py, third
# table). n >= p (tau = 2): dense and matfree break even at p ~ 420 (d = 20, 5 ms each);
# matfree is 2.4x faster at p = 930 (44 vs 18 ms), 4.5x at p = 1640, 8.4x at p = 2550.
# n < p (tau = 0.5): dual and matfree break even at n ~ 1100; matfree is 1.8x faster at
# n = 1800 (75 vs 41 ms) and 2.6x at n = 3200. The direct solvers are exact and cannot
# fail to converge, so they are kept a little past the break-even point, while they take
# under 0.1 s.
#: "dense" is chosen when n >= p and p <= AUTO_DENSE_MAX_P ...
AUTO_DENSE_MAX_P = 1000
#: ... "dual" when n < p and n <= AUTO_DUAL_MAX_N; "matfree" otherwise.
AUTO_DUAL_MAX_N = 2000

#: Default relative residual tolerance of the conjugate-gradient solver of "matfree".
CG_RTOL = 1e-8
#: Default iteration cap of the conjugate-gradient solver of "matfree".
CG_MAXITER = 2000
#: Default number of test contexts of the Monte Carlo errors of :func:`simulate`.
N_TEST_DEFAULT = 20_000
#: Test contexts per batch of :func:`mc_error` (memory O(MC_BATCH d) whatever n_test).
MC_BATCH = 20_000


# ----------------------------------------------------------------------------------------
# 1. the full linear-attention layer and its reduction
# ----------------------------------------------------------------------------------------


def embed(X: Any, y: Any, x_query: Any) -> np.ndarray:
    """Embed contexts as token matrices ``Z`` with columns ``[x_i; y_i]`` and ``[x_query; 0]``.

    Parameters
    ----------
    X : array_like, shape (n, ell, d) or (ell, d)
        Context tokens.
    y : array_like, shape (n, ell) or (ell,)
        Their labels.
    x_query : array_like, shape (n, d) or (d,)
        Query tokens.

    Returns
    -------
    numpy.ndarray, shape (n, d + 1, ell + 1) or (d + 1, ell + 1)
        ``Z[:, :d, i] = x_i``, ``Z[:, d, i] = y_i`` for ``i < ell``;
        ``Z[:, :d, ell] = x_query`` and ``Z[:, d, ell] = 0`` (the label to predict).

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`.
    """
    X = check_real("X", X)
    single = X.ndim == 2
    if single:
        X = X[None]
    if X.ndim != 3 or X.shape[1] < 1 or X.shape[2] < 1:
        raise ValueError(f"X must have shape (n, ell, d) or (ell, d) with ell, d >= 1; got shape {X.shape}")
    n, ell, d = X.shape
    y = check_real("y", y)
    y = y[None] if single else y
    if y.shape != (n, ell):
        want = (ell,) if single else (n, ell)
        raise ValueError(f"y must have shape {want} to match X; got shape {y.shape if not single else y.shape[1:]}")
    x_query = check_real("x_query", x_query)
    x_query = x_query[None] if single else x_query
    if x_query.shape != (n, d):
        want = (d,) if single else (n, d)
        raise ValueError(f"x_query must have shape {want} to match X; got shape {x_query.shape[single:]}")
    Z = np.zeros((n, d + 1, ell + 1))
    Z[:, :d, :ell] = np.swapaxes(X, 1, 2)
    Z[:, d, :ell] = y
    Z[:, :d, ell] = x_query
    return Z[0] if single else Z


def _check_weights(W_kq: Any, W_pv: Any, D: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    W_kq = _as_matrix("W_kq", W_kq, 2)
    W_pv = _as_matrix("W_pv", W_pv, 2)
    if W_kq.shape[0] < 2 or W_kq.shape[0] != W_kq.shape[1]:
        raise ValueError(f"W_kq must be square of shape (d + 1, d + 1) with d >= 1; got shape {W_kq.shape}")
    if W_pv.shape != W_kq.shape:
        raise ValueError(f"W_pv must have the shape of W_kq, {W_kq.shape}; got shape {W_pv.shape}")
    if D is not None and W_kq.shape[0] != D:
        raise ValueError(f"W_kq and W_pv must have shape ({D}, {D}) to act on Z; got shape {W_kq.shape}")
    return W_kq, W_pv


def linear_attention(Z: Any, W_kq: Any, W_pv: Any) -> np.ndarray:
    """Prediction of one layer of linear self-attention at the query's label slot.

    The layer maps ``Z`` (``(d+1) x (ell+1)``) to

    .. math:: Z + \\frac{1}{\\ell} W_{pv} Z M (Z^\\top W_{kq} Z),
              \\qquad M = \\operatorname{diag}(1, \\dots, 1, 0),

    i.e. every token attends, with linear (un-normalized, no softmax) scores
    ``Z_i^T W_kq Z_j`` between columns of ``Z``, to the ``ell`` context tokens only (the
    mask ``M`` drops the query token as a key) and the sum is divided by ``ell``. The
    prediction is the entry ``(d+1, ell+1)`` (label row, query column):

    .. math:: \\hat y = \\frac{1}{\\ell} \\sum_{i=1}^{\\ell}
              (W_{pv} z_i)_{d+1} \\; z_i^\\top W_{kq} z_{\\ell+1}.

    The residual term adds ``Z[d, ell] = 0``, so the read-out is the same with or without it.

    Parameters
    ----------
    Z : array_like, shape (n, d + 1, ell + 1) or (d + 1, ell + 1)
        Embedded contexts (:func:`embed`).
    W_kq, W_pv : array_like, shape (d + 1, d + 1)
        Merged key-query and projection-value matrices.

    Returns
    -------
    numpy.ndarray, shape (n,), or float for a single ``Z``
        The prediction read at the label slot of the query token.

    Notes
    -----
    Cost ``O(n ell d)``. Used in: :doc:`the model </book/linear/model>`.
    """
    Z = check_real("Z", Z)
    single = Z.ndim == 2
    if single:
        Z = Z[None]
    if Z.ndim != 3 or Z.shape[1] < 2 or Z.shape[2] < 2:
        raise ValueError(
            f"Z must have shape (n, d + 1, ell + 1) or (d + 1, ell + 1) with d, ell >= 1; got shape {Z.shape}"
        )
    ell = Z.shape[2] - 1
    W_kq, W_pv = _check_weights(W_kq, W_pv, Z.shape[1])
    ctx = Z[:, :, :ell]  # (n, d+1, ell): the keys/values
    scores = np.einsum("nak,ab,nb->nk", ctx, W_kq, Z[:, :, ell])  # z_i^T W_kq z_query
    values = np.einsum("a,nak->nk", W_pv[-1], ctx)  # (W_pv z_i)_{d+1}
    out = np.einsum("nk,nk->n", values, scores) / ell
    return float(out[0]) if single else out


def gamma_from_weights(W_kq: Any, W_pv: Any) -> np.ndarray:
    """The reduced parameter ``Gamma`` of a linear-attention layer.

    Write the blocks (``d x d``, ``d x 1``, ``1 x d``, ``1 x 1``)

    .. math:: W_{kq} = \\begin{pmatrix} K_{11} & k_{12} \\\\ k_{21}^\\top & k_{22}\\end{pmatrix},
              \\quad
              W_{pv} = \\begin{pmatrix} V_{11} & v_{12} \\\\ v_{21}^\\top & v_{22}\\end{pmatrix}.

    In the prediction of :func:`linear_attention`, ``W_kq`` acts on the query token
    ``[x_q; 0]``, so its last column (``k12``, ``k22``) is multiplied by 0; only the last row
    of ``W_pv`` is read, so ``V11`` and ``v12`` never matter. With
    ``C = (1/ell) sum_i (x_i; y_i)(x_i; y_i)^T`` the remaining terms are

    .. math::

        \\begin{aligned}
        \\hat y &= [v_{21}^\\top, v_{22}]\\, C \\begin{pmatrix} K_{11} x_q \\\\
                  k_{21}^\\top x_q \\end{pmatrix} \\\\
                &= v_{22}\\, x_q^\\top K_{11}^\\top \\tfrac{1}{\\ell}\\textstyle\\sum_i y_i x_i
                  + v_{22}\\, x_q^\\top k_{21} \\tfrac{1}{\\ell}\\textstyle\\sum_i y_i^2
                  + (\\text{terms with } v_{21}).
        \\end{aligned}

    Matching with ``<Gamma, H_Z> = x_q^T Gamma_1 (d/ell) sum_i y_i x_i + x_q^T gamma_2 (1/ell) sum_i y_i^2``:

    .. math:: \\Gamma = v_{22} \\big[\\, K_{11}^\\top / d ,\\; k_{21} \\,\\big] .

    The factor ``1/d`` compensates the ``d/ell`` normalization of ``u`` in ``H_Z``.
    The ``v21`` terms are ``x_q^T K_11^T C_xx v21 + (x_q^T k21) v21^T (1/ell) sum_i y_i x_i``;
    the first involves ``C_xx = (1/ell) sum_i x_i x_i^T``, which is not a function of
    ``H_Z``, so the reduced model assumes ``v21 = 0`` (as in Lu et al.); this function
    refuses weights with ``v21 != 0`` rather than return a ``Gamma`` that predicts
    differently.

    Parameters
    ----------
    W_kq, W_pv : array_like, shape (d + 1, d + 1)

    Returns
    -------
    numpy.ndarray, shape (d, d + 1)
        ``Gamma`` with ``linear_attention(embed(X, y, x_q), W_kq, W_pv) == predict(Gamma, x_q, f)``.

    Raises
    ------
    ValueError
        If the shapes are wrong or the block ``v21 = W_pv[d, :d]`` is not zero.

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`.
    """
    W_kq, W_pv = _check_weights(W_kq, W_pv)
    d = W_kq.shape[0] - 1
    v21 = W_pv[d, :d]
    if np.any(v21 != 0.0):
        raise ValueError(
            "W_pv[d, :d] (the block v21 of the projection-value matrix) must be zero: with "
            "v21 != 0 the prediction contains the label-free term x_q^T W_11^T C_xx v21, which is "
            f"not a function of H_Z, so no Gamma reproduces it; got max |v21| = {np.max(np.abs(v21)):.3g}"
        )
    v22 = W_pv[d, d]
    gamma = np.empty((d, d + 1))
    gamma[:, :d] = v22 * W_kq[:d, :d].T / d
    gamma[:, d] = v22 * W_kq[d, :d]
    return gamma


def weights_from_gamma(gamma: Any) -> tuple[np.ndarray, np.ndarray]:
    """One choice of attention weights realizing a given ``Gamma`` (inverse of :func:`gamma_from_weights`).

    Takes ``v22 = 1``, ``K11 = d Gamma_1^T``, ``k21 = gamma_2`` and zeros elsewhere, so
    every ``Gamma`` is reachable and fitting ``Gamma`` is the same as fitting the layer.

    Parameters
    ----------
    gamma : array_like, shape (d, d + 1)

    Returns
    -------
    (W_kq, W_pv) : tuple of numpy.ndarray, each (d + 1, d + 1)
        Weights whose attention layer computes ``predict(gamma, ...)``.

    Notes
    -----
    Used in: chapter 2 (linear ICL review: from attention to Gamma).
    """
    gamma = _check_gamma(gamma)
    d = gamma.shape[0]
    W_kq = np.zeros((d + 1, d + 1))
    W_kq[:d, :d] = d * gamma[:, :d].T
    W_kq[d, :d] = gamma[:, d]
    W_pv = np.zeros((d + 1, d + 1))
    W_pv[d, d] = 1.0
    return W_kq, W_pv


def predict(gamma: Any, queries: Any, features: Any) -> np.ndarray:
    """Reduced linear-attention prediction ``y_hat = <Gamma, x_q f^T> = x_q^T Gamma f``.

    Parameters
    ----------
    gamma : array_like, shape (d, d + 1)
    queries : array_like, shape (n, d)
        Query tokens ``x_q``.
    features : array_like, shape (n, d + 1)
        Context features ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The predictions :math:`x_{\\mathrm{query}}^\\top \\Gamma f` of the contexts.

    Notes
    -----
    Computed as ``rowsum((X Gamma) * F)`` in ``O(n d^2)`` without forming ``H_Z``.
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """
    queries, features = _check_batch(queries, features)
    gamma = _check_gamma(gamma, queries.shape[1])
    return _predict(gamma, queries, features)


# ----------------------------------------------------------------------------------------
# 2. ridge pretraining of Gamma (the solvers are in lib/_ridge_solvers.py)
# ----------------------------------------------------------------------------------------


def fit_peak_bytes(n: int, d: int, method: str = "auto", lam: float = 0.0) -> float:
    """Estimated extra memory of :func:`fit_gamma` beyond its inputs, in bytes.

    ``p = d(d + 1)``. dense: the ``p x p`` Gram matrix (twice at ``lam = 0``, where the
    pseudo-inverse fallback also holds its eigenvectors), or ``Phi`` (``n x p``) and its
    ``lstsq`` copy at ``lam = 0, n < p``. dual: the ``n x n`` kernel (twice at
    ``lam = 0, n >= p``). matfree: one ``n x (d + 1)`` temporary (``Phi^T y``, and
    ``Phi^T c`` of the dual CG) and a few CG vectors. Plus the row blocks (``_BATCH_BYTES``).
    """
    n, d = float(n), float(d)
    p = d * (d + 1)
    used = _auto_method(n, p) if method == "auto" else method
    if used == "dense":
        if lam == 0.0 and n < p:
            core = 2 * 8 * n * p
        else:
            core = (1 if lam > 0.0 else 2) * 8 * p * p
        blocks = min(_BATCH_BYTES, 8 * n * p)
    elif used == "dual":
        core = (1 if (lam > 0.0 or n < p) else 2) * 8 * n * n
        blocks = min(_BATCH_BYTES, 8 * n * n)
    else:
        core = 8 * n * (d + 1) + 8 * 10 * max(n, p) + 8 * 4 * (d + 1) ** 2
        blocks = min(_BATCH_BYTES, 8 * 3 * n * (d + 1))
    return core + blocks


def _auto_method(n: int, p: int) -> str:
    if n >= p:
        return "dense" if p <= AUTO_DENSE_MAX_P else "matfree"
    return "dual" if n <= AUTO_DUAL_MAX_N else "matfree"


def fit_gamma(
    queries: Any,
    features: Any,
    targets: Any,
    lam: float = 0.0,
    method: str = "auto",
    *,
    rtol: float = CG_RTOL,
    maxiter: int = CG_MAXITER,
    return_info: bool = False,
):
    """Ridge pretraining of the reduced attention parameter ``Gamma``.

    .. math:: \\Gamma^* = \\arg\\min_\\Gamma \\sum_{\\mu=1}^n
              \\big(y_\\mu - x_\\mu^\\top \\Gamma \\psi_\\mu\\big)^2
              + \\frac{n}{d} \\lambda \\|\\Gamma\\|_F^2 .

    With ``theta = vec(Gamma)`` (columns stacked) and rows ``vec(x_mu phi_mu^T) = phi_mu kron
    x_mu`` of the design matrix ``Phi`` (n x p, ``p = d(d+1)``) this is ridge regression
    ``(Phi^T Phi + (n/d) lam I) theta = Phi^T y``. At ``lam = 0`` the **minimum-norm**
    solution is returned: the least-squares solution when ``n >= p`` (unique for a
    full-rank design), the interpolator of smallest Frobenius norm when ``n < p`` (the
    limit ``lam -> 0+``).

    Parameters
    ----------
    queries : array_like, shape (n, d)
        Query tokens ``x_mu`` (the matrix ``X``).
    features : array_like, shape (n, d + 1)
        Context features ``phi_mu = (u_mu, q_mu)`` (the matrix ``F``).
    targets : array_like, shape (n,)
        Query labels ``y_mu``.
    lam : float
        Ridge strength ``lambda >= 0``.
    method : {"auto", "dense", "dual", "matfree"}
        ``"dense"``: primal normal equations, ``Phi^T Phi`` accumulated in batches,
        ``O(n p^2)`` time, ``8 p^2`` bytes (``p = 10,100``, i.e. 0.8 GB, at ``d = 100``);
        Cholesky (``lam = 0, n >= p``: pseudo-inverse if the design is rank deficient);
        ``lam = 0, n < p``: ``scipy.linalg.lstsq`` on ``Phi`` (minimum norm).
        ``"dual"``: ``K = (X X^T) * (F F^T)``, ``c = (K + (n/d) lam I)^{-1} y``,
        ``Gamma = X^T diag(c) F``; ``O(n^2 d + n^3)`` time, ``8 n^2`` bytes; ``lam = 0``:
        Cholesky when ``n < p``, else the pseudo-inverse of ``K`` (minimum norm).
        ``"matfree"``: preconditioned conjugate gradients with products by ``Phi`` and
        ``Phi^T`` in ``O(n d^2)`` and memory ``O(n d)`` (details in ``lib._ridge_solvers``: the
        Kronecker preconditioner ``(F^T F/n) kron (X^T X)`` when ``n >= p``; when ``n < p``,
        CG on the dual system, which gives the minimum-norm solution at ``lam = 0``).
        ``"auto"``: ``"dense"`` if ``n >= p`` and ``p <= AUTO_DENSE_MAX_P``, ``"dual"`` if
        ``n < p`` and ``n <= AUTO_DUAL_MAX_N``, else ``"matfree"`` (1000 and 2000). The
        measured break-even points on the book's machine (bench/bench_solvers.py) are
        ``p ~ 420`` and ``n ~ 1100``; the exact direct solvers are kept a little beyond
        them (under 0.1 s); past the thresholds matfree is faster by a factor that grows
        with the size, and its memory stays ``O(n d)``.
    rtol : float, keyword-only
        ``"matfree"`` only: CG stops when ``||b - A x|| <= rtol ||b||`` (default
        ``CG_RTOL = 1e-8``). Measured against the direct solvers (d = 12 to 80, tau = 1.2 to
        3): ``Gamma`` agrees to 3-15 ``rtol`` relative (Frobenius) and exact test errors to
        about ``rtol`` relative or better. The book needs test errors to 1e-4, which
        ``rtol = 1e-4`` already gives (1e-5 to 3e-5 measured); the default 1e-8 also gives
        ``Gamma`` to ~1e-7, for about twice the iterations (55 instead of 26 at tau = 2).
    maxiter : int, keyword-only
        ``"matfree"`` only: iteration cap (default ``CG_MAXITER``).
    return_info : bool, keyword-only
        Also return a dict with the method used (``"method"``), the linear solver
        (``"solver"``), the CG iteration count (``"iterations"``, matfree only) and
        ``"seconds"``.

    Returns
    -------
    numpy.ndarray, shape (d, d + 1)
        ``Gamma*`` (and the info dict if ``return_info``).

    Raises
    ------
    ValueError, TypeError
        Inconsistent shapes, non-finite entries, ``lam < 0``, unknown ``method``; for
        ``"matfree"`` at ``lam = 0`` and ``n >= p``, queries or features with linearly
        dependent columns (no unique least-squares solution; the direct solvers then
        return the minimum-norm one).
    lib._checks.MemoryLimitError
        Before solving, if the solver's extra memory (:func:`fit_peak_bytes`; ``8 p^2``
        bytes for dense, ``8 n^2`` for dual) exceeds the limit of
        :func:`lib._limits.memory_limit` (``LIB_MEMORY_LIMIT`` overrides it).
    ConvergenceError
        (a ``RuntimeError``) if CG does not reach ``rtol`` within ``maxiter`` iterations.

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`.
    Through other functions of ``lib``: every chapter.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.samplers import sample_features
    >>> batch = sample_features(4000, 10, 20, None, rho=0.1, rng=np.random.default_rng(0))
    >>> gamma = fit_gamma(batch.queries, batch.features, batch.targets, lam=0.0)
    >>> gamma.shape
    (10, 11)
    >>> round(exact_error(gamma, 20, 0.1), 3)
    0.488
    """
    t0 = time.perf_counter()
    if targets is None:
        raise TypeError("targets must be an array of shape (n,) (the query labels); got None")
    X, F, y = _check_batch(queries, features, targets)
    lam = check_param("lam", lam, scalar=True)
    check_choice("method", method, METHODS)
    rtol = check_scalar("rtol", rtol, low=0.0, low_open=True, high=1.0, high_open=True)
    maxiter = check_int("maxiter", maxiter, low=1)
    n, d = X.shape
    p = d * (d + 1)
    ridge = n / d * lam
    used = _auto_method(n, p) if method == "auto" else method
    check_memory(
        f"fit_gamma(method={used!r}) with n = {n}, d = {d} (p = {p})",
        fit_peak_bytes(n, d, used, lam),
        "queries and features (n contexts, p = d(d+1) parameters)"
        + ("; method='matfree' needs O(n d) memory" if used != "matfree" else ""),
    )
    info: dict[str, Any] = {"method": used}

    def solve(X: np.ndarray, F: np.ndarray, y: np.ndarray, ridge: float) -> np.ndarray:
        if used == "dense":
            return _fit_dense(X, F, y, ridge, info)
        if used == "dual":
            return _fit_dual(X, F, y, ridge, info)
        return _fit_matfree(X, F, y, ridge, rtol, maxiter, info)

    gamma = solve_rescaled(solve, X, F, y, ridge, info)  # exact rescaling far from unit scale
    if not np.all(np.isfinite(gamma)):  # pragma: no cover - defensive
        raise np.linalg.LinAlgError(f"fit_gamma(method={used!r}) produced non-finite entries")
    info["seconds"] = time.perf_counter() - t0
    return (gamma, info) if return_info else gamma


# ----------------------------------------------------------------------------------------
# 3. test errors
# ----------------------------------------------------------------------------------------


def exact_error(gamma: Any, ell: int, rho: float, tasks: Any = None) -> float:
    """Exact test error of ``Gamma`` for the linear teacher at finite ``d`` (book section 2.1).

    .. math:: e(\\Gamma) = 1 + \\rho - \\frac{2}{d}\\operatorname{tr}(\\Gamma \\mathcal A)
              + \\frac{1+\\rho}{d}\\operatorname{tr}(\\Gamma^\\top \\Gamma \\mathcal B),

    .. math:: \\mathcal A = \\begin{pmatrix} R \\\\ (1+\\rho)\\bar w^\\top \\end{pmatrix}, \\quad
              \\mathcal B = \\begin{pmatrix} I/\\alpha + (1 + 1/\\ell) R/(1+\\rho) & (1+2/\\ell)\\bar w \\\\
                  (1+2/\\ell)\\bar w^\\top & (1+\\rho)(1+2/\\ell) \\end{pmatrix},

    ``alpha = ell / d``, :math:`R = \\mathbb E[w w^\\top]` and :math:`\\bar w = \\mathbb E[w]` (the
    task's second moment and mean). It is ``rho + (1/d) E||w - Gamma phi||^2`` (average over
    the query) with :math:`\\mathbb E[\\phi w^\\top] = \\mathcal A` and
    :math:`\\mathbb E[\\phi\\phi^\\top] = (1+\\rho)\\mathcal B`, where
    ``phi = (u, q)`` is the context feature vector.

    Parameters
    ----------
    gamma : array_like, shape (d, d + 1)
    ell : int
        Context length of the test contexts (>= 1).
    rho : float
        Label-noise variance (>= 0).
    tasks : None or array_like, shape (k, d)
        ``None``: ICL error, a fresh task per context (``R = I``, ``w_bar = 0``). Otherwise the
        IDG error on this task set: ``R = (1/k) sum_j w_j w_j^T``, ``w_bar = (1/k) sum_j w_j``.
        The rows must have squared norm ``d`` (the formula uses ``||w||^2 = d``).

    Returns
    -------
    float
        The expected squared test error of ``gamma`` (exact, no sampling).

    Notes
    -----
    ``O(d^3)``. ``exact_error(0, ...) = 1 + rho``.
    Used in: :doc:`the model </book/linear/model>`,
    :doc:`learning curves </book/linear/learning_curves>`.
    """
    gamma = _check_gamma(gamma)
    d = gamma.shape[0]
    ell = check_int("ell", ell, low=1)
    rho = check_rho(rho)
    alpha = ell / d
    G1, g2 = gamma[:, :d], gamma[:, d]
    if tasks is None:
        R = np.eye(d)
        mu = np.zeros(d)
    else:
        tasks = _check_unit_tasks(tasks, d)
        R = tasks.T @ tasks / tasks.shape[0]
        mu = tasks.mean(axis=0)
    # tr(Gamma A) = tr(G1 R) + (1 + rho) mu^T g2
    lin = np.sum(G1 * R.T) + (1 + rho) * (mu @ g2)
    # tr(Gamma^T Gamma B) = tr(G1^T G1 B11) + 2 b12^T G1^T g2 + b22 |g2|^2
    G1tG1 = G1.T @ G1
    B11 = np.eye(d) / alpha + (1 + 1 / ell) * R / (1 + rho)
    quad = np.sum(G1tG1 * B11) + 2 * (1 + 2 / ell) * (mu @ (G1.T @ g2)) + (1 + rho) * (1 + 2 / ell) * (g2 @ g2)
    return float(1 + rho - 2 / d * lin + (1 + rho) / d * quad)


#: Names that moved out of ``lib.attention`` in the split of ``lib`` by concept, and where they
#: are now (an old notebook gets an AttributeError that says where to look).
_MOVED = {
    "mc_error": "lib.simulation",
    "mc_peak_bytes": "lib.simulation",
    "simulate_peak_bytes": "lib.simulation",
    "simulate": "lib.simulation",
    "simulate_many": "lib.simulation",
}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"lib.attention.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib.attention' has no attribute {name!r}")
