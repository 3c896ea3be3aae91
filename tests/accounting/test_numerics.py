"""The one logsumexp helper (scipy's values, -inf rows and +inf entries without warnings) and
the outward-rounding helpers (directed rounding, nudges, interval evaluation, validation)."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import special

from accounting.numerics import (
    equal_share,
    exact_at_most,
    exact_lower,
    exact_upper,
    fraction_down,
    fraction_up,
    log_gaussian_hockey_stick,
    logsumexp,
    nudge_down,
    nudge_up,
)


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


# ------------------------------------------------------------------- outward rounding


def test_nudge_down_never_returns_above_its_start() -> None:
    """nudge_down(v > -1, -1) returned 0.0 (above -1); from x <= 0 it now steps down only."""
    with pytest.raises(ValueError, match="not reached below x"):
        nudge_down(lambda v: v > -1.0, -1.0)
    assert nudge_down(lambda v: v <= -2.0, -1.0) <= -2.0
    assert nudge_down(lambda v: v <= 0.5, 1.0) <= 0.5
    assert nudge_up(lambda v: v >= 2.0, 1.0) >= 2.0


@pytest.mark.parametrize("nudge", [nudge_down, nudge_up])
def test_nudges_refuse_nan(nudge) -> None:
    with pytest.raises(ValueError, match=r"x must be a real number in \[-inf, inf\], got nan"):
        nudge(lambda v: True, math.nan)


@pytest.mark.parametrize("total", [-1.0, math.nan, math.inf, -math.inf, Fraction(-1, 3)])
def test_equal_share_refuses_a_bad_total(total) -> None:
    with pytest.raises(ValueError, match=r"total must be a number in \[0, inf\)"):
        equal_share(total, 3)


@pytest.mark.parametrize("bad", [0.1, "1/3", 1.5, True, None])
def test_fraction_up_refuses_inexact_input(bad) -> None:
    with pytest.raises(ValueError, match="x must be an exact rational"):
        fraction_up(bad)
    with pytest.raises(ValueError, match="x must be an exact rational"):
        fraction_down(bad)


def test_directed_rounding_brackets_the_exact_value() -> None:
    third = Fraction(1, 3)
    assert Fraction(fraction_down(third)) < third < Fraction(fraction_up(third))
    assert fraction_up(3) == fraction_down(3) == 3.0
    with mpmath.workprec(53):  # a 53-bit mpf is a double
        assert fraction_up(mpmath.mpf(1) / 3) == 1 / 3
    with mpmath.workprec(200):  # 1/3 to 200 bits lies above the double 1/3
        assert fraction_up(mpmath.mpf(1) / 3) == math.nextafter(1 / 3, 1.0)
    assert fraction_up(Fraction(1, 10**400)) == 5e-324 and fraction_down(Fraction(1, 10**400)) == 0
    assert fraction_up(Fraction(10**400)) == math.inf


def test_fraction_rounding_keeps_the_sign_of_an_mpf() -> None:
    """mpmath's ``man_exp`` is the unsigned mantissa: main turned mpf(-3.5) into +3.5, so a
    negative mpf was rounded to the wrong side by far (issue 42)."""
    assert fraction_up(mpmath.mpf(-3.5)) == fraction_down(mpmath.mpf(-3.5)) == -3.5
    with mpmath.workdps(40):
        third = -mpmath.mpf(1) / 3
        assert fraction_down(third) == math.nextafter(-1 / 3, -1.0)
        assert fraction_up(third) == -1 / 3


def test_exact_upper_and_lower_enclose_transcendental_values() -> None:
    with mpmath.workdps(60):
        log2 = mpmath.log(2)
        assert exact_lower(lambda c: c.log(c.mpf(2))) <= log2 <= exact_upper(lambda c: c.log(2))
    # 1e300 + 1e-300 is above 1e300: a 600-decade sum is not rounded away
    assert exact_upper(lambda c: c.mpf(1e300) + c.mpf(1e-300)) > 1e300

    def third_of_smallest(c):
        return c.mpf(5e-324) / 3

    assert exact_lower(third_of_smallest) == 0.0 < exact_upper(third_of_smallest)
    assert exact_at_most(lambda c: c.sqrt(c.mpf(2)), 1.4142135623730951)
    assert not exact_at_most(lambda c: c.sqrt(c.mpf(2)), 1.414213562373095)
    assert exact_at_most(lambda c: c.mpf(1e308) * 10, math.inf)


@pytest.mark.parametrize("mu", [5e-324, 1e-300, 1e-10, 1.0, 1e150, 1.7976931348623157e308])
def test_gaussian_hockey_stick_extremes_without_warnings(mu) -> None:
    """|eps| / mu and a^2 beyond the doubles overflowed with numpy warnings; the values are
    unchanged: log delta = -inf where eps / mu overflows to +inf or a^2 does (delta below the
    doubles), log(1 - e^eps) = -0.0 where eps is hugely negative, never NaN."""
    big = [0.0, 5e-324, 1e-300, 1.0, 1e5, 1e150, 1e300, 1.7976931348623157e308]
    eps = np.array([s * x for x in big for s in (1.0, -1.0)] + [np.inf, -np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.asarray(log_gaussian_hockey_stick(eps, mu))
        single = [log_gaussian_hockey_stick(float(e), mu) for e in eps]
    np.testing.assert_array_equal(out, single)
    assert not np.any(np.isnan(out)) and np.all(out <= 0.0)
    assert out[-2] == -np.inf and out[-1] == 0.0
    if mu <= 1e-10:  # eps / mu overflows at eps = 1e300
        assert out[eps == 1e300][0] == -np.inf and out[eps == -1e300][0] == 0.0
    if mu == 1.0:  # a = 0.5 - 1e300: a^2 overflows
        assert out[eps == 1e300][0] == -np.inf
