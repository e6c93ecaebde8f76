"""Tests of the analysis helpers that chapters 1 and 2 call.

``lib.hermite.changing_degrees`` (chapter 1) and ``lib.finite_size.extrapolate_quadratic``
and ``lib.finite_size.point_label`` (chapter 2).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import finite_size as fs
from lib import hermite as H


def test_changing_degrees_odd_even_links():
    sign = np.flatnonzero(H.changing_degrees(H.get_link("sign"), 20, min_degree=10))
    assert sign.tolist() == [11, 13, 15, 17, 19]
    relu = np.flatnonzero(H.changing_degrees(H.get_link("relu"), 20, min_degree=10))
    assert relu.tolist() == [10, 12, 14, 16, 18, 20]


def test_changing_degrees_callable_matches_link_and_errors_change_there():
    link = H.get_link("abs")
    assert np.array_equal(
        H.changing_degrees(link.f, 16, 2), H.changing_degrees(link, 16, 2)
    )
    err = H.partial_sum_errors(link, 16)
    mask = H.changing_degrees(link, 16, 1)
    # where a_D = 0 the error does not move; where it is kept, it drops
    assert np.all(np.diff(err)[~mask[1:]] == pytest.approx(0.0, abs=1e-12))
    assert np.all(np.diff(err)[mask[1:]] < 0)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(max_degree=-1), "max_degree"),
        (dict(max_degree=5, min_degree=6), "min_degree"),
        (dict(max_degree=5, min_degree=0, tol=-1.0), "tol"),
        (dict(max_degree=10_000), "max_degree"),
    ],
)
def test_changing_degrees_rejects_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        H.changing_degrees(H.get_link("relu"), **kwargs)


def test_quadratic_fit_recovers_exact_law_and_reduces_to_linear():
    d = np.array([20.0, 40.0, 60.0, 100.0, 150.0, 200.0])
    q = fs.extrapolate_quadratic(d, 1.2 + 3.0 / d + 50.0 / d**2, se=np.full(6, 1e-3))
    assert_allclose([q.e_inf, q.c, q.c2], [1.2, 3.0, 50.0], atol=1e-9)
    assert q.dof == 3 and q.chi2 == pytest.approx(0.0, abs=1e-12)
    # no 1/d^2 term in the data: same intercept as the 1/d fit, c2 ~ 0
    e = 0.8 + 2.0 / d
    q1, f1 = (
        fs.extrapolate_quadratic(d, e, np.full(6, 1e-3)),
        fs.extrapolate(d, e, np.full(6, 1e-3)),
    )
    assert_allclose([q1.e_inf, q1.c, q1.c2], [f1.e_inf, f1.c, 0.0], atol=1e-9)


def test_quadratic_fit_errors_match_monte_carlo():
    rng = np.random.default_rng(7)
    d = np.array([20.0, 30.0, 40.0, 60.0, 100.0, 200.0])
    se = np.full(d.size, 0.01)
    fits = [
        fs.extrapolate_quadratic(
            d, 1.0 + 2.0 / d + 20 / d**2 + se * rng.standard_normal(6), se
        )
        for _ in range(2000)
    ]
    e_inf = np.array([f.e_inf for f in fits])
    assert np.std(e_inf) == pytest.approx(fits[0].e_inf_se, rel=0.08)
    p = np.array([f.p_value for f in fits])
    assert 0.4 < np.mean(p) < 0.6  # p-values uniform under the model


def test_quadratic_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="distinct"):
        fs.extrapolate_quadratic([20, 40, 40, 40], [1, 1, 1, 1], [0.1] * 4)
    with pytest.raises(ValueError, match="se"):
        fs.extrapolate_quadratic([20, 40, 60, 80], [1, 1, 1, 1], [0.1, 0.1, 0.0, 0.1])


def test_point_label():
    par = dict(alpha=1.0, kappa=0.5, tau=2.0, rho=0.01, lam=0.0)
    assert fs.point_label(par) == "$(1, 0.5, 2, 0.01, 0)$"
    assert r"\infty" in fs.point_label({**par, "kappa": np.inf})
    with pytest.raises(ValueError, match="lam"):
        fs.point_label({k: v for k, v in par.items() if k != "lam"})
    with pytest.raises(ValueError, match="tau"):
        fs.point_label({**par, "tau": np.inf})
