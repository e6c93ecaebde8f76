"""Tests of the chapter-3 analysis helpers: lib.teachers.label_moments,
lib.theory.gap_estimate / pure_noise_error_integral and the fits of lib.finite_size
(floored_se, slope_through_origin, extrapolate_summary, fits_for, gap_for)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import finite_size, hermite, teachers, theory


@pytest.mark.parametrize("teacher", ["relu", "tanh", "h2", "cubic", "sign"])
def test_label_moments_against_monte_carlo(teacher):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(2_000_000)
    rho = 0.1
    y = hermite.get_link(teacher)(z) + np.sqrt(rho) * rng.standard_normal(z.size)
    m = teachers.label_moments(teacher, rho)
    mc = [np.mean(y * z), np.mean(y**2), np.mean(y**2 * z**2), np.mean(y**4)]
    assert_allclose(m, mc, rtol=0.03, atol=3e-3)


def test_label_moments_closed_forms():
    # y = z + sqrt(rho) eps: E[y^2 z^2] = 3 + rho, E[y^4] = 3 + 6 rho + 3 rho^2
    assert_allclose(teachers.label_moments("linear", 0.2), [1.0, 1.2, 3.2, 3 + 1.2 + 0.12], atol=1e-9)
    # h2 = (z^2 - 1)/sqrt 2: E[h2^2 z^2] = 5, E[h2^4] = 15
    assert_allclose(teachers.label_moments("h2", 0.0), [0.0, 1.0, 5.0, 15.0], atol=1e-8)
    with pytest.raises(ValueError, match="rho"):
        teachers.label_moments("relu", -0.1)


def test_gap_estimate_h2_against_pure_noise():
    est = theory.gap_estimate("h2", 0.1, 2.0, 3.0, twin=[0.0], rho_twin=1.1)
    # delta E[y^2 z^2] = 5.1 - 1.1, delta E[y^4] = 15.63 - 3 * 1.1^2
    assert_allclose([est.delta_ey2z2, est.delta_ey4], [4.0, 12.0], atol=1e-8)
    assert_allclose(est.c_het, (1 - 2 / 3) * 4.0 / 2.0, rtol=1e-10)
    assert_allclose(est.c_tail, 12.0 / (3 * 2 * 1.1) / 2.0, rtol=1e-10)
    assert_allclose(est.c_delta, est.c_het + est.c_tail, rtol=1e-12)


def test_gap_estimate_default_twin_and_errors():
    g, rho_eq = teachers.gaussian_equivalent("relu", 0.1)
    a = theory.gap_estimate("relu", 0.1, 2.0, 3.0)
    b = theory.gap_estimate("relu", 0.1, 2.0, 3.0, twin=g, rho_twin=rho_eq)
    assert_allclose(a, b, rtol=1e-12)
    assert theory.gap_estimate("linear", 0.1, 2.0, 3.0).c_delta == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="tau"):
        theory.gap_estimate("relu", 0.1, 2.0, 0.5)
    with pytest.raises(ValueError, match="rho_twin"):
        theory.gap_estimate("relu", 0.1, 2.0, 3.0, twin="linear")


@pytest.mark.parametrize("tau", [0.5, 2.0, 5.0])
@pytest.mark.parametrize("lam", [0.05, 1.0])
def test_pure_noise_integral_matches_closed_form(tau, lam):
    assert_allclose(
        theory.pure_noise_error_integral(1.1, 2.0, tau, lam),
        theory.pure_noise_error(1.1, 2.0, tau, lam),
        rtol=1e-8,
    )


def test_pure_noise_integral_rejects_ridgeless():
    with pytest.raises(ValueError, match="lam"):
        theory.pure_noise_error_integral(1.1, 2.0, 3.0, 0.0)


def test_floored_se():
    out = finite_size.floored_se([0.01, 0.001], [4, 4], [1e-4, 1e-4])
    assert_allclose(out, [0.01, np.sqrt(1e-4 / 4)])
    with pytest.raises(ValueError, match="draws"):
        finite_size.floored_se([0.01], [0], 1e-4)


def test_slope_through_origin_exact_and_p_value():
    d = np.array([50.0, 100.0, 150.0, 200.0])
    fit = finite_size.slope_through_origin(d, 1.5 / d, np.full(4, 1e-3))
    assert_allclose([fit.c, fit.chi2], [1.5, 0.0], atol=1e-10)
    assert fit.dof == 3 and fit.p_value == pytest.approx(1.0)
    # standard error: (sum 1/(d se)^2)^(-1/2)
    assert_allclose(fit.c_se, 1 / np.sqrt(np.sum(1 / (d * 1e-3) ** 2)))
    bad = finite_size.slope_through_origin(d, 0.02 + 0 * d, np.full(4, 1e-3))
    assert bad.p_value < 1e-6  # a constant gap is not c/d
    with pytest.raises(ValueError, match="at least 2"):
        finite_size.slope_through_origin([50.0], [0.1], [0.01])


def test_extrapolate_summary_d_min():
    d = np.array([50, 100, 150, 200])
    s = {"d": d, "icl": 1 + 5 / d, "icl_se": np.full(4, 1e-3), "idg": 2 + 1 / d, "idg_se": np.full(4, 1e-3)}
    assert_allclose(finite_size.extrapolate_summary(s).e_inf, 1.0, atol=1e-9)
    assert_allclose(finite_size.extrapolate_summary(s, "idg", d_min=100).e_inf, 2.0, atol=1e-9)
    with pytest.raises(ValueError, match="quantity"):
        finite_size.extrapolate_summary(s, "x")


def test_fits_for_and_gap_for_on_the_stored_study():
    fits = finite_size.fits_for("h2_study", ("teacher", "noise"), label="kappa=1.5")
    for v in ("teacher", "noise"):
        s = fits[v].summary
        assert np.all(s["draws"] >= 2)
        assert np.all(np.diff(s["d"]) > 0)
        assert fits[v].fit.dof == s["d"].size - 2
    g = finite_size.gap_for("h2_study", ("teacher", "noise"), label="kappa=1.5")
    raw = finite_size.gap("h2_study", ("teacher", "noise"), label="kappa=1.5")
    keep = np.isin(raw["d"], g.gap["d"])
    assert_allclose(g.gap["gap"], raw["gap"][keep])
    assert np.all(g.gap["gap_se"] >= raw["gap_se"][keep] - 1e-15)  # floored, never smaller
    with pytest.raises(ValueError, match="variant"):
        finite_size.fits_for("h2_study", ("teacher",), variant="noise")
    with pytest.raises(ValueError, match="min_draws"):
        finite_size.gap_for("h2_study", ("teacher", "noise"), min_draws=0, label="kappa=1.5")
