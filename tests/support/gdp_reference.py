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


def rr_composed_mu(eps: float, k: int) -> mp.mpf:
    """The smallest mu of the exact k-fold composition of RR_eps, a binomial pair (heads j
    with P-mass C(k, j) s^j (1 - s)^(k - j), s = e^eps / (1 + e^eps), and Q-mass with s and
    1 - s swapped), at 60 digits beyond the masses' size."""
    with mp.workdps(60 + int(k * eps / 2.3)):
        s = mp.mpf(1) / (1 + mp.exp(-mp.mpf(eps)))
        heads = range(k, -1, -1)  # decreasing loss
        p = [mp.binomial(k, j) * s**j * (1 - s) ** (k - j) for j in heads]
        q = [mp.binomial(k, j) * (1 - s) ** j * s ** (k - j) for j in heads]
        return max(z(mp.fsum(q[:m])) + z(mp.fsum(p[m:])) for m in range(1, k + 1))


def rr_composed_within(eps: float, k: int, budget: Pld) -> bool:
    """Is the exact k-fold composition of RR_eps (the binomial pair of :func:`rr_composed_mu`)
    dominated by the pair ``budget``'s data denote? T_budget <= T_exact at the binomial
    curve's vertices (T_budget convex, T_exact linear between them), at 60 digits beyond the
    masses' size, up to 10^-50."""
    with mp.workdps(60 + int(k * eps / 2.3)):
        s = mp.mpf(1) / (1 + mp.exp(-mp.mpf(eps)))
        heads = range(k, -1, -1)
        p = [mp.binomial(k, j) * s**j * (1 - s) ** (k - j) for j in heads]
        q = [mp.binomial(k, j) * (1 - s) ** j * s ** (k - j) for j in heads]
        bq, bp = pld_atoms(budget)
        alphas = [mp.fsum(bq[:m]) for m in range(len(bq) + 1)]
        betas = [mp.fsum(bp[m:]) for m in range(len(bp) + 1)]

        def t_budget(x: mp.mpf) -> mp.mpf:  # linear between the budget's vertices
            m = max(i for i, a in enumerate(alphas) if a <= x)
            if m == len(alphas) - 1:
                return betas[-1]
            w = (x - alphas[m]) / (alphas[m + 1] - alphas[m])
            return betas[m] + w * (betas[m + 1] - betas[m])

        verts = [(mp.fsum(q[:m]), mp.fsum(p[m:])) for m in range(1, k + 1)]
        return all(t_budget(a) <= b + mp.mpf(10) ** -50 for a, b in verts)


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
