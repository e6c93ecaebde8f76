"""The linear solvers behind :func:`lib.attention.fit_gamma` (ridge pretraining of ``Gamma``).

Three solvers of ``(Phi^T Phi + ridge I) vec(Gamma) = Phi^T y``, the design matrix
``Phi`` having rows ``f kron x`` (conventions of :mod:`lib.attention`): dense primal normal
equations, the dual kernel system, and matrix-free preconditioned conjugate gradients.
Each takes validated arrays and the ridge ``(n/d) lam``, fills ``info["solver"]`` and
returns ``Gamma``; ``fit_gamma`` chooses among them and guards their memory.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from lib._limits import ConvergenceError

#: Target size, in bytes, of the temporary arrays built per batch by the solvers.
_BATCH_BYTES = 64_000_000


def _predict(gamma: np.ndarray, X: np.ndarray, F: np.ndarray) -> np.ndarray:
    out = np.empty(X.shape[0])
    step = max(1, _BATCH_BYTES // (8 * F.shape[1]))
    for s in range(0, X.shape[0], step):
        out[s : s + step] = np.einsum("ne,ne->n", X[s : s + step] @ gamma, F[s : s + step])
    return out


def _gamma_from_vec(theta: np.ndarray, d: int) -> np.ndarray:
    """Inverse of the column-stacking vec: ``Gamma[i, j] = theta[j * d + i]``."""
    return np.ascontiguousarray(theta.reshape(d + 1, d).T)


def _phi_rows(X: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Rows ``phi_mu = f_mu kron x_mu`` of the design matrix, shape (b, d (d + 1))."""
    b = X.shape[0]
    return (F[:, :, None] * X[:, None, :]).reshape(b, -1)


def _pinv_solve_psd(G: np.ndarray, rhs: np.ndarray, lower: bool) -> np.ndarray:
    """``pinv(G) rhs`` for a symmetric positive semi-definite ``G`` (one triangle stored).

    Eigenvalues below ``size * eps * max`` are treated as zero (the rule of
    ``numpy.linalg.pinv``/``scipy.linalg.pinvh``), which gives the minimum-norm solution.
    """
    s, U = scipy.linalg.eigh(G, lower=lower, overwrite_a=True, check_finite=False)
    cut = G.shape[0] * np.finfo(float).eps * max(float(s[-1]), 0.0)
    keep = s > cut
    coef = (U[:, keep].T @ rhs) / s[keep]
    return U[:, keep] @ coef


def _fit_dense(X: np.ndarray, F: np.ndarray, y: np.ndarray, ridge: float, info: dict) -> np.ndarray:
    """Primal normal equations ``(Phi^T Phi + ridge I) theta = Phi^T y``, formed in batches.

    ``Phi^T Phi`` (p x p) is accumulated with the BLAS rank-k update ``syrk`` (upper
    triangle, in place), ``O(n p^2)`` time and ``8 p^2`` bytes. Solved by Cholesky
    (``cho_factor``/``cho_solve``) when ``ridge > 0`` or ``n >= p``; at ``ridge = 0`` a failed
    Cholesky (rank-deficient design) falls back to the eigenvalue pseudo-inverse. At
    ``ridge = 0`` and ``n < p`` the p x p system is singular: then ``Phi`` itself (n x p,
    smaller than p x p) is formed and ``scipy.linalg.lstsq`` (SVD, ``gelsd``) returns the
    minimum-norm interpolator.
    """
    n, d = X.shape
    p = d * (d + 1)
    if ridge == 0.0 and n < p:
        theta = scipy.linalg.lstsq(_phi_rows(X, F), y, lapack_driver="gelsd", check_finite=False)[0]
        info["solver"] = "lstsq (gelsd) on Phi, minimum norm"
        return _gamma_from_vec(theta, d)
    syrk = scipy.linalg.get_blas_funcs("syrk", dtype=np.float64)
    G = np.zeros((p, p), order="F")
    rhs = np.zeros(p)
    step = max(1, _BATCH_BYTES // (8 * p))
    for s in range(0, n, step):
        Phi = _phi_rows(X[s : s + step], F[s : s + step])  # (b, p), C order: Phi.T is F order
        G = syrk(1.0, Phi.T, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)
        rhs += Phi.T @ y[s : s + step]
    del Phi
    idx = np.arange(p)
    G[idx, idx] += ridge
    try:
        factor = scipy.linalg.cho_factor(G, lower=False, overwrite_a=True, check_finite=False)
        theta = scipy.linalg.cho_solve(factor, rhs, check_finite=False)
        info["solver"] = "Cholesky of Phi^T Phi + ridge I"
    except np.linalg.LinAlgError:
        if ridge > 0.0:  # pragma: no cover - a positive ridge makes G positive definite
            raise
        G = np.zeros((p, p), order="F")  # the failed factorisation overwrote G: rebuild it
        for s in range(0, n, step):
            Phi = _phi_rows(X[s : s + step], F[s : s + step])
            G = syrk(1.0, Phi.T, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)
        theta = _pinv_solve_psd(G, rhs, lower=False)
        info["solver"] = "pseudo-inverse of Phi^T Phi (rank deficient), minimum norm"
    return _gamma_from_vec(theta, d)


def _kernel(X: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``K = (X X^T) * (F F^T)`` (Hadamard product), built in row blocks (one n x n array)."""
    n = X.shape[0]
    K = X @ X.T
    step = max(1, _BATCH_BYTES // (8 * n))
    for s in range(0, n, step):
        K[s : s + step] *= F[s : s + step] @ F.T
    return K.T  # the same symmetric matrix, in Fortran order: LAPACK then works in place


def _fit_dual(X: np.ndarray, F: np.ndarray, y: np.ndarray, ridge: float, info: dict) -> np.ndarray:
    """Dual (kernel) solution ``Gamma = X^T diag(c) F`` with ``(K + ridge I) c = y``.

    ``K = Phi Phi^T`` has entries ``(x_mu . x_nu)(f_mu . f_nu)``. Cholesky when
    ``ridge > 0`` or (``ridge = 0`` and ``n < p``, where ``K`` is generically invertible);
    otherwise (or if Cholesky fails) ``c = pinv(K) y``, for which
    ``Phi^T c = Phi^T (Phi Phi^T)^+ y = Phi^+ y`` is the minimum-norm least-squares solution.
    """
    n, d = X.shape
    p = d * (d + 1)
    K = _kernel(X, F)
    solver = None
    if ridge > 0.0 or n < p:
        K[np.arange(n), np.arange(n)] += ridge
        try:
            c = scipy.linalg.cho_solve(
                scipy.linalg.cho_factor(K, lower=True, overwrite_a=True, check_finite=False), y, check_finite=False
            )
            solver = "Cholesky of K + ridge I"
        except np.linalg.LinAlgError:
            if ridge > 0.0:  # pragma: no cover
                raise
            K = _kernel(X, F)
    if solver is None:
        c = _pinv_solve_psd(K, y, lower=True)
        solver = "pseudo-inverse of K, minimum norm"
    info["solver"] = solver
    return X.T @ (c[:, None] * F)


class _Design:
    """Matrix-free products with ``Phi`` (rows ``f kron x``) in row blocks, ``O(n d^2)`` each."""

    def __init__(self, X: np.ndarray, F: np.ndarray):
        self.X, self.F = X, F
        self.n, self.d = X.shape
        self.step = max(256, _BATCH_BYTES // (8 * 3 * (self.d + 1)))

    def normal(self, gamma: np.ndarray) -> np.ndarray:
        """``Phi^T Phi vec(Gamma)`` as a matrix: ``X^T diag(rowsum((X Gamma) * F)) F``."""
        out = np.zeros((self.d, self.d + 1))
        for s in range(0, self.n, self.step):
            Xb, Fb = self.X[s : s + self.step], self.F[s : s + self.step]
            r = np.einsum("ne,ne->n", Xb @ gamma, Fb)
            out += Xb.T @ (r[:, None] * Fb)
        return out

    def gram(self, c: np.ndarray) -> np.ndarray:
        """``K c = Phi (Phi^T c)`` for the dual system."""
        gamma = self.X.T @ (c[:, None] * self.F)
        return _predict(gamma, self.X, self.F)


def _cg(A, b, M, rtol: float, maxiter: int, what: str) -> tuple[np.ndarray, int]:
    """``scipy.sparse.linalg.cg`` with an iteration counter; raise ConvergenceError on failure.

    The stopping rule of scipy is on the *unpreconditioned* residual:
    ``||b - A x|| <= rtol ||b||``. The final residual is recomputed and checked too.
    """
    count = [0]

    def callback(_xk):
        count[0] += 1

    x, status = scipy.sparse.linalg.cg(A, b, rtol=rtol, atol=0.0, maxiter=maxiter, M=M, callback=callback)
    bnorm = float(np.linalg.norm(b))
    res = float(np.linalg.norm(b - A.matvec(x))) / bnorm if bnorm > 0 else 0.0
    if status != 0 or not np.all(np.isfinite(x)) or res > 10 * rtol:
        reason = f"reached maxiter = {maxiter}" if status > 0 else f"stopped with status {status}"
        raise ConvergenceError(
            f"fit_gamma(method='matfree'): conjugate gradients on the {what} {reason} after "
            f"{count[0]} iterations with relative residual {res:.3g} > rtol = {rtol:g}. Use a small "
            "ridge lam > 0 (tau near 1 with lam = 0 is the ill-conditioned interpolation peak), a "
            "larger maxiter, or method='dense'/'dual' if the problem fits in memory."
        )
    return x, count[0]


def _fit_matfree(
    X: np.ndarray, F: np.ndarray, y: np.ndarray, ridge: float, rtol: float, maxiter: int, info: dict
) -> np.ndarray:
    """Matrix-free solution by preconditioned conjugate gradients (``scipy.sparse.linalg.cg``).

    Primal (``n >= p``): CG on ``(Phi^T Phi + ridge I) vec(Gamma) = Phi^T y``.
    Because the query ``x`` is independent of the context features ``f``,
    ``E[phi phi^T] = E[f f^T] kron E[x x^T]``, and with ``n >> d`` both factors are well
    estimated by their sample versions, so the preconditioner is

        P = (F^T F / n) kron (X^T X) + ridge I,   P vec(V) = vec(X^T X V F^T F / n) + ridge vec(V),

    inverted exactly through the eigendecompositions ``X^T X = U s U^T`` and
    ``F^T F / n = W t W^T``: ``P^{-1} vec(V) = vec(U [(U^T V W) / (s t^T + ridge)] W^T)``,
    ``O(d^3)`` per application. ``P^{-1} Phi^T Phi`` then has the Marchenko-Pastur-like
    spread of a design with ``n / p = tau``: 51-55 iterations at ``tau = 2`` and ``rtol = 1e-8``
    (d = 40 to 200; 26 at ``rtol = 1e-4``; about 210 at ``tau = 1.2``, lam = 0).

    Dual (``n < p``): at ``ridge = 0`` preconditioned CG on the normal equations would
    converge to the interpolator of smallest ``P``-norm, not of smallest Euclidean norm, and
    at small ``ridge > 0`` it needs three times more iterations (the ``p - n`` smallest
    eigenvalues of ``Phi^T Phi + ridge I`` equal ``ridge``). So the dual system
    ``(K + ridge I) c = y`` with ``K = Phi Phi^T`` is solved instead (products
    ``K c = Phi (Phi^T c)`` are matrix-free; Jacobi preconditioner
    ``diag K + ridge = |x_mu|^2 |f_mu|^2 + ridge``; about 50 iterations at ``tau = 0.5``), and
    ``Gamma = Phi^T c = X^T diag(c) F`` lies in the row space of ``Phi``: at ``ridge = 0`` it
    is the minimum-norm interpolator whatever the preconditioner.
    """
    n, d = X.shape
    p = d * (d + 1)
    design = _Design(X, F)
    if n < p:
        diag = np.einsum("nd,nd->n", X, X) * np.einsum("ne,ne->n", F, F) + ridge
        A = scipy.sparse.linalg.LinearOperator((n, n), matvec=lambda c: design.gram(c) + ridge * c, dtype=float)
        M = scipy.sparse.linalg.LinearOperator((n, n), matvec=lambda r: r / diag, dtype=float)
        c, its = _cg(A, y, M, rtol, maxiter, "dual system (K + ridge I) c = y")
        info.update(solver="CG on the dual system (Jacobi preconditioner)", iterations=its)
        return X.T @ (c[:, None] * F)

    s_x, U = np.linalg.eigh(X.T @ X)
    s_f, W = np.linalg.eigh(F.T @ F / n)
    if ridge == 0.0:
        for name, s in (("queries", s_x), ("features", s_f)):
            if s[0] <= 1e-12 * s[-1]:
                # a null vector v of this factor gives null vectors of Phi: the minimum-norm
                # least-squares solution is then not what preconditioned CG converges to
                raise ValueError(
                    f"fit_gamma(method='matfree', lam=0): the columns of {name} are linearly "
                    f"dependent (smallest/largest eigenvalue of its Gram matrix {s[0] / s[-1]:.1e}), "
                    "so the least-squares problem has no unique solution; use method='dense' or "
                    "'dual' (minimum norm) or a ridge lam > 0"
                )
    s_x = np.maximum(s_x, s_x[-1] * 1e-12)
    s_f = np.maximum(s_f, s_f[-1] * 1e-12)
    denom = np.outer(s_x, s_f) + ridge

    def precondition(v: np.ndarray) -> np.ndarray:
        V = v.reshape(d + 1, d).T
        return (U @ ((U.T @ V @ W) / denom) @ W.T).T.ravel()

    def normal(v: np.ndarray) -> np.ndarray:
        out = design.normal(_gamma_from_vec(v, d))  # a C-ordered Gamma: faster BLAS calls
        return out.T.ravel() + ridge * v

    A = scipy.sparse.linalg.LinearOperator((p, p), matvec=normal, dtype=float)
    M = scipy.sparse.linalg.LinearOperator((p, p), matvec=precondition, dtype=float)
    rhs = (X.T @ (y[:, None] * F)).T.ravel()  # Phi^T y
    theta, its = _cg(A, rhs, M, rtol, maxiter, "normal equations")
    info.update(solver="preconditioned CG on the normal equations (Kronecker preconditioner)", iterations=its)
    return _gamma_from_vec(theta, d)
