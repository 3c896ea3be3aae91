"""Audit declarations for the filter contract, and the menus and analysts they share.

A filter's contract class (tests/support/filter_contract.py) declares its audits as values
of the kinds below; each names the filter it builds, what it promises (a ``Promise`` of
hockey-stick points or a ``RenyiCurve``) and the audit of accounting/audit/ that checks it:
``Exact`` (every transcript of one deterministic analyst), ``WorstCase`` (all deterministic
adaptive analysts with a finite menu), ``Search`` (seeded random and greedy analysts, each
audited exactly), ``MonteCarlo`` (continuous mechanisms) and ``ThresholdSearch`` (seeded
random threshold analysts, Monte Carlo). ``run`` asserts that the audit passes and then
applies ``check`` (tightness: how close the worst analyst came to the promise).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest

from accounting.analysis.realisation_analysts import realised_losses
from accounting.audit import (
    AuditPromise,
    AuditResult,
    ContinuousQuery,
    DiscreteQuery,
    exact_audit,
    gaussian_query,
    monte_carlo_audit,
    randomized_response_laws,
    search_audit,
    worst_case_audit,
)
from accounting.audit.worst_case import StateKey, history_key
from accounting.costs import EpsDelta, Gdp, RenyiCurve
from accounting.filters.base import Filter
from accounting.filters.expost import ProbabilisticDP
from accounting.filters.individual import IndividualRenyiFilter, gaussian_individual_costs
from accounting.filters.realisation import RoundLoss
from accounting.mechanisms.randomized_response import randomized_response_rdp

Check = Callable[[AuditResult], None]


def _no_check(result: AuditResult) -> None:
    """No tightness claim beyond passing."""


@dataclass(frozen=True)
class Exact:
    """``exact_audit``: every transcript of one deterministic analyst over finite mechanisms."""

    make: Callable[[], Filter]
    analyst: Callable[[tuple], DiscreteQuery | None]
    promise: AuditPromise
    max_rounds: int = 64
    check: Check = _no_check

    def run(self) -> AuditResult:
        return _passed(exact_audit(self.make, self.analyst, self.promise, self.max_rounds), self)


@dataclass(frozen=True)
class WorstCase:
    """``worst_case_audit``: the exact maximum over all deterministic adaptive analysts."""

    make: Callable[[], Filter]
    menu: Sequence[DiscreteQuery]
    promise: AuditPromise
    depth: int
    state_key: StateKey = history_key
    confirm: bool = True
    check: Check = _no_check

    def run(self) -> AuditResult:
        result = worst_case_audit(
            self.make,
            self.menu,
            self.promise,
            self.depth,
            confirm=self.confirm,
            state_key=self.state_key,
        )
        return _passed(result, self)


@dataclass(frozen=True)
class Search:
    """``search_audit``: seeded random and greedy analysts with a menu, each audited exactly."""

    make: Callable[[], Filter]
    menu: Sequence[DiscreteQuery]
    promise: AuditPromise
    seed: int
    rounds: int
    n_random: int
    check: Check = _no_check

    def run(self) -> AuditResult:
        rng = np.random.default_rng(self.seed)
        result = search_audit(
            self.make, self.menu, self.promise, rng, rounds=self.rounds, n_random=self.n_random
        )
        return _passed(result, self)


@dataclass(frozen=True)
class MonteCarlo:
    """``monte_carlo_audit``: n seeded interactions of an adaptive analyst, both datasets."""

    make: Callable[[], Filter]
    analyst: Callable[[tuple], ContinuousQuery | None]
    promise: AuditPromise
    n: int
    seed: int
    check: Check = _no_check

    def run(self) -> AuditResult:
        result = monte_carlo_audit(
            self.make, self.analyst, self.promise, n=self.n, rng=np.random.default_rng(self.seed)
        )
        return _passed(result, self)


@dataclass(frozen=True)
class ThresholdSearch:
    """Seeded random threshold analysts of Gaussian queries, each audited by Monte Carlo.

    Each try draws a threshold t ~ N(0, 1) and two noise scales from ``sigmas``; the analyst
    asks the first scale's query after an output above t, the second's otherwise, for
    ``rounds`` queries, priced by ``price(sigma)``. One generator (``seed``) drives the
    draws and all ``tries`` audits in turn. Returns the worst result.
    """

    make: Callable[[], Filter]
    price: Callable[[float], Any]
    promise: AuditPromise
    sigmas: tuple[float, ...]
    tries: int
    rounds: int
    n: int
    seed: int
    check: Check = _no_check

    def run(self) -> AuditResult:
        rng = np.random.default_rng(self.seed)
        worst = None
        for _ in range(self.tries):
            threshold = float(rng.normal())
            high, low = (float(s) for s in rng.choice(self.sigmas, size=2))
            queries = {s: gaussian_query(self.price(s), sigma=s) for s in (high, low)}

            def analyst(
                outputs: tuple,
                t: float = threshold,
                pick: dict = queries,
                h: float = high,
                lo: float = low,
            ) -> ContinuousQuery | None:
                if len(outputs) >= self.rounds:
                    return None
                return pick[h] if outputs and outputs[-1] > t else pick[lo]

            result = monte_carlo_audit(self.make, analyst, self.promise, self.n, rng)
            assert result.passed, result
            worst = result if worst is None or result.excess > worst.excess else worst
        assert worst is not None
        self.check(worst)
        return worst


Audit = Exact | WorstCase | Search | MonteCarlo | ThresholdSearch


def _passed(result: AuditResult, audit: Audit) -> AuditResult:
    assert result.passed, result
    audit.check(result)
    return result


def observed_near(value: float, tol: float) -> Check:
    """Tightness: the worst point measured ``value`` (to ``tol``, absolute)."""

    def check(result: AuditResult) -> None:
        assert abs(result.observed - value) <= tol, result.observed

    return check


def observed_above(value: float) -> Check:
    """Tightness: some analyst comes within ``value`` of the promise (the audit is not idle)."""

    def check(result: AuditResult) -> None:
        assert result.observed > value, result.observed

    return check


def confirmed(rel_tol: float | None = None, abs_tol: float | None = None) -> Check:
    """The extracted worst analyst, replayed by exact enumeration, gives the same value."""

    def check(result: AuditResult) -> None:
        want = pytest.approx(result.observed, rel=rel_tol, abs=abs_tol)
        assert result.detail["confirmed"] == want

    return check


def all_of(*checks: Check) -> Check:
    def check(result: AuditResult) -> None:
        for c in checks:
            c(result)

    return check


# ----------------------------------------------------------------------------- menus and analysts

#: Hockey-stick points of GDP promises.
GDP_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
#: Orders at which zCDP promises are audited as RDP.
ZCDP_ORDERS = (1.5, 2.0, 4.0, 8.0, 16.0, 32.0)
#: Randomized-response strengths of the pure-DP menus.
RR_EPS = (0.3, 0.6)


def mechanism(laws: tuple[np.ndarray, np.ndarray], cost: object, name: str = "") -> DiscreteQuery:
    return DiscreteQuery(cost, laws[0], laws[1], name=name)


def small_rr_menu(*eps: float) -> list[DiscreteQuery]:
    return [mechanism(randomized_response_laws(e), EpsDelta(e)) for e in eps]


def rdp_menu(orders: Sequence[float], rr: Sequence[float] = (0.3, 0.6, 1.0)) -> list[DiscreteQuery]:
    return [
        mechanism(
            randomized_response_laws(e),
            RenyiCurve.from_function(lambda a, e=e: randomized_response_rdp(a, e), orders),
        )
        for e in rr
    ]


def multiset(filt: Filter) -> Hashable:
    """State key of filters whose decisions depend only on the multiset of accepted costs.

    True of the additive, advanced, Whitehouse, Rényi, zCDP and naive GDP filters: each
    compares exact sums over the accepted costs with a budget (see their _admit).
    """
    return tuple(sorted(Counter(filt.accepted_costs).items(), key=repr))


def repeat(query: object, rounds: int) -> Callable[[tuple], object]:
    return lambda history: query if len(history) < rounds else None


def gaussian_gdp_analyst(rounds: int = 16) -> Callable[[tuple], ContinuousQuery | None]:
    """Adaptive: a precise query (sigma 2) after a high output, a noisy one (sigma 4) else.

    mu_i^2 in {1/4, 1/16} fill a budget of 1 exactly on most paths.
    """
    precise, noisy = gaussian_query(Gdp(0.5), sigma=2.0), gaussian_query(Gdp(0.25), sigma=4.0)

    def analyst(outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= rounds:
            return None
        return precise if outputs and outputs[-1] > 0.5 else noisy

    return analyst


# ----------------------------------------------------------------------------- realisation level


def pair_report(query: DiscreteQuery) -> DiscreteQuery:
    """Tell a realisation-level filter the realised losses of pairs (0, 1) and (1, 0)."""
    return replace(query, report=lambda o: realised_losses(query.p, query.q, o))


def realisation_mechanism(laws: tuple[np.ndarray, np.ndarray], name: str = "") -> DiscreteQuery:
    """A finite mechanism priced by its loss laws and reporting its realised losses."""
    return pair_report(mechanism(laws, RoundLoss.from_distributions(*laws), name))


def realisation_state(filt: Filter) -> Hashable:
    """State of the realisation-level filters, read from their public history.

    Both keep the cumulative loss per pair; Algorithm 1 also decides the next admission at
    commit time from (step, last cost, cumulative loss before the last observation).
    """
    history = filt.history
    now = np.round(filt.cumulative_loss, 12)  # type: ignore[attr-defined]
    if not history:
        return (0, None, (), tuple(now))
    last = history[-1]
    with np.errstate(invalid="ignore"):
        before = np.round(filt.cumulative_loss - np.asarray(last.observed, float), 12)  # type: ignore[attr-defined]
    return (len(history), last.cost, tuple(np.nan_to_num(before, nan=np.inf)), tuple(now))


def gaussian_realisation_query(sigma: float) -> ContinuousQuery:
    query = gaussian_query(RoundLoss.gaussian(sigma=sigma), sigma=sigma)
    return replace(query, report=lambda y: (query.log_ratio(y), -query.log_ratio(y)))


# ----------------------------------------------------------------------------- FSRC and ex-post RDP


def fsrc_mechanism(laws: tuple[np.ndarray, np.ndarray], delta: float = 0.0) -> DiscreteQuery:
    """Priced by its pDP (eps_max, delta) and reporting the ex-post loss |L(o)|.

    eps_max is the smallest level with P_x(L > eps_max) <= delta in both orderings.
    """
    p, q = laws
    with np.errstate(divide="ignore"):
        loss = np.log(p) - np.log(q)
    eps_max = 0.0
    for law, sign in ((p, 1.0), (q, -1.0)):
        order = np.argsort(-sign * loss)
        tail = np.cumsum(law[order])
        for k in range(order.size):
            if tail[k] > delta and law[order[k]] > 0:
                eps_max = max(eps_max, float(sign * loss[order[k]]))
                break
    query = mechanism(laws, ProbabilisticDP(eps_max, delta=delta))
    return replace(query, report=lambda o: float(abs(loss[o])))


def alarm_laws(delta: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Outputs 1 w.p. delta on D and delta e^-c on D' (else 0): the FSRC counterexample."""
    return np.array([1 - delta, delta]), np.array([1 - delta * math.exp(-c), delta * math.exp(-c)])


def expost_query(
    mech: tuple[np.ndarray, np.ndarray], check: tuple[np.ndarray, np.ndarray], cost: RenyiCurve
) -> DiscreteQuery:
    """Mechanism output y and stopping-rule answer c (1 = halt) as one output 2 y + c."""
    return DiscreteQuery(
        cost,
        np.outer(mech[0], check[0]).ravel(),
        np.outer(mech[1], check[1]).ravel(),
        report=lambda o: bool(o % 2),
    )


# ----------------------------------------------------------------------------- individual filter


class Unfiltered(Filter):
    """A pass-through filter, for mechanisms that carry their own filter (individual)."""

    cost_types = (object,)

    def __init__(self) -> None:
        super().__init__(())

    def _admit(self, cost: object) -> tuple[()] | None:
        return ()


class IndividualAnalyst:
    """Gaussian sum queries on D (with point i) vs D' (without), adaptively chosen.

    The point's contribution v_t is 1.0 after a high output, 0.5 otherwise; Algorithm 2
    includes it only while its individual zCDP stays within ``budget``. The individual
    filter is a deterministic function of the outputs, so it runs inside the analyst and
    the audit driver needs no filter of its own. (The filter of the current path is kept
    between calls; any other history replays it from scratch.)
    """

    def __init__(self, budget: float, sigma: float, rounds: int) -> None:
        self.budget, self.sigma, self.rounds = budget, sigma, rounds
        self.null = ContinuousQuery(
            None, lambda d, rng: sigma * float(rng.standard_normal()), lambda y: 0.0
        )
        self.contributes = {v: gaussian_query(None, sigma=sigma, sensitivity=v) for v in (0.5, 1.0)}
        self._path: tuple = ()
        self._filter = IndividualRenyiFilter(1, budget)

    def _step(self, previous: float | None) -> ContinuousQuery:
        v = 1.0 if previous is not None and previous > 0.5 else 0.5
        costs = gaussian_individual_costs(np.array([[v]]), sigma=self.sigma)
        return self.contributes[v] if self._filter.request(costs)[0] else self.null

    def __call__(self, outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= self.rounds:
            return None
        if not outputs or outputs[:-1] != self._path:
            self._filter = IndividualRenyiFilter(1, self.budget)
            for t in range(len(outputs)):
                self._step(outputs[t - 1] if t else None)
        self._path = outputs
        return self._step(outputs[-1] if outputs else None)
