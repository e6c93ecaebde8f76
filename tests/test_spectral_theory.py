"""Tests of the posterior preprocessings and the floor crossing of lib.theory.spectral_limits."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import brentq

from lib import teachers
from lib.theory import spectral_limits


def test_posterior_second_moment_against_direct_quadrature():
    # E[z^2 | y] for y = h2(z) + eps, by brute-force quadrature on a fine z grid
    rho = 0.2
    v = spectral_limits.posterior_second_moment("h2", rho)
    z = np.linspace(-12, 12, 200001)
    fz = (z**2 - 1) / np.sqrt(2)
    for y in (-1.0, 0.0, 0.7, 3.0):
        p = np.exp(-0.5 * z**2 - (y - fz) ** 2 / (2 * rho))
        assert_allclose(v(np.array([y]))[0], np.sum(p * z**2) / np.sum(p), rtol=1e-4)


def test_posterior_second_moment_linear_teacher_closed_form():
    # linear teacher: z | y ~ N(y/(1+rho), rho/(1+rho)), so E[z^2|y] = var + mean^2
    rho = 0.5
    v = spectral_limits.posterior_second_moment("linear", rho)
    y = np.array([-2.0, 0.0, 1.5])
    assert_allclose(v(y), rho / (1 + rho) + (y / (1 + rho)) ** 2, rtol=1e-4)


def test_shift_zero_is_the_optimal_preprocessing():
    y = np.linspace(-4.0, 6.0, 41)
    t_star = spectral_limits.optimal_preprocess("h2", 0.1)(y)
    assert_allclose(spectral_limits.shifted_preprocess("h2", 0.1, 0.0)(y), t_star, atol=1e-12)
    t_b = spectral_limits.shifted_preprocess("h2", 0.1, 1.0)(y)
    assert np.all(t_b > -1.0) and np.all(t_b < 1.0)  # bounded for b > 0
    assert np.all(np.sign(t_b) == np.sign(t_star))


def test_shifted_rival_has_no_smaller_threshold():
    # Cauchy-Schwarz (chapter 6): no preprocessing beats T*; a shifted one is above it
    a_star = spectral_limits.weak_recovery_threshold("h2", 0.1)
    a_shift = spectral_limits.spectral_threshold("h2", 0.1, spectral_limits.shifted_preprocess("h2", 0.1, 0.5))
    assert a_shift > a_star * (1 + 1e-6)


def test_truncation_bounds_and_approaches_the_optimum():
    T = spectral_limits.optimal_preprocess("h2", 0.1)
    y = np.linspace(-8.0, 8.0, 161)
    cut = spectral_limits.truncated_preprocess(T, -2.0)
    assert cut(y).min() >= -2.0
    assert_allclose(cut(y)[T(y) > -2.0], T(y)[T(y) > -2.0])
    excess = [
        spectral_limits.spectral_threshold("h2", 0.1, spectral_limits.truncated_preprocess(T, -k))
        / spectral_limits.spectral_threshold("h2", 0.1, T)
        - 1
        for k in (1.0, 3.0, 10.0)
    ]
    assert excess[0] > excess[1] > excess[2] > -1e-6


def test_floor_crossing_is_a_root():
    rho = 0.1
    a = spectral_limits.floor_crossing("relu", rho, bracket=(1.0, 100.0))
    assert_allclose(spectral_limits.spectral_error(a, "relu", rho), teachers.effective_noise("relu", rho), rtol=1e-8)
    assert spectral_limits.spectral_error(1.1 * a, "relu", rho) < teachers.effective_noise("relu", rho)


def test_bad_input():
    with pytest.raises(ValueError, match="shift"):
        spectral_limits.shifted_preprocess("h2", 0.1, -0.5)
    with pytest.raises(ValueError, match="rho"):
        spectral_limits.posterior_second_moment("h2", 0.0)
    with pytest.raises(TypeError, match="preprocess"):
        spectral_limits.truncated_preprocess(3.0, -1.0)
    with pytest.raises(ValueError, match="low"):
        spectral_limits.truncated_preprocess(np.tanh, np.inf)
    with pytest.raises(ValueError, match="bracket"):
        spectral_limits.floor_crossing("h2", 0.1, bracket=(5.0, 1.0))
    with pytest.raises(ValueError, match="sign change"):
        spectral_limits.floor_crossing("linear", 0.1, bracket=(2.0, 4.0))


def test_threshold_spread_small_for_smooth_and_larger_for_kinked():
    # h2 with the smooth default tanh: the rule is converged; h3 with the kinked
    # "square" (clipped at 9): the threshold moves by more than 1e-3 between resolutions
    rho = 0.1
    assert spectral_limits.spectral_threshold_spread("h2", rho) < 1e-6
    kinked = spectral_limits.spectral_threshold_spread("h3", rho, "square")
    assert 1e-3 < kinked < 0.1
    # both infinite (the linear teacher with tanh has no threshold): no spread
    assert spectral_limits.spectral_threshold_spread("linear", rho) == 0.0
    with pytest.raises(ValueError, match="nodes"):
        spectral_limits.spectral_threshold_spread("h2", rho, nodes=())
    with pytest.raises(ValueError, match="nodes"):
        spectral_limits.spectral_threshold_spread("h2", rho, nodes=((4, 24),))


@pytest.mark.parametrize(("teacher", "alpha"), [("h2", 4.0), ("h2", 16.0), ("abs", 3.0)])
def test_overlap_is_psi_prime_over_psi_prime_minus_phi_prime(teacher, alpha):
    # the crossing psi = phi, found here by brentq on psi - phi, with derivatives by
    # central differences, gives the limit of spectral_overlap (an independent route)
    rho = 0.1
    gap = lambda t: np.subtract(*spectral_limits.spectral_psi_phi(t, alpha, teacher, rho))  # noqa: E731
    t_star = brentq(gap, 1.0 + 1e-9, 1e3, xtol=1e-14)
    h = 1e-6 * (t_star - 1.0)
    (psi_lo, psi_hi), (phi_lo, phi_hi) = spectral_limits.spectral_psi_phi([t_star - h, t_star + h], alpha, teacher, rho)
    dpsi, dphi = (psi_hi - psi_lo) / (2 * h), (phi_hi - phi_lo) / (2 * h)
    assert dpsi > 0 > dphi
    assert_allclose(dpsi / (dpsi - dphi), spectral_limits.spectral_overlap(alpha, teacher, rho), rtol=1e-6)


def test_psi_phi_refuses_theta_at_or_below_sup_t():
    with pytest.raises(ValueError, match="theta must be above sup T"):
        spectral_limits.spectral_psi_phi([0.5, 2.0], 4.0, "h2", 0.1)
    psi, phi = spectral_limits.spectral_psi_phi(2.0, 4.0, "h2", 0.1)
    assert psi.shape == phi.shape == ()
