"""A Pld's Q-deficit covered by a lower bound on the exact pair's losses (issue 42).

A rounded PLD (losses rounded up, masses rounded up) can carry a Q-mass deficit
D = 1 - sum_i p_i e^{-L_i} beyond what :meth:`Pld.q_deficit` reads as rounding: a k-fold
composition of randomized response does from a few thousand folds on (each loss rounded up
by an ulp lowers its Q-mass). The certificate reads D as Q-mass at loss -inf (its curve
T_A reaches 0 at alpha = 1 - D), which no budget with T_b(alpha) > 0 for alpha < 1 dominates:
safe, but every further query is refused.

A finite lower bound F on the losses of the exact pair E that the stored data dominate
(T_A <= T_E, the rounding rule of :mod:`accounting.curves.pld`) removes that artefact: E's last
segment ends at (1, 0) with slope -e^{l_min}, l_min >= F its least loss, and T_E is convex, so
T_E(alpha) >= e^F (1 - alpha) for every alpha. Hence T_E >= M = max(T_A, e^F (1 - alpha)), and
:func:`cover_deficit` builds a finite pair whose curve is below M, with no deficit: a budget
it proves below that pair's curve is below T_E.
"""

from __future__ import annotations

import math

import numpy as np

from accounting._outward import sum_down
from accounting.curves.pld import Pld, q_terms

_U = 2.0**-53  # unit roundoff of float64


def loss_floor(pld: Pld) -> float:
    """A double at or below every finite log-ratio of the pair ``pld``'s data denote, read
    with or without normalising its totals (:mod:`accounting.curves.domination_certificate`):
    min(L_0, L_0 + log(T_q / T_p)), T_q = sum_i p_i e^{-L_i}, T_p = sum_i p_i + inf_mass;
    -inf where the data have a Q-deficit (:meth:`Pld.q_deficit`: Q-mass at loss -inf) or no
    finite loss.

    Bounds (u = 2^-53): T_q is within 16u S + u of the float sum S (:meth:`Pld.q_deficit`),
    so T_q >= S (1 - 16u) - u, moved down by 2u S more for the float operations; T_p is at
    most its correctly rounded sum (``math.fsum``) one ulp up. Both lie in [1/2, 2], so their
    difference is exact (Sterbenz), the quotient within u and log1p within 4u of its
    value: within 6u relative, so doubling the (non-positive) shift covers it.
    """
    if pld.losses.size == 0 or pld.q_deficit() > 0.0:
        return -math.inf
    s = _q_sum(pld.probs, pld.losses)
    tq_low = s * (1.0 - 18.0 * _U) - _U
    tp_up = math.nextafter(math.fsum([*pld.probs.tolist(), pld.inf_mass]), math.inf)
    if not 0.5 <= tq_low <= tp_up <= 2.0:
        return -math.inf
    shift = min(0.0, math.log1p((tq_low - tp_up) / tp_up))
    return float(sum_down(float(pld.losses[0]), 2.0 * shift))


def cover_deficit(a: Pld, floor: float) -> Pld | None:
    """A finite PLD without Q-deficit whose curve is below max(T_A, e^floor (1 - alpha)) (module
    doc), for a PLD ``a`` with a Q-deficit and ``floor`` <= every loss of the exact pair that
    ``a`` dominates; None where no such cover is found (the caller keeps ``a``).

    Construction: the m lowest atoms (P-mass P_r, Q-mass Q_r) and the deficit D are replaced by
    one atom (lam, y), y = min(P_r, e^floor (Q_r + D)) (rounded down, bounded above), at a loss
    lam low enough that (i) its Q-mass y e^{-lam} is
    >= 1 - Q_t (Q_t the Q-mass of the atoms kept), so the Q-total s is >= 1, and (ii) its
    normalised log-ratio lam + log(s / T') <= floor (T' = P_t + y + h the new P-total): with
    t = e^{-lam}, (ii) reads Q_t + y t <= e^floor T' t, i.e.
    lam <= floor + log((T' - y e^{-floor}) / Q_t).

    Why it is below M (T the P-total of ``a``, d = P_r - y >= 0): the cover's vertices over the
    kept atoms are (alpha_k / s, phi(beta_k)) with phi(x) = (x T - d) / (T - d) <= x for
    x <= 1, so there its curve is phi(T_A(s alpha)) <= T_A(s alpha) <= T_A(alpha) (T_A
    decreasing, s >= 1); after them it is the segment from (alpha_j / s, y / T') to (1, 0),
    below the line e^floor (1 - alpha) by (ii). The bounds use those of
    :func:`loss_floor` (with room for the float operations on values <= 2 of ``rest_up``), the
    sums of :func:`sum_bounds` and 4u for the sum T'; each log is within
    4u relative, the subtraction giving ``cut`` within 2u absolute (4u / cut in its log), so
    subtracting 8u (the sum of the logs' magnitudes + |floor| + 2) + 4u / cut + 2^-1000 and
    one ulp keeps lam below both limits.
    """
    n = a.losses.size
    if n < 2 or not math.isfinite(floor):
        return None
    probs, losses = a.probs, a.losses
    q = q_terms(probs, losses)
    d_float = 1.0 - float(np.sum(q))  # only to choose m
    # the fewest low atoms whose P-mass covers e^floor times their Q-mass and the deficit
    # (lam then near floor; any m is sound, this one keeps the most atoms)
    need = math.exp(floor) * (np.cumsum(q)[:-1] + max(d_float, 0.0) + 40.0 * _U)
    enough = np.flatnonzero(np.cumsum(probs)[:-1] >= need * (1.0 + 64.0 * _U))
    if enough.size == 0:
        return None
    m = int(enough[0]) + 1
    tiny = n * 2.0**-1070  # the q_i's subnormal slack, with room for the float operations
    s_low, s_high = sum_bounds(q[m:])
    rest_up = (1.0 - s_low) + 16.0 * _U * s_low + 4.0 * _U + tiny  # >= 1 - Q_t
    q_top_up = s_high * (1.0 + 16.0 * _U) + 4.0 * _U + tiny  # >= Q_t
    # y <= the exact P_r, at most e^floor rest_up
    y = min(sum_bounds(probs[:m])[0], math.exp(floor) * rest_up)
    t_low = (sum_bounds(probs[m:])[0] + y + a.inf_mass) * (1.0 - 4.0 * _U)  # <= T'
    cut = t_low - y * math.exp(-floor) * (1.0 + 8.0 * _U)
    if not (y > 0.0 and rest_up > 0.0 and 0.0 < cut <= 2.0 and 0.0 < s_low <= 2.0):
        return None
    logs = (math.log(y), math.log(rest_up), math.log(cut), math.log(q_top_up))
    slack = 8.0 * _U * (sum(map(abs, logs)) + abs(floor) + 2.0) + 4.0 * _U / cut + 2.0**-1000
    lam = min(logs[0] - logs[1], floor + (logs[2] - logs[3])) - slack
    lam = math.nextafter(lam, -math.inf)
    if not -math.inf < lam < losses[m]:
        return None
    new_losses = np.concatenate([[lam], losses[m:]])
    new_probs = np.concatenate([[y], probs[m:]])
    cover = Pld(new_losses, new_probs, a.inf_mass)
    # the constructor merges equal losses and adds a total's shortfall to the top atom: then
    # its data are not the pair above, and there is no cover
    same = np.array_equal(cover.losses, new_losses) and np.array_equal(cover.probs, new_probs)
    return cover if same else None


def has_q_deficit(x: Pld) -> bool:
    """Whether :meth:`Pld.q_deficit` is > 0, that is 1 - F > 16u F + u for F the correctly
    rounded sum of its q_i (``math.fsum``), decided from :func:`sum_bounds` (F is within u
    of the sum, so within [lo (1 - 2u), hi (1 + 2u)], and each side below moves by at most 4u
    in floats); only where these bounds leave it open is :meth:`Pld.q_deficit` asked."""
    lo, hi = sum_bounds(q_terms(x.probs, x.losses))
    f_hi, f_lo = hi * (1.0 + 2.0 * _U), lo * (1.0 - 2.0 * _U)
    if (1.0 - f_hi) - (16.0 * _U * f_hi + _U) > 4.0 * _U:
        return True
    if (1.0 - f_lo) - (16.0 * _U * f_lo + _U) < -4.0 * _U:
        return False
    return x.q_deficit() > 0.0


def sum_bounds(x: np.ndarray) -> tuple[float, float]:
    """Doubles lo <= sum(x) <= hi for non-negative doubles x (finite or +inf), without
    ``math.fsum``'s cost over a wide exponent range: the terms >= 2^-60 by ``math.fsum``
    (correctly rounded, B within u B), the k others by ``np.sum`` (any order: within
    gamma_{k-1} <= 2ku of their sum, for ku <= 1/4; Higham 2002, Eq. (4.4)), each side widened
    by 8u for its three float operations; +inf terms give hi = lo = +inf. Where ku > 2^-10,
    all terms by ``math.fsum``."""
    big = x >= 2.0**-60
    small = x[~big]
    if small.size * _U > 2.0**-10:
        total = math.fsum(x.tolist())
        return total * (1.0 - 2.0 * _U), total * (1.0 + 2.0 * _U)
    b = math.fsum(x[big].tolist())
    s = float(np.sum(small))
    k = small.size
    return (b + s * (1.0 - 4.0 * k * _U)) * (1.0 - 8.0 * _U), (b + s * (1.0 + 8.0 * k * _U)) * (
        1.0 + 8.0 * _U
    )


def _q_sum(probs: np.ndarray, losses: np.ndarray) -> float:
    return math.fsum(q_terms(probs, losses).tolist())
