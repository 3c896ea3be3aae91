"""Independent exact references for GDP pricing and domination of finite pairs (issue 42).

The pair a Pld's or PiecewiseLinearTradeoff's data denote (accounting.curves.gdp_pricing,
module doc): atoms by decreasing loss, Q-masses (widths, or p_i e^{-L_i}) and P-masses
(drops, or probs), +inf mass a first atom with no Q-mass; each normalised by its total.
References: z = -Phi^-1 by erfinv at many digits (not Newton's method, which the library
uses) and domination by hockey sticks at every likelihood ratio in exact Fractions (not the
library's vertex lines).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp

from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff

F = Fraction


def _read(q: list, p: list) -> tuple[list, list]:
    t_q, t_p = sum(q), sum(p)
    return [v / t_q for v in q], [v / t_p for v in p]


def curve_atoms(curve: PiecewiseLinearTradeoff) -> tuple[list[Fraction], list[Fraction]]:
    """The exact (Fraction) Q- and P-masses of a curve's data, read as in the module doc."""
    q = [F(w) for w in curve.widths.tolist()]
    p = [F(d) for d in curve.drops.tolist()]
    if curve.start < 1.0:
        q, p = [F(0), *q], [1 - F(curve.start), *p]
    return _read(q, p)


def pld_atoms(pld: Pld) -> tuple[list, list]:
    """A finite Pld's masses in mpmath at the working precision (no +-inf mass)."""
    probs, losses = pld.probs[::-1].tolist(), pld.losses[::-1].tolist()
    p = [mp.mpf(x) for x in probs]
    q = [mp.mpf(x) * mp.exp(-mp.mpf(c)) for x, c in zip(probs, losses, strict=True)]
    return _read(q, p)


def z(x) -> mp.mpf:
    """-Phi^-1(x) = sqrt(2) erfinv(1 - 2 x) at the working precision."""
    return mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(x))


def smallest_mu(cost: Pld | PiecewiseLinearTradeoff, scale: float = 0.0) -> mp.mpf:
    """max(0, max_k z(alpha_k) + z(beta_k)) of a finite pair (no +-inf mass), with 50 digits
    beyond those that cancel for a result of size ``scale`` (0: assume 1e-350) and those
    that 1 - 2 x loses for masses x down to 1e-330."""
    digits = -math.log10(scale) if scale > 0 else 350.0
    with mp.workdps(390 + max(0, int(digits))):
        if isinstance(cost, Pld):
            q, p = pld_atoms(cost)
        else:
            q, p = (list(map(_mpf, v)) for v in curve_atoms(cost))
        best = mp.mpf(0)
        for k in range(1, len(q)):
            best = max(best, z(mp.fsum(q[:k])) + z(mp.fsum(p[k:])))
        return best


def _mpf(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


def rr_mu(eps: float) -> mp.mpf:
    """2 Phi^-1(e^eps / (1 + e^eps)) = 2 sqrt(2) erfinv(tanh(eps / 2)) (DRS 2022, Prop. 2.5)."""
    with mp.workdps(60 + int(eps / 2.3)):
        return 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(mp.mpf(eps) / 2))


def _hockey_stick(q: list[Fraction], p: list[Fraction], x: Fraction) -> Fraction:
    """H_x(P || Q) = sum_i (p_i - x q_i)_+, exactly."""
    return sum((max(pi - x * qi, F(0)) for qi, pi in zip(q, p, strict=True)), F(0))


def dominated(a: PiecewiseLinearTradeoff, b: PiecewiseLinearTradeoff) -> bool:
    """a <= b for two curves' exact pairs: H_x(a) <= H_x(b) for every x >= 0 (residue paper,
    Prop. 10 (iii), x = e^eps); both are piecewise linear in x with kinks at the ratios
    p_i / q_i, equal at x = 0 (sum P = 1) and constant (the +inf mass) beyond their last
    kink, so the kinks of both and the +inf masses decide it exactly."""
    qa, pa = curve_atoms(a)
    qb, pb = curve_atoms(b)
    kinks = {pi / qi for qi, pi in zip(qa + qb, pa + pb, strict=True) if qi > 0}
    if any(_hockey_stick(qa, pa, x) > _hockey_stick(qb, pb, x) for x in kinks):
        return False
    inf_a = sum((pi for qi, pi in zip(qa, pa, strict=True) if qi == 0), F(0))
    inf_b = sum((pi for qi, pi in zip(qb, pb, strict=True) if qi == 0), F(0))
    return inf_a <= inf_b
