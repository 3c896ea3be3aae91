"""Exact and 50-digit references for the privacy costs, budgets and noise scales.

Doubles are exact as ``Fraction`` and as ``mpmath.mpf``; every formula here is evaluated at
50 significant digits (more where a difference cancels), so a comparison with a double is
decided unless the two agree to ~45 digits. Used by the safe-side tests of
tests/accounting/test_exact_rounding.py and test_exact_safe_side.py.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp

DPS = 50


def mpf(x: float | Fraction) -> mp.mpf:
    """A double as an mpf (exact at any precision); a Fraction to the working precision."""
    if isinstance(x, Fraction):
        return mp.mpf(x.numerator) / x.denominator
    return mp.mpf(x)


def rdp_conversion(rdp: float, alpha: float, delta: float, method: str) -> mp.mpf:
    """The per-order RDP -> (eps, delta) bound (Mironov 2017, Prop. 3; Canonne, Kamath and
    Steinke 2020, Prop. 12) at 50 digits."""
    with mp.workdps(DPS):
        b, a, d = mpf(rdp), mpf(alpha), mpf(delta)
        if method == "classical":
            return b + mp.log(1 / d) / (a - 1)
        return b + mp.log1p(-1 / a) - (mp.log(d) + mp.log(a)) / (a - 1)


def zcdp_classical(rho: float | Fraction, delta: float) -> mp.mpf:
    """rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3)."""
    with mp.workdps(DPS):
        r = mpf(rho)
        return r + 2 * mp.sqrt(r * mp.log(1 / mpf(delta)))


def cks_at(rho: mp.mpf, delta: mp.mpf, u: mp.mpf) -> mp.mpf:
    """Canonne, Kamath and Steinke 2020, Prop. 12 with tau = alpha rho at alpha = 1 + e^u."""
    x = mp.exp(u)
    a = 1 + x
    return a * rho - mp.log1p(1 / x) + (mp.log(1 / delta) - mp.log(a)) / x


def zcdp_improved(rho: float | Fraction, delta: float) -> mp.mpf:
    """Cor. 13 of Canonne, Kamath and Steinke 2020: the infimum over alpha > 1 of ``cks_at``
    (convex enough in u = log(alpha - 1) for a golden-section search), clipped at 0."""
    if rho == 0:
        return mp.mpf(0)
    with mp.workdps(DPS):
        r, d = mpf(rho), mpf(delta)
        centre = (mp.log(mp.log(1 / d)) - mp.log(r)) / 2
        lo, hi = centre - 40, centre + 40
        g = (mp.sqrt(5) - 1) / 2
        c, e = hi - g * (hi - lo), lo + g * (hi - lo)
        fc, fe = cks_at(r, d, c), cks_at(r, d, e)
        for _ in range(260):
            if fc < fe:
                hi, e, fe = e, c, fc
                c = hi - g * (hi - lo)
                fc = cks_at(r, d, c)
            else:
                lo, c, fc = c, e, fe
                e = lo + g * (hi - lo)
                fe = cks_at(r, d, e)
        return max(mp.mpf(0), min(fc, fe))


def gaussian_hockey_stick(eps: float, mu: float, digits: int = 45) -> mp.mpf:
    """delta_mu(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (Dong, Roth and Su
    2022, Cor. 2.13; Balle and Wang 2018, Thm. 8), with the precision raised until ``digits``
    survive the cancellation."""
    dps = digits + 10
    while True:
        with mp.workdps(dps):
            e, m = mpf(eps), mpf(mu)
            first = mp.ncdf(m / 2 - e / m)
            value = first - mp.exp(e) * mp.ncdf(-m / 2 - e / m)
            if value > 0 and first / value < mp.mpf(10) ** (dps - digits):
                return +value
            if dps > 5000:
                return mp.mpf(0) if value <= 0 else +value
        dps *= 2


def rr_composed_delta(eps0: float, k: int, eps: float) -> mp.mpf:
    """delta(eps) of k-fold randomized response RR_eps0 (the binomial hockey stick,
    Kairouz, Oh and Viswanath 2015, Thm. 3.3), exact p = e^eps0 / (1 + e^eps0), 50 digits."""
    with mp.workdps(50):
        e0, e = mp.mpf(eps0), mp.mpf(eps)
        p = mp.exp(e0) / (1 + mp.exp(e0))
        return mp.fsum(
            mp.binomial(k, j) * p**j * (1 - p) ** (k - j) * -mp.expm1(e - (2 * j - k) * e0)
            for j in range(k + 1)
            if (2 * j - k) * e0 > e
        )
