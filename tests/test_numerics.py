"""The one logsumexp helper: scipy's values, -inf rows and +inf entries without warnings."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special

from accounting.numerics import logsumexp


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
