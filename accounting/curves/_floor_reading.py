"""A rounded composition read at or below the exact one, given a floor on its losses (issue 42).

The stored data (P-masses c_i at losses l_i, mass h at +inf; P-total T = h + sum c_i >= 1)
of a PLD built by ``Pld.compose`` dominate the exact pair E it stands for: every loss of E is
<= the stored loss it was rounded to, and each tail sum h + sum_{l_i > t} c_i >= E's
P(L > t), so the unnormalised hockey stick H_x(data) = h + sum_i c_i (1 - x e^{-l_i})_+ is >=
H_x(E) at every x > 0 (:mod:`accounting.curves.pld`, "Rounding"). Reading the data as the
normalised pair (c / T, c e^{-l} / T_q), as the certificate does, is not safe: an atom rounded
up by less than the average is read below its exact mass (RR_3^52 composed: 2.2e-15 above
E's curve). A floor F <= every loss of E gives the cover :func:`floor_cover`, a PLD C whose
normalised reading is at or below T_E everywhere, by the lines of its curve:

* a convex piecewise-linear curve is the maximum of 0 and its segments' lines; the line of
  C's atom j (slope x_j = e^{l_j + s}, s = log(T_q' / T') the shift of C's normalised losses)
  is 1 - H_{x_j}(C read) - x_j alpha (the hockey-stick duality, Dong, Roth and Su 2022,
  Prop. 2.12), and T_E(alpha) >= 1 - H_x(E) - x alpha for every x;
* H_{x_j}(C read) = h'/T' + sum_{i above j} (c'_i / T')(1 - e^{l_j - l_i}) involves only
  the atoms above j; with c'_i >= (1 + eta) c_i, h' >= (1 + eta) h and T' <= 1 + eta it is
  >= H_{e^{l_j}}(data) >= H_{e^{l_j}}(E) >= H_{x_j}(E) where s >= 0 (H decreases in x);
* C keeps a's atoms above a cut, each scaled by 1 + eta (rounded up), one partial atom (its
  own line needs only the atoms above it), and a last atom at lam = F - 2^-20 whose Q-mass
  makes T_q' >= T' (s >= 0) and whose line through (1, 0) has slope e^{lam + s} <= e^F: it is
  <= e^F (1 - alpha) <= T_E (E's last slope is -e^{l_min}, l_min >= F, and T_E is convex);
* the cut drops mass from the bottom until T' lies in [1, 1 + eta] (>= 1: the constructor
  keeps the data as given).

So the region where E's P-tail is below T - 1 (~1e-14 after long compositions) is read as the
floor line only. Each condition is checked on the built data (sums bounded by
:func:`~accounting._outward.sum_bounds`, the Q-masses p_i e^{-l_i} within 10.01u
relative plus 2^-1072 (:meth:`Pld.q_deficit`), exp within 4u); where one fails, or where the
floor is so near 0 that eta would exceed 2^-31 (the constructor's 1e-9 on the total), there is
no cover (None).
"""

from __future__ import annotations

import math

import numpy as np

from accounting._outward import sum_bounds
from accounting.curves._pld_rounding import product_up
from accounting.curves.pld import Pld, q_terms

_U = 2.0**-53  # unit roundoff of float64
#: the cover's last loss is this far below the floor (its slope e^-(2^-20) of e^F)
_BELOW_FLOOR = 2.0**-20


def floor_cover(a: Pld, floor: float) -> Pld | None:
    """A PLD whose normalised reading is at or below the curve of every exact pair that
    ``a``'s data dominate with all losses >= ``floor`` (module doc); None where none is
    found."""
    n = a.losses.size
    if n == 0 or not math.isfinite(floor) or floor > a.losses[0]:
        return None
    lam = floor - _BELOW_FLOOR
    e_lam, e_floor = math.exp(lam), math.exp(floor)
    if not 2.0**-1000 < e_lam < e_floor < 1.0:
        return None
    probs, losses = a.probs, a.losses  # increasing loss: the bottom first
    # y = c (T' - Q) amplifies the float sums' rounding by c: eta leaves room for it
    c = e_lam * (1.0 + 2.0**-46) / (1.0 - e_lam)
    eta = 256.0 * _U * (1.0 + c)
    if not eta <= 2.0**-31:
        return None
    scale = 1.0 + eta
    scaled = product_up(probs, np.full(probs.shape, scale))
    h = float(product_up(np.array([a.inf_mass]), np.array([scale]))[0]) if a.inf_mass else 0.0
    q = q_terms(scaled, losses)
    # T'(j, keep) in floats: atoms above j scaled, keep of atom j, y = c (T' - Q) (or none)
    k_above = np.concatenate([np.cumsum(scaled[::-1])[::-1][1:], [0.0]]) + h
    q_above = np.concatenate([np.cumsum(q[::-1])[::-1][1:], [0.0]])
    full = k_above + probs + c * np.maximum(k_above + probs - q_above - probs * np.exp(-losses), 0)
    target = 1.0 + 0.5 * eta
    j = int(np.flatnonzero(full >= target)[-1]) if np.any(full >= target) else 0

    def miss(keep: float) -> tuple[float, tuple[np.ndarray, np.ndarray, float, float, float]]:
        built = _assemble(keep, float(losses[j]), scaled[j + 1 :], losses[j + 1 :], h, lam, c)
        lo, hi = sum_bounds(np.append(built[0], h))
        return 0.5 * (lo + hi) - target, built

    close = 0.4 * eta
    for _ in range(4):  # the float model may miss the atom: T' increases with the mass kept
        (m_lo, built), (m_hi, built_hi) = miss(0.0), miss(float(probs[j]))
        if m_lo > close and j + 1 < n:
            j += 1
        elif m_hi < -close and j > 0:
            j -= 1
        else:
            break
    if abs(m_hi) <= close < abs(m_lo):
        m_lo, built = m_hi, built_hi
    k_lo, k_hi = 0.0, float(probs[j])
    for _ in range(12):  # regula falsi on the total (piecewise linear in keep)
        if abs(m_lo) <= close or not m_lo < 0.0 < m_hi:
            break
        keep = k_lo + (k_hi - k_lo) * (-m_lo / (m_hi - m_lo))
        m, trial = miss(keep)
        if m < 0.0:
            k_lo, m_lo, built = keep, m, trial
        else:
            k_hi, m_hi = keep, m
            if m <= close:
                m_lo, built = m, trial
    probs_c, losses_c, y, q_lo, q_hi = built
    if not _certified(probs_c, h, y, lam, floor, q_lo, q_hi, eta):
        return None
    cover = Pld(losses_c, probs_c, h)
    same = np.array_equal(cover.losses, losses_c) and np.array_equal(cover.probs, probs_c)
    return cover if same else None


def _assemble(
    keep: float,
    loss: float,
    above: np.ndarray,
    above_losses: np.ndarray,
    h: float,
    lam: float,
    c: float,
) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """(probs, losses, y, q_lo, q_hi) of the cover with ``keep`` at ``loss`` below the atoms
    ``above``: y with e^lam (T' - Q) <= y <= e^F T' - e^lam Q, T' = t + y, just above the lower
    end (the range is ~2^-20 e^F wide, far more than T' may grow), or none where Q >= T'; Q
    within [q_lo, q_hi]."""
    mid = np.concatenate([[keep], above]) if keep > 0.0 else above
    mid_losses = np.concatenate([[loss], above_losses]) if keep > 0.0 else above_losses
    q_lo, q_hi = _q_bounds(mid, mid_losses) if mid.size else (0.0, 0.0)
    t = sum_bounds(np.append(mid, h))[1]
    y = c * ((t - q_lo) + 16.0 * _U * t) if t > q_lo * (1.0 - 4.0 * _U) else 0.0
    if y > 0.0:
        return np.concatenate([[y], mid]), np.concatenate([[lam], mid_losses]), y, q_lo, q_hi
    return mid, mid_losses, y, q_lo, q_hi


def reading_slack(a: Pld) -> float:
    """A double >= the most by which the certificate's normalised reading of ``a`` can lie
    above the curve of a pair that its data dominate: (T - 1) + 64u.

    The unnormalised reading f_U (P-tail sums min(1, h + sum of the top masses), Q-masses
    c_i e^{-l_i} not divided) is the curve sup_x [1 - H_x(data) - x alpha], at or below that
    pair's (H_x(data) >= its hockey stick). Its vertices are (T_q alpha_k, beta_k - X (1 -
    beta_k)) for the normalised reading's (alpha_k, beta_k), X = T - 1; by convexity through
    (0, 1) the normalised curve moves by at most d = max(0, 1 - T_q) under alpha -> alpha / T_q,
    and it is <= 1 - alpha <= d for alpha >= T_q; so it is <= f_U + X + d. A Q-total read as
    complete is within 16u T_q + u of 1 (:meth:`Pld.q_deficit`; a deficit beyond it is read
    as an atom, total 1), and X <= hi - 1 for hi >= T (:func:`sum_bounds`; exact, Sterbenz)."""
    return max(sum_bounds(np.append(a.probs, a.inf_mass))[1] - 1.0, 0.0) + 64.0 * _U


def _certified(
    probs: np.ndarray,
    h: float,
    y: float,
    lam: float,
    floor: float,
    q_lo: float,
    q_hi: float,
    eta: float,
) -> bool:
    """The module doc's conditions on the built data: 1 <= T' <= 1 + eta (T' within the
    bounds of :func:`sum_bounds`), T_q' >= T' (s >= 0) and, with a last atom y > 0 at lam,
    T_q' <= e^{F - lam} T' (its normalised loss lam + s <= F); Q = the kept Q-masses, within
    [q_lo, q_hi], and y e^{-lam} bounded with exp within 4u and products within u."""
    t_lo, t_hi = sum_bounds(np.append(probs, h))
    if not 1.0 <= t_lo <= t_hi <= 1.0 + eta:
        return False
    if y == 0.0:
        return q_lo * (1.0 - 2.0 * _U) >= t_hi
    last = y * math.exp(-lam)
    last_lo, last_hi = last * (1.0 - 8.0 * _U), last * (1.0 + 8.0 * _U)
    d = floor - lam  # > 0, within u of the exact difference
    e_d_lo = math.exp(d * (1.0 - 2.0 * _U)) * (1.0 - 4.0 * _U)
    return (q_lo + last_lo) * (1.0 - 2.0 * _U) >= t_hi and (q_hi + last_hi) * (
        1.0 + 2.0 * _U
    ) <= e_d_lo * t_lo * (1.0 - 2.0 * _U)


def _q_bounds(probs: np.ndarray, losses: np.ndarray) -> tuple[float, float]:
    """Doubles below and above the exact sum of p_i e^{-L_i}: each computed q_i within 10.01u
    relative plus 2^-1072 (:meth:`Pld.q_deficit`), summed by :func:`sum_bounds`."""
    lo, hi = sum_bounds(q_terms(probs, losses))
    tiny = probs.size * 2.0**-1071
    return lo * (1.0 - 12.0 * _U) - tiny, hi * (1.0 + 12.0 * _U) + tiny
