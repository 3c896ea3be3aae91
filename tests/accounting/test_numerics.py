"""The one logsumexp helper: scipy's values, -inf rows and +inf entries without warnings."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import special

from accounting.numerics import equal_share, logsumexp


def test_logsumexp_matches_scipy() -> None:
    x = np.random.default_rng(0).normal(0.0, 300.0, size=(5, 7, 9))
    for axis in (0, 1, -1):
        np.testing.assert_allclose(logsumexp(x, axis), special.logsumexp(x, axis=axis), rtol=1e-14)


def test_logsumexp_infinities_without_warnings() -> None:
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf], [np.inf, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = logsumexp(x, axis=1)
    np.testing.assert_array_equal(out, [-np.inf, 0.0, np.inf])


@pytest.mark.parametrize("total", [0.3, 1e-5, 1e-4 / 2, 0.1, 5e-324, 1.0])
@pytest.mark.parametrize("n", [1, 3, 7, 60, 829])
def test_equal_share_never_sums_above_the_total(total, n):
    share = equal_share(total, n)
    assert n * Fraction(share) <= Fraction(total)
    assert share >= 0.0 and (share == 0.0 or (n * Fraction(share)) / Fraction(total) > 1 - 1e-12)


def test_rounded_share_can_exceed_the_total():
    # why equal_share exists: n copies of total / n rounded to nearest can exceed total
    assert 7 * Fraction(0.1 / 7) > Fraction(0.1)
    assert 7 * Fraction(equal_share(0.1, 7)) <= Fraction(0.1)
