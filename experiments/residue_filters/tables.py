"""The tables of the residue-filter experiment (Regehr et al.): one function per figure.

Everything is exact and deterministic: no table draws from ``rng``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from accounting.analysis.horizon import queries_admitted
from accounting.analysis.natural_attack import crosscheck_natural_filter_cost, natural_filter_cost
from accounting.costs import PureDP
from accounting.curves.domination import Profile, supremum
from accounting.curves.gdp import (
    GdpProfile,
    gdp_composed_tradeoff,
    gdp_tradeoff,
    pure_dp_mu,
)
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.gdp import GdpFilter, GdpResidueFilter, gdp_residue
from accounting.mechanisms.randomized_response import (
    randomized_response_pld,
    subsampled_randomized_response,
)
from experiments.common.job import Job
from experiments.residue_filters.schema import Params

log = logging.getLogger(__name__)

#: Largest disagreement allowed between the exact cost curve and the adversary's transcript.
CROSSCHECK_TOL = 1e-9


def curve_rows(panel: str, curve: str, alpha: np.ndarray, beta: np.ndarray | float) -> pd.DataFrame:
    return pd.DataFrame({"panel": panel, "curve": curve, "alpha": alpha, "beta": beta})


def pl_rows(panel: str, curve: str, pl: PiecewiseLinearTradeoff) -> pd.DataFrame:
    """A piecewise-linear curve is exactly its vertices."""
    return curve_rows(panel, curve, pl.alpha, pl.beta)


# --------------------------------------------------------------------------- Fig. 1


def fig1_regime(
    name: str, mu: float, eps: float, alpha: np.ndarray, n_thresholds: int, rtol: float
) -> pd.DataFrame:
    """Budget, query, naive and residue updates, and residue (x) query for one regime."""
    mu_q = pure_dp_mu(eps)
    naive = math.sqrt(mu * mu - mu_q * mu_q)
    nu = gdp_residue(mu, PureDP(eps), rtol=rtol)
    reach = mu * mu / 2.0 + 8.0 * mu + eps
    alpha_c, beta_c = gdp_composed_tradeoff(
        np.linspace(-reach, reach, n_thresholds), nu, randomized_response_pld(eps)
    )
    frames = [
        curve_rows(name, "budget", alpha, gdp_tradeoff(alpha, mu)),
        pl_rows(name, "query", PiecewiseLinearTradeoff.pure_dp(eps)),
        curve_rows(name, "naive", alpha, gdp_tradeoff(alpha, naive)),
        curve_rows(name, "residue", alpha, gdp_tradeoff(alpha, nu)),
        curve_rows(name, "residue+query", alpha_c[::-1], beta_c[::-1]),
    ]
    df = pd.concat(frames, ignore_index=True)
    budget_beta = gdp_tradeoff(df["alpha"].to_numpy(), mu)
    return df.assign(
        budget_beta=budget_beta,
        gap=df["beta"] - budget_beta,
        mu=mu,
        eps=eps,
        mu_query=mu_q,
        nu_naive=naive,
        nu_residue=nu,
    )


def fig1_table(job: Job, params: Params, rng: np.random.Generator) -> pd.DataFrame:
    alpha = np.linspace(0.0, 1.0, int(params.alpha_points))
    frames = [
        fig1_regime(
            r.name,
            float(r.mu),
            float(r.eps),
            alpha,
            int(params.fig1.thresholds),
            float(params.fig1.rtol),
        )
        for r in params.fig1.regimes
    ]
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- Figs. 2 and 3


def cost_panel(
    panel: str,
    budget: Profile,
    queries: Sequence[PiecewiseLinearTradeoff],
    rounds: Sequence[int],
    shown: Sequence[tuple[str, PiecewiseLinearTradeoff]],
    alpha: np.ndarray,
    check_eps: np.ndarray,
) -> pd.DataFrame:
    """Budget, shown queries, their supremum and the worst-case cost for each round count.

    Every curve is evaluated on the alpha grid joined with all vertices of the panel's
    piecewise-linear curves, so those curves are exact in the table; ``gap`` is the curve
    minus the budget's curve (a cost with gap < 0 somewhere exceeds the budget).
    """
    sup = supremum(queries)
    costs = {r: natural_filter_cost(budget, queries, rounds=r) for r in rounds}
    curves = [(name, q) for name, q in shown] + [("supremum", sup)]
    pieces = [alpha, sup.alpha] + [q.alpha for _, q in shown] + [c.alpha for c in costs.values()]
    if isinstance(budget, PiecewiseLinearTradeoff):
        pieces.append(budget.alpha)
    points = np.unique(np.concatenate(pieces))
    budget_beta = np.asarray(budget.tradeoff(points))
    frames = [curve_rows(panel, "budget", points, budget_beta)]
    frames += [curve_rows(panel, name, points, q.tradeoff(points)) for name, q in curves]
    for r, cost in costs.items():
        err = (
            crosscheck_natural_filter_cost(budget, queries, cost, check_eps, CROSSCHECK_TOL)
            if r == 2
            else float("nan")
        )
        beta = cost.tradeoff(points)
        frames.append(
            curve_rows(panel, f"cost, {r} rounds", points, beta).assign(
                rounds=r, excess=float(np.max(budget_beta - beta)), crosscheck_err=err
            )
        )
    df = pd.concat(frames, ignore_index=True)
    return df.assign(gap=df["beta"] - np.tile(budget_beta, len(frames)))


def eps_delta_queries(
    pairs: Sequence[Sequence[float]],
) -> tuple[list[PiecewiseLinearTradeoff], list[tuple[str, PiecewiseLinearTradeoff]]]:
    """(eps, delta)-DP queries as exact curves, and the same curves labelled for the table."""
    queries = [PiecewiseLinearTradeoff.eps_delta(float(e), delta=float(d)) for e, d in pairs]
    return queries, [(f"({e:g}, {d:g})-DP", q) for (e, d), q in zip(pairs, queries, strict=True)]


def fig2_table(job: Job, params: Params, rng: np.random.Generator) -> pd.DataFrame:
    alpha = np.linspace(0.0, 1.0, int(params.alpha_points))
    check = np.linspace(params.check_eps.lo, params.check_eps.hi, params.check_eps.n)
    a = params.fig2.a
    queries, shown = eps_delta_queries(a.queries)
    budget_eps, budget_delta = map(float, a.budget)
    panel_a = cost_panel(
        "a",
        PiecewiseLinearTradeoff.eps_delta(budget_eps, delta=budget_delta),
        queries,
        [int(a.rounds)],
        shown,
        alpha,
        check,
    )
    b = params.fig2.b
    pure = [PiecewiseLinearTradeoff.pure_dp(float(e)) for e in b.query_eps]
    budget = PiecewiseLinearTradeoff.pure_dp(float(b.budget_rr[0])).compose(
        PiecewiseLinearTradeoff.pure_dp(float(b.budget_rr[1]))
    )
    shown_b = [(f"{float(e):g}-DP", PiecewiseLinearTradeoff.pure_dp(float(e))) for e in b.shown_eps]
    panel_b = cost_panel("b", budget, pure, list(b.rounds), shown_b, alpha, check)
    return pd.concat([panel_a, panel_b], ignore_index=True)


def fig3_table(job: Job, params: Params, rng: np.random.Generator) -> pd.DataFrame:
    alpha = np.linspace(0.0, 1.0, int(params.alpha_points))
    check = np.linspace(params.check_eps.lo, params.check_eps.hi, params.check_eps.n)
    a = params.fig3.a
    rr = [
        PiecewiseLinearTradeoff.pure_dp(float(e))
        for e in np.linspace(a.rr_eps.lo, a.rr_eps.hi, a.rr_eps.n)
    ]
    sub = [
        PiecewiseLinearTradeoff.from_pld(
            subsampled_randomized_response(float(q), float(a.subsampled.eps)).pld()
        )
        for q in np.geomspace(a.subsampled.q_lo, a.subsampled.q_hi, a.subsampled.n)
    ]
    shown = [("RR family (max)", rr[-1]), ("subsampled RR (max)", sub[-1])]
    panel_a = cost_panel("a", GdpProfile(float(a.mu)), rr + sub, [2], shown, alpha, check)
    b = params.fig3.b
    queries, shown_b = eps_delta_queries(b.queries)
    panel_b = cost_panel(
        "b", GdpProfile(float(b.mu), float(b.reveal)), queries, [2], shown_b, alpha, check
    )
    return pd.concat([panel_a, panel_b], ignore_index=True)


# --------------------------------------------------------------------------- query counts


def admitted(filt: GdpFilter | GdpResidueFilter, eps: float, cap: int) -> int:
    """Number of PureDP(eps) queries the filter accepts before it halts (at most cap)."""
    n = queries_admitted(filt, PureDP(eps), cap)
    if n == cap:
        raise RuntimeError(f"query cap {cap} reached at eps={eps}: raise counts.cap")
    return n


def counts_table(job: Job, params: Params, rng: np.random.Generator) -> pd.DataFrame:
    c = params.counts
    grid = np.round(np.geomspace(c.eps.lo, c.eps.hi, c.eps.n), 6)
    rows = []
    settings = [(float(mu), float(e)) for mu in c.mus for e in grid]
    for mu, eps in tqdm(settings, desc="counts"):
        naive = admitted(GdpFilter(mu), eps, int(c.cap))
        residue_filter = GdpResidueFilter(mu, rtol=float(c.rtol))
        residue = admitted(residue_filter, eps, int(c.cap))
        mu_q = pure_dp_mu(eps)
        rows += [
            {"mu": mu, "eps": eps, "filter": "naive", "count": naive, "mu_query": mu_q},
            {"mu": mu, "eps": eps, "filter": "residue", "count": residue, "mu_query": mu_q},
        ]
    return pd.DataFrame(rows)
