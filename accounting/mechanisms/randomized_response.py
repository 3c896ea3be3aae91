"""Binary randomized response with parameter eps: report the true bit with probability
e^eps / (1 + e^eps). Its privacy loss is +-eps, and its trade-off curve f_{eps,0} is the
lowest one allowed by pure eps-DP, so every pure eps-DP mechanism is a post-processing of
it (Kairouz, Oh and Viswanath 2015, Sec. 2; in f-DP terms, Dong, Roth and Su 2022, the
curve f_{eps,0}): its PLD, delta curve and RDP are tight worst cases for pure eps-DP,
also under composition (data processing inequality).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from accounting import _checks
from accounting.curves.pld import Pld
from accounting.mechanisms.finite import FiniteMechanism
from accounting.numerics import log1mexp, logsumexp


def randomized_response_pld(eps: float) -> Pld:
    """Exact two-point PLD: loss eps w.p. e^eps/(1+e^eps), -eps w.p. 1/(1+e^eps).

    The worst case of pure eps-DP, :meth:`Pld.pure_dp`.
    """
    return Pld.pure_dp(eps)


def pure_dp_delta(eps0: float, eps: float, k: int = 1) -> float:
    """Exact delta(eps) of the k-fold composition of pure eps0-DP mechanisms (worst case).

    The k-fold composition of randomized response has loss (2j - k) eps0 with
    j ~ Binomial(k, e^eps0 / (1 + e^eps0)), so
        delta = sum_j C(k, j) p^j (1-p)^(k-j) (1 - e^{eps - (2j - k) eps0})_+
    (the optimal composition theorem, Kairouz, Oh and Viswanath 2015, Thm. 3.3, written as
    a hockey-stick divergence). For k = 1: (e^eps0 - e^eps)_+ / (1 + e^eps0).
    Summed in log space over non-negative terms only.
    """
    eps0 = _checks.nonnegative("eps0", eps0)
    eps = _checks.nonnegative("eps", eps)
    k = _checks.integer("k", k)
    j = np.arange(k + 1, dtype=np.float64)
    loss = (2.0 * j - k) * eps0
    keep = loss > eps
    if not np.any(keep):
        return 0.0
    j, loss = j[keep], loss[keep]
    log_binom = special.gammaln(k + 1.0) - special.gammaln(j + 1.0) - special.gammaln(k - j + 1.0)
    log_terms = (
        log_binom
        + j * special.log_expit(eps0)
        + (k - j) * special.log_expit(-eps0)
        + log1mexp(eps - loss)
    )
    return _checks.result("pure_dp_delta", min(1.0, math.exp(logsumexp(log_terms, axis=0))))


def randomized_response_rdp(alpha: float, eps: float) -> float:
    """RDP of randomized response, the tight RDP of any pure eps-DP mechanism (Mironov
    2017, Prop. 5): log(p^a (1-p)^(1-a) + (1-p)^a p^(1-a)) / (a - 1), p = e^eps/(1+e^eps).
    """
    alpha = _checks.order("alpha", alpha)
    eps = _checks.nonnegative("eps", eps)
    lp, lq = special.log_expit(eps), special.log_expit(-eps)
    value = float(np.logaddexp(alpha * lp + (1 - alpha) * lq, alpha * lq + (1 - alpha) * lp))
    return _checks.result("randomized_response_rdp", min(max(value / (alpha - 1.0), 0.0), eps))


def randomized_response_laws(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Binary randomized response: the true bit (1 under dataset 0) with prob e^eps/(1+e^eps).

    Output laws (p, q) on datasets 0 and 1, e.g. for :class:`~accounting.mechanisms.finite.
    FiniteMechanism`; their PLD is :func:`randomized_response_pld`.
    """
    eps = _checks.nonnegative("eps", eps)
    keep = 1.0 / (1.0 + math.exp(-eps))
    return np.array([keep, 1 - keep]), np.array([1 - keep, keep])


def canonical_laws(eps: float, *, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The canonical (eps, delta)-DP pair, the least private (eps, delta)-DP mechanism.

    Outputs (reveal 0, rr 0, rr 1, reveal 1): with prob delta the dataset is revealed,
    otherwise eps-randomized response (Kairouz, Oh and Viswanath 2015, Thm. 2.1; its
    hockey-stick curve is delta + (1 - delta)(e^eps - e^t)_+/(1 + e^eps) at t >= -eps).
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.delta("delta", delta)
    rr_p, rr_q = randomized_response_laws(eps)
    p = np.concatenate([[delta], (1 - delta) * rr_p, [0.0]])
    q = np.concatenate([[0.0], (1 - delta) * rr_q, [delta]])
    return p, q


def subsampled_randomized_response(rate: float, eps: float) -> FiniteMechanism:
    """Randomized response RR_eps run with probability ``rate``, else a constant output.

    Outputs (rr 0, rr 1, not sampled): the sampled branch reports the true bit (0 under
    dataset 0) with probability e^eps / (1 + e^eps); the third output has probability
    1 - rate under both datasets (privacy amplification by subsampling, Balle, Barthe and
    Gaboardi 2018, as a finite pair).
    """
    rate = _checks.finite("rate", rate)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be in [0, 1], got {rate!r}")
    keep = special.expit(_checks.nonnegative("eps", eps))
    return FiniteMechanism(
        np.array([rate * keep, rate * (1 - keep), 1 - rate]),
        np.array([rate * (1 - keep), rate * keep, 1 - rate]),
    )
