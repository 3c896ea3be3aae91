"""Privacy of private full-batch gradient descent with individual filtering (Algorithm 3).

Feldman and Zrnic 2021, Algorithm 3: at each step every per-example gradient is clipped to
min(||g||, C, sqrt(B_norm - spent_i)), the clipped gradients are summed and N(0, sigma^2 C^2 I)
is added. Prop. 5.1: the run is B_norm / (2 sigma^2 C^2)-zCDP whatever the number of steps.
With B_norm = k C^2 and k steps it is private GD with k steps, k / (2 sigma^2)-zCDP
(Gaussian mechanism of sensitivity C, Bun and Steinke 2016, Prop. 1.6, composed k times,
Lemma 2.3).

Neighbouring datasets differ by adding or removing one example (sensitivity C of the sum of
clipped gradients); the dataset size n that divides the sum is treated as public, as in the
paper and in Opacus.

The adaptive stopping rule of Sec. 5.1 queries the training accuracy: each query is the number
of correctly classified training points (sensitivity 1) plus N(0, s^2), 1 / (2 s^2)-zCDP
(Prop. 1.6). The GD trajectory does not depend on the answers (the run is continued to the
last query and the best queried checkpoint is returned), so the whole run is the sequential
composition of the trajectory and the queries (Bun and Steinke 2016, Lemma 2.3):
rho = B_norm / (2 sigma^2 C^2) + m / (2 s^2) for m queries. ``plan_filtered_gd`` splits a
target (eps, delta) into these two parts.

Rounding: every spend here is the exact rational value rounded up to a double
(``fraction_up``), and every calibration steps its noise up (or its budget down) until the
spend recomputed from it is <= the target exactly; the plan's two parts add up to at most
rho exactly, and its eps under the conversion is <= the target eps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from accounting import _checks
from accounting.curves.rdp import Method, check_method
from accounting.curves.zcdp import zcdp_budget, zcdp_to_eps
from accounting.numerics import fraction_up, nudge_down, nudge_up


def filtered_gd_zcdp(budget_steps: float, *, noise_multiplier: float) -> float:
    """rho of Algorithm 3: B_norm / (2 sigma^2 C^2) (Feldman and Zrnic 2021, Prop. 5.1).

    ``budget_steps`` is B_norm / C^2 (the squared-norm budget in units of C^2; k for private GD
    with k steps). ``noise_multiplier`` is sigma / sensitivity: the noise s.d. divided by the
    clipping norm C, the sensitivity of the sum of clipped gradients (Opacus's and
    dp_accounting's ``noise_multiplier``). The exact value rounded up: never below the true
    rho, even where sigma^2 under- or overflows.
    """
    b = _checks.positive("budget_steps", budget_steps)
    sigma = _checks.positive("noise_multiplier", noise_multiplier)
    return fraction_up(Fraction(b) / (2 * Fraction(sigma) ** 2))


def noise_multiplier_for(budget_steps: float, rho: float) -> float:
    """The noise multiplier (sigma / C) with B_norm / (2 sigma^2 C^2) = rho, i.e.
    sqrt(budget_steps / (2 rho)) (Prop. 5.1).

    Safe side, exactly: ``filtered_gd_zcdp(budget_steps, noise_multiplier=m) <= rho`` (the
    closed form is stepped up by ulps until it holds).
    """
    b = _checks.positive("budget_steps", budget_steps)
    rho = _checks.positive("rho", rho)
    sigma = math.sqrt(b) / (math.sqrt(2.0) * math.sqrt(rho))  # no under/overflow of b / rho
    sigma = nudge_up(lambda s: filtered_gd_zcdp(b, noise_multiplier=s) <= rho, sigma)
    return _checks.result("noise_multiplier", sigma)


def count_queries_zcdp(n_queries: int, *, sigma: float) -> float:
    """rho of m Gaussian counting queries (sensitivity 1, noise s.d. s = ``sigma``): m / (2 s^2).

    Bun and Steinke 2016, Prop. 1.6 (one query) and Lemma 2.3 (composition). The exact
    value rounded up.
    """
    m = _checks.integer("n_queries", n_queries, minimum=0)
    if m == 0:
        return 0.0
    s = _checks.positive("sigma", sigma)
    return fraction_up(Fraction(m) / (2 * Fraction(s) ** 2))


def _query_noise_for(n_queries: int, rho_queries: float) -> float:
    """s with m / (2 s^2) <= rho_q exactly (closed form sqrt(m / (2 rho_q)), stepped up)."""
    s = math.sqrt(n_queries) / (math.sqrt(2.0) * math.sqrt(rho_queries))
    return nudge_up(lambda x: count_queries_zcdp(n_queries, sigma=x) <= rho_queries, s)


@dataclass(frozen=True, kw_only=True)
class GdPrivacyPlan:
    """How a target (eps, delta) is spent by one run of Algorithm 3 and its stopping queries."""

    eps: float
    delta: float
    method: Method  # the zCDP -> DP conversion (``zcdp_to_eps``'s method)
    rho: float  # total zCDP budget: the conversion's B* for (eps, delta)
    rho_gd: float  # spent by the gradient steps, B_norm / (2 sigma^2 C^2)
    rho_queries: float  # spent by the stopping queries, m / (2 s^2)
    noise_multiplier: float  # sigma / C: the gradient noise s.d. is sigma C
    query_noise_std: float  # s: s.d. of each noisy count (inf when there are no queries)

    @property
    def query_share(self) -> float:
        """Fraction of the zCDP budget spent on the stopping queries."""
        return self.rho_queries / self.rho


def plan_filtered_gd(
    eps: float,
    *,
    delta: float,
    method: Method,
    budget_steps: float,
    n_queries: int = 0,
    query_share: float = 0.0,
) -> GdPrivacyPlan:
    """Noise of Algorithm 3 and of its stopping queries for a whole-run (eps, delta)-DP.

    rho = B* (eps, delta) under ``method`` (``zcdp_budget``; "classical" is the B* of
    Feldman and Zrnic 2021, Thm. 4.8, "improved" that of Canonne, Kamath and Steinke 2020,
    Cor. 13); the m = ``n_queries``
    accuracy queries get rho_q = ``query_share`` rho, i.e. s = sqrt(m / (2 rho_q)); the
    gradient steps get rho - rho_q, i.e. sigma = sqrt(budget_steps / (2 (rho - rho_q)))
    (Prop. 5.1). ``query_share`` must be in (0, 1) when there are queries and 0 otherwise.

    Guarantee, exactly (no ulp of excess): rho_gd + rho_queries <= rho as exact reals (hence
    also as a float sum), with rho_gd and rho_queries the spends recomputed from sigma and s
    (``filtered_gd_zcdp``, ``count_queries_zcdp``), and
    zcdp_to_eps(rho_gd + rho_queries, delta, method) <= eps. Rounding is always absorbed by
    more noise or a smaller part, never by an excess.
    """
    eps = _checks.positive("eps", eps)
    delta = _checks.open_unit("delta", delta)
    method = check_method(method)
    b = _checks.positive("budget_steps", budget_steps)
    m = _checks.integer("n_queries", n_queries, minimum=0)
    share = _checks.finite("query_share", query_share)
    if m > 0 and not 0.0 < share < 1.0:
        raise ValueError(f"query_share must be in (0, 1) with {m} queries, got {query_share!r}")
    if m == 0 and share != 0.0:
        raise ValueError(f"query_share must be 0 without queries, got {query_share!r}")
    # zcdp_budget is on the safe side: zcdp_to_eps(rho, delta, method) <= eps
    rho = _checks.positive("rho", zcdp_budget(eps, delta=delta, method=method))
    if m > 0:
        s = _query_noise_for(m, _checks.positive("rho_queries", share * rho))
        rho_queries = count_queries_zcdp(m, sigma=s)
    else:
        s, rho_queries = math.inf, 0.0
    exact_rest = Fraction(rho) - Fraction(rho_queries)  # >= 0: rho_queries <= share rho
    rho_gd_target = _checks.positive(
        "rho_gd", nudge_down(lambda r: Fraction(r) <= exact_rest, float(exact_rest))
    )
    sigma = noise_multiplier_for(b, rho_gd_target)
    # rho_gd <= rho_gd_target, so rho_gd + rho_queries <= rho; the conversion of the float sum
    # is checked too (a numerical conversion need not be monotone to the last ulp)
    sigma = nudge_up(
        lambda x: (
            zcdp_to_eps(
                filtered_gd_zcdp(b, noise_multiplier=x) + rho_queries, delta=delta, method=method
            )
            <= eps
        ),
        sigma,
    )
    rho_gd = filtered_gd_zcdp(b, noise_multiplier=sigma)
    return GdPrivacyPlan(
        eps=eps,
        delta=delta,
        method=method,
        rho=rho,
        rho_gd=rho_gd,
        rho_queries=rho_queries,
        noise_multiplier=sigma,
        query_noise_std=s,
    )
