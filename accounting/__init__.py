"""filterlab's accounting library: typed privacy costs, exact curves, mechanisms, filters.

The library knows nothing of experiments, files or plotting. Sub-packages:
``accounting.curves`` (PLD, RDP, zCDP, GDP, domination), ``accounting.mechanisms``
(Gaussian, Laplace, randomized response, Brownian, selection, sparse vector),
``accounting.filters`` (every filter behind one protocol), ``accounting.analysis`` (what is
computed about filters: stopping times, horizons, attacks, guarantees) and ``accounting.audit``.

One import place: every cost, conversion, mechanism and filter that README.md and docs/ name
is importable from ``accounting`` itself (``from accounting import RdpDpFilter``;
tests/docs/test_doc_imports.py checks it); analysis, audit and numerics helpers are imported
from their sub-package (``from accounting.audit import exact_audit``).

Every noise scale is a keyword argument with one spelling: ``sensitivity``, ``sigma``
(Gaussian s.d.), ``scale`` (Laplace), ``sigma_threshold`` and ``sigma_query`` (Above
Threshold), ``noise_multiplier`` (sigma / sensitivity). A ``delta`` beside another number of
an overlapping range (eps, rho, mu) is keyword-only (``zcdp_to_eps(rho, delta=1e-6)``), so
that two swapped numbers are a TypeError, never a silently wrong bound.
"""

from accounting.costs import (
    CostTypeError,
    EpsDelta,
    Gdp,
    ProbabilisticDP,
    PureDP,
    RenyiCurve,
    Zcdp,
)
from accounting.curves.domination import (
    as_tradeoff,
    hockey_stick_dominated,
    is_dominated,
    mixture_below_certificate,
    supremum,
)
from accounting.curves.gdp import (
    GdpProfile,
    gdp_budget,
    gdp_composed_log_delta,
    gdp_composed_tradeoff,
    gdp_delta,
    gdp_eps,
    gdp_log_delta,
    gdp_pure_dp_delta,
    gdp_tradeoff,
    pure_dp_mu,
    smallest_dominating_mu,
    tradeoff_dominating_mu,
)
from accounting.curves.gdp_domination import composition_dominated
from accounting.curves.pld import (
    Pld,
    PureDpPld,
    compose_discretised,
    discretise,
    discretise_continuous,
    self_compose_discretised,
)
from accounting.curves.rdp import (
    DEFAULT_ORDERS,
    DeltaBound,
    EpsBound,
    expost_rdp_to_approximate_dp,
    rdp_budget,
    rdp_to_delta,
    rdp_to_eps,
    rdp_to_pdp,
    rdp_usable_orders,
)
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.curves.zcdp import (
    pure_to_zcdp,
    zcdp_budget,
    zcdp_to_delta,
    zcdp_to_eps,
)
from accounting.filters.base import Analyst, Filter, Query, Record, Transcript, run_interaction
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, WhitehouseFilter
from accounting.filters.expost import ExPostRdpComposition, FilteredSelfReportingComposition
from accounting.filters.gdp import GdpFilter, GdpResidueFilter, gdp_residue
from accounting.filters.individual import (
    IndividualRenyiFilter,
    clip_rows,
    filtered_gaussian_sum,
    gaussian_individual_costs,
)
from accounting.filters.natural import NaturalFilter
from accounting.filters.realisation import (
    InvalidNaiveRealisationFilter,
    RealisationFilter,
    RoundLoss,
    realisation_delta,
)
from accounting.filters.renyi import (
    BudgetWarning,
    PureDpFilterViaZcdp,
    RdpDpFilter,
    RenyiFilter,
    ZcdpFilter,
)
from accounting.mechanisms.bounded_range import exponential_mechanism_eps, exponential_mechanism_rdp
from accounting.mechanisms.calibration import (
    dp_sgd_noise_multiplier,
    gaussian_sigma_composed,
    laplace_scale_composed,
)
from accounting.mechanisms.erasure import binary_erasure_laws
from accounting.mechanisms.filtered_gd import (
    filtered_gd_zcdp,
    noise_multiplier_for,
    plan_filtered_gd,
)
from accounting.mechanisms.finite import FiniteMechanism
from accounting.mechanisms.gaussian import (
    gaussian_delta,
    gaussian_eps,
    gaussian_gdp,
    gaussian_log_delta,
    gaussian_pld,
    gaussian_rdp,
    gaussian_rdp_curve,
    gaussian_sigma,
    gaussian_zcdp,
    gaussian_zcdp_delta,
    gaussian_zcdp_eps,
)
from accounting.mechanisms.laplace import laplace_delta, laplace_eps, laplace_pld, laplace_rdp
from accounting.mechanisms.randomized_response import (
    canonical_laws,
    pure_dp_delta,
    randomized_response_laws,
    randomized_response_pld,
    randomized_response_rdp,
    subsampled_randomized_response,
)
from accounting.mechanisms.selection import (
    above_threshold_ratio,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_above_threshold,
    gaussian_above_threshold_expost_eps,
    gaussian_report_noisy_max,
    gaussian_report_noisy_max_eps,
    laplace_report_noisy_max,
    laplace_report_noisy_max_eps,
    permute_and_flip,
    permute_and_flip_probabilities,
    report_noisy_max_ratio,
)
from accounting.mechanisms.sparse_vector import (
    GaussianAboveThreshold,
    above_threshold_laws,
    gaussian_above_threshold_rdp,
    gaussian_above_threshold_rdp_nonnegative,
    gaussian_above_threshold_rdp_numeric,
    log_stopping_time_moment,
    log_stopping_time_moment_bound,
)
from accounting.mechanisms.subsampled_gaussian import (
    subsampled_gaussian_eps,
    subsampled_gaussian_pld,
    subsampled_gaussian_rdp,
)
from accounting.mechanisms.threshold_checks import (
    SvtThresholdCheck,
    gaussian_check_rdp,
    gaussian_check_sigma,
    svt_check_noise,
    svt_check_noise_for_split,
    svt_check_rdp,
)

__all__ = [
    "AdditiveFilter",
    "AdvancedFilter",
    "Analyst",
    "BudgetWarning",
    "CostTypeError",
    "DEFAULT_ORDERS",
    "DeltaBound",
    "EpsBound",
    "EpsDelta",
    "ExPostRdpComposition",
    "Filter",
    "FilteredSelfReportingComposition",
    "FiniteMechanism",
    "GaussianAboveThreshold",
    "Gdp",
    "GdpFilter",
    "GdpProfile",
    "GdpResidueFilter",
    "IndividualRenyiFilter",
    "InvalidNaiveRealisationFilter",
    "NaturalFilter",
    "PiecewiseLinearTradeoff",
    "Pld",
    "ProbabilisticDP",
    "PureDP",
    "PureDpFilterViaZcdp",
    "PureDpPld",
    "Query",
    "RdpDpFilter",
    "RealisationFilter",
    "Record",
    "RenyiCurve",
    "RenyiFilter",
    "RoundLoss",
    "SvtThresholdCheck",
    "Transcript",
    "WhitehouseFilter",
    "Zcdp",
    "ZcdpFilter",
    "above_threshold_laws",
    "above_threshold_ratio",
    "as_tradeoff",
    "binary_erasure_laws",
    "canonical_laws",
    "clip_rows",
    "compose_discretised",
    "composition_dominated",
    "discretise",
    "discretise_continuous",
    "dp_sgd_noise_multiplier",
    "exponential_mechanism",
    "exponential_mechanism_eps",
    "exponential_mechanism_probabilities",
    "exponential_mechanism_rdp",
    "expost_rdp_to_approximate_dp",
    "filtered_gaussian_sum",
    "filtered_gd_zcdp",
    "gaussian_above_threshold",
    "gaussian_above_threshold_expost_eps",
    "gaussian_above_threshold_rdp",
    "gaussian_above_threshold_rdp_nonnegative",
    "gaussian_above_threshold_rdp_numeric",
    "gaussian_check_rdp",
    "gaussian_check_sigma",
    "gaussian_delta",
    "gaussian_eps",
    "gaussian_gdp",
    "gaussian_individual_costs",
    "gaussian_log_delta",
    "gaussian_pld",
    "gaussian_rdp",
    "gaussian_rdp_curve",
    "gaussian_report_noisy_max",
    "gaussian_report_noisy_max_eps",
    "gaussian_sigma",
    "gaussian_sigma_composed",
    "gaussian_zcdp",
    "gaussian_zcdp_delta",
    "gaussian_zcdp_eps",
    "gdp_budget",
    "gdp_composed_log_delta",
    "gdp_composed_tradeoff",
    "gdp_delta",
    "gdp_eps",
    "gdp_log_delta",
    "gdp_pure_dp_delta",
    "gdp_residue",
    "gdp_tradeoff",
    "hockey_stick_dominated",
    "is_dominated",
    "laplace_delta",
    "laplace_eps",
    "laplace_pld",
    "laplace_rdp",
    "laplace_report_noisy_max",
    "laplace_report_noisy_max_eps",
    "laplace_scale_composed",
    "log_stopping_time_moment",
    "log_stopping_time_moment_bound",
    "mixture_below_certificate",
    "noise_multiplier_for",
    "permute_and_flip",
    "permute_and_flip_probabilities",
    "plan_filtered_gd",
    "pure_dp_delta",
    "pure_dp_mu",
    "pure_to_zcdp",
    "randomized_response_laws",
    "randomized_response_pld",
    "randomized_response_rdp",
    "rdp_budget",
    "rdp_to_delta",
    "rdp_to_eps",
    "rdp_to_pdp",
    "rdp_usable_orders",
    "realisation_delta",
    "report_noisy_max_ratio",
    "run_interaction",
    "self_compose_discretised",
    "smallest_dominating_mu",
    "subsampled_gaussian_eps",
    "subsampled_gaussian_pld",
    "subsampled_gaussian_rdp",
    "subsampled_randomized_response",
    "supremum",
    "svt_check_noise",
    "svt_check_noise_for_split",
    "svt_check_rdp",
    "tradeoff_dominating_mu",
    "zcdp_budget",
    "zcdp_to_delta",
    "zcdp_to_eps",
]
