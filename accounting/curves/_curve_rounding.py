"""Safe-side storage of a trade-off curve: stored doubles whose pair is never more private.

A :class:`~accounting.curves.tradeoff.PiecewiseLinearTradeoff` denotes the pair of its data
(:mod:`accounting.curves.gdp_pricing`, module doc): atoms with Q-masses (widths) and
P-masses (drops), one more P-atom 1 - start at loss +inf, each side normalised by its exact
total. Rounding those masses moves the curve either way; this module rounds them so that
the stored curve is never above the exact one (a lower curve is a weaker guarantee: safe as
a cost).

Prefix rule (derived). For a pair with atoms in order of decreasing likelihood ratio,
H_x(P || Q) = max_k sum_{i <= k} (P_i - x Q_i) for every x >= 0 (Neyman-Pearson; Dong, Roth
and Su 2022, Prop. 2.12 with x = e^eps), and for any other pair (Q', P') on the same atoms
H_x(P' || Q') >= sum_{i <= k} (P'_i - x Q'_i) for each k (a particular test). So if every
prefix sum of P' is >= that of P and every prefix sum of Q' <= that of Q, H' >= H for all
x >= 0, hence T(Q', P') <= T(Q, P) at every alpha (DRS 2022, Prop. 2.12: f(alpha) =
sup_x 1 - H_x - x alpha), whatever the order of the stored atoms. :func:`safe_pair` meets it
from bounds on the exact normalised masses: on each side a pivot atom (the largest) takes
the remainder 1 - (sum of the others), computed exactly (:class:`accounting.exact_sum.ExactSum`);
the atoms before it are rounded to the side that grows the prefix sums (P up, Q down), the
atoms after it to the side that shrinks the suffix sums (P down, Q up), with the factor
1 -+ 2u (u = 2^-53) that covers the normalisation by the stored total (within u of 1).
Merging atoms whose float ratios are equal (a chord above the two segments) is not done:
the stored atoms are ordered by their exact ratios instead (:func:`exact_order`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from accounting.exact_sum import ExactSum
from accounting.numerics import fraction_down, fraction_up

_U = 2.0**-53


def _remainder(terms: np.ndarray, skip: int, total: float = 1.0) -> ExactSum:
    """total - sum of ``terms`` except ``terms[skip]``, exactly."""
    rest = -ExactSum.of(np.delete(terms, skip).tolist())
    return rest + total


def _up(x: np.ndarray, factor: float) -> np.ndarray:
    """Doubles >= x * factor (exact zeros stay 0: a mass known to be 0)."""
    return np.where(x > 0.0, np.nextafter(x * factor, np.inf), 0.0)


def safe_pair(
    q: tuple[np.ndarray, np.ndarray], p: tuple[np.ndarray, np.ndarray], inf: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, float]:
    """(widths, drops, start) whose pair is below-dominated by the exact one (module doc).

    ``q`` and ``p`` are (lower, upper) bounds on the exact normalised Q- and P-masses of the
    finite atoms, in order of decreasing exact likelihood ratio (an atom with P = 0, loss
    -inf, last); ``inf`` bounds the P-mass at +inf. The widths sum to T' in [1 - u, 1]
    exactly and the P-masses (drops and 1 - start) to S' in [1, 1 + u], so the prefix rule
    holds both for the stored masses as they are (T' <= 1 <= S': the curve's Pld, losses
    log(d_k / w_k), :meth:`PiecewiseLinearTradeoff.to_pld`) and normalised by their totals
    (the factors 1 -+ 2u before the pivots). A width that rounds to 0 before the Q-pivot
    moves its atom's P-mass to +inf (start < 1: a loss beyond the doubles' ratios).
    Returned in :func:`exact_order`, empty atoms dropped.
    """
    q_lo, q_hi = q
    p_lo, p_hi = p
    jq = int(np.argmax(q_lo))
    widths = q_hi.copy()
    widths[:jq] = np.maximum(np.nextafter(q_lo[:jq] * (1.0 - 2.0 * _U), 0.0), 0.0)
    rest = _remainder(widths, jq)
    if not rest.lower > 0.0:
        raise ValueError("the masses' bounds leave no Q-mass for the largest atom")
    widths[jq] = rest.lower
    fold = widths == 0.0  # a ratio beyond the doubles: the atom's P-mass goes to +inf
    lo = np.concatenate([[ExactSum.of([inf[0], *p_lo[fold].tolist()]).lower], p_lo])
    hi = np.concatenate([[ExactSum.of([inf[1], *p_hi[fold].tolist()]).upper], p_hi])
    lo[1:][fold] = hi[1:][fold] = 0.0
    jp = int(np.argmax(lo))
    masses = lo.copy()
    masses[:jp] = _up(hi[:jp], 1.0 + 2.0 * _U)
    if jp == 0:  # the +inf atom is the pivot: 1 - start = 1 - (the rest) rounded up
        start = ExactSum.of(masses[1:].tolist()).lower
    else:
        start = (-(ExactSum() + float(masses[0])) + 1.0).lower
        masses[jp] = _remainder(masses[1:], jp - 1, start).upper
        if masses[jp] < 0.0:
            raise ValueError("the masses' bounds leave no P-mass for the largest atom")
    drops = masses[1:]
    keep = (widths > 0.0) | (drops > 0.0)
    widths, drops = widths[keep], drops[keep]
    order = exact_order(widths, drops)
    return widths[order], drops[order], start


def exact_order(widths: np.ndarray, drops: np.ndarray) -> np.ndarray:
    """Indices of the atoms by decreasing exact ratio drop / width (the Neyman-Pearson order of
    the stored pair): by float ratio, then runs of equal float ratios by exact Fractions
    (a float tie may hide either order). Widths must be positive."""
    with np.errstate(over="ignore"):
        key = drops / widths
    order = np.argsort(-key, kind="stable")
    sorted_key = key[order]
    start = 0
    for stop in [*np.flatnonzero(np.diff(sorted_key) != 0.0) + 1, order.size]:
        if stop - start > 1:
            run = order[start:stop].tolist()
            run.sort(key=lambda i: -Fraction(float(drops[i])) / Fraction(float(widths[i])))
            order[start:stop] = run
        start = stop
    return order


def exact_stored(
    q: list[Fraction], p: list[Fraction], inf: Fraction
) -> tuple[np.ndarray, np.ndarray, float]:
    """(widths, drops, start) of the pair with exact masses ``q`` (Q) and ``p`` (P) on finite
    atoms and ``inf`` (P) at +inf, each side normalised by its exact total, stored by
    :func:`safe_pair` (never above the exact curve). An atom with Q = 0 has loss +inf: its
    P-mass joins ``inf``. Atoms whose exact ratios p / q are equal are merged (their masses
    summed exactly: the same trade-off curve), then ordered by decreasing exact ratio; each
    normalised mass is bounded by the nearest doubles either side (``fraction_down``,
    ``fraction_up``)."""
    if any(x < 0 for x in (*q, *p, inf)):
        raise ValueError("masses must be non-negative")
    inf += sum((b for a, b in zip(q, p, strict=True) if a == 0), Fraction(0))
    atoms: dict[Fraction, tuple[Fraction, Fraction]] = {}
    for a, b in zip(q, p, strict=True):
        if a > 0:
            ratio = b / a
            qa, pb = atoms.get(ratio, (Fraction(0), Fraction(0)))
            atoms[ratio] = (qa + a, pb + b)
    order = sorted(atoms, reverse=True)
    t = sum((atoms[r][0] for r in order), Fraction(0))
    s = inf + sum((atoms[r][1] for r in order), Fraction(0))
    if t == 0 or s == 0:
        raise ValueError("each side needs positive total mass")
    qs = [atoms[r][0] / t for r in order]
    ps = [atoms[r][1] / s for r in order]
    q_b = (np.array([fraction_down(x) for x in qs]), np.array([fraction_up(x) for x in qs]))
    p_b = (np.array([fraction_down(x) for x in ps]), np.array([fraction_up(x) for x in ps]))
    return safe_pair(q_b, p_b, (fraction_down(inf / s), fraction_up(inf / s)))
