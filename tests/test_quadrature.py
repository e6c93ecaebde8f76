"""Tests of lib.quadrature (its integrals are tested through lib.hermite.coefficients)."""

import pytest
from numpy.testing import assert_allclose

from lib import hermite as H
from lib.quadrature import gauss_hermite


def test_gauss_hermite_rule_and_padding():
    z, w = gauss_hermite(20)
    assert_allclose(w.sum(), 1.0, rtol=1e-14)
    assert_allclose([w @ z**2, w @ z**4, w @ z**3], [1.0, 3.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="n"):
        gauss_hermite(0)
    assert_allclose(H.pad_coefficients([1.0, 2.0, 3.0], 1), [1.0, 2.0])
    assert_allclose(H.pad_coefficients([1.0], 3), [1.0, 0.0, 0.0, 0.0])
