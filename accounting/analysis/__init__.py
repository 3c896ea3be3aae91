"""Analysis of filters: stopping times, horizons, attacks and guarantees (no filters here).

``accounting.filters`` holds the filters; this package holds what is computed about them,
as Opacus keeps ``accountants/analysis`` apart from its accountants: survival of the
realisation-level filter (:mod:`~accounting.analysis.survival`) and its Gaussian closed
forms (:mod:`~accounting.analysis.realisation_gaussian`, Taylor et al., Prop. 1), analysts
that drive it (:mod:`~accounting.analysis.realisation_analysts`), horizons of
mechanism-level filters (:mod:`~accounting.analysis.horizon`), the natural filter's true
cost and adversary (:mod:`~accounting.analysis.natural_attack`) and its Thm. 9 guarantee
(:mod:`~accounting.analysis.natural_guarantee`). It may import every lower layer (curves,
mechanisms, filters); nothing below imports it.
"""

from accounting.analysis.horizon import (
    additive_stopping_time,
    advanced_stopping_time,
    largest_horizon,
    queries_admitted,
    rdp_stopping_time,
)
from accounting.analysis.natural_attack import (
    AdaptiveAttack,
    adaptive_attack,
    adaptive_attacks,
    crosscheck_natural_filter_cost,
    natural_filter_cost,
)
from accounting.analysis.natural_guarantee import natural_filter_guarantee
from accounting.analysis.realisation_analysts import (
    gaussian_counting_analyst,
    realised_losses,
    repeated_query_analyst,
)
from accounting.analysis.realisation_gaussian import (
    gaussian_first_step_ok,
    gaussian_kappa,
    gaussian_parameters,
    gaussian_stopping_times,
)
from accounting.analysis.survival import (
    adaptive_rr_transcripts,
    pure_dp_epsilons,
    realisation_survival_mc,
    realisation_survival_quadrature,
    survival_from_times,
    survival_within_budget,
)

__all__ = [
    "AdaptiveAttack",
    "adaptive_attack",
    "adaptive_attacks",
    "adaptive_rr_transcripts",
    "additive_stopping_time",
    "advanced_stopping_time",
    "crosscheck_natural_filter_cost",
    "gaussian_counting_analyst",
    "gaussian_first_step_ok",
    "gaussian_kappa",
    "gaussian_parameters",
    "gaussian_stopping_times",
    "largest_horizon",
    "natural_filter_cost",
    "natural_filter_guarantee",
    "pure_dp_epsilons",
    "queries_admitted",
    "rdp_stopping_time",
    "realisation_survival_mc",
    "realisation_survival_quadrature",
    "realised_losses",
    "repeated_query_analyst",
    "survival_from_times",
    "survival_within_budget",
]
