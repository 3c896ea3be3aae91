"""Validity audits of privacy filters: exact enumeration, worst-case search, Monte Carlo.

An audit fixes two neighbouring datasets 0 and 1, mechanisms whose output laws under both
are known, and an analyst, and compares the transcript's hockey-stick (or Rényi) profile,
in both directions, with what the filter promises (:mod:`~accounting.audit.promise`).

* :mod:`~accounting.audit.exact`: every transcript of one deterministic analyst;
* :mod:`~accounting.audit.worst_case`: the exact worst case over all analysts with a menu;
* :mod:`~accounting.audit.search`: greedy and seeded random analysts, each audited exactly;
* :mod:`~accounting.audit.monte_carlo`: sampled interactions and a confidence bound.

The mechanisms' laws live in :mod:`accounting.mechanisms` (e.g. ``FiniteMechanism``).
"""

from accounting.audit.exact import (
    DiscreteAnalyst,
    DiscreteQuery,
    exact_audit,
    hockey_stick,
    renyi_divergence,
    transcript_distributions,
)
from accounting.audit.monte_carlo import (
    ContinuousAnalyst,
    ContinuousQuery,
    above_threshold_query,
    gaussian_query,
    monte_carlo_audit,
    sample_losses,
)
from accounting.audit.promise import BACKWARD, FORWARD, AuditPromise, AuditResult, Promise
from accounting.audit.search import GreedyAnalyst, RandomAnalyst, search_audit
from accounting.audit.worst_case import PolicyAnalyst, StateKey, history_key, worst_case_audit
from accounting.mechanisms.randomized_response import canonical_laws, randomized_response_laws
from accounting.mechanisms.sparse_vector import above_threshold_laws

__all__ = [
    "BACKWARD",
    "FORWARD",
    "AuditPromise",
    "AuditResult",
    "ContinuousAnalyst",
    "ContinuousQuery",
    "DiscreteAnalyst",
    "DiscreteQuery",
    "GreedyAnalyst",
    "PolicyAnalyst",
    "Promise",
    "RandomAnalyst",
    "StateKey",
    "above_threshold_laws",
    "above_threshold_query",
    "canonical_laws",
    "exact_audit",
    "gaussian_query",
    "history_key",
    "hockey_stick",
    "monte_carlo_audit",
    "randomized_response_laws",
    "renyi_divergence",
    "sample_losses",
    "search_audit",
    "transcript_distributions",
    "worst_case_audit",
]
