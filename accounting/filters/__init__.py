"""Privacy filters behind one protocol (see :mod:`accounting.filters.base`).

``docs/filters.md`` lists each filter's guarantee, conditions, source and the test that
audits it. ``InvalidNaiveRealisationFilter`` is a negative control and gives no guarantee;
``NaturalFilter`` is not free in general (residue-filters paper, Cor. 1-4).
"""

from accounting.costs import ProbabilisticDP
from accounting.filters.base import Analyst, Filter, Query, Record, Transcript, run_interaction
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, WhitehouseFilter
from accounting.filters.expost import ExPostRdpComposition, FilteredSelfReportingComposition
from accounting.filters.gdp import GdpFilter, GdpResidueFilter
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

__all__ = [
    "AdditiveFilter",
    "AdvancedFilter",
    "Analyst",
    "BudgetWarning",
    "ExPostRdpComposition",
    "Filter",
    "FilteredSelfReportingComposition",
    "GdpFilter",
    "GdpResidueFilter",
    "IndividualRenyiFilter",
    "InvalidNaiveRealisationFilter",
    "NaturalFilter",
    "ProbabilisticDP",
    "PureDpFilterViaZcdp",
    "Query",
    "RdpDpFilter",
    "RealisationFilter",
    "Record",
    "RenyiFilter",
    "RoundLoss",
    "Transcript",
    "WhitehouseFilter",
    "ZcdpFilter",
    "clip_rows",
    "filtered_gaussian_sum",
    "gaussian_individual_costs",
    "realisation_delta",
    "run_interaction",
]
