"""Privacy representations and conversions: PLD, trade-off curves, RDP, zCDP, GDP, domination.

Curves know nothing of mechanisms; a mechanism's guarantee lives in :mod:`accounting.mechanisms`.
"""

from accounting.curves.domination import (
    Profile,
    as_tradeoff,
    hockey_stick_dominated,
    is_dominated,
    supremum,
    supremum_delta,
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
    DiscretisationBiasWarning,
    Pld,
    compose_discretised,
    discretise,
    discretise_continuous,
    self_compose_discretised,
)
from accounting.curves.rdp import (
    DEFAULT_METHOD,
    DEFAULT_ORDERS,
    METHODS,
    DeltaBound,
    EpsBound,
    expost_rdp_to_approximate_dp,
    rdp_budget,
    rdp_to_delta,
    rdp_to_eps,
    rdp_to_pdp,
    rdp_usable_orders,
)
from accounting.curves.tradeoff import (
    PiecewiseLinearTradeoff,
    eps_delta_pld,
)
from accounting.curves.zcdp import (
    pure_to_zcdp,
    zcdp_budget,
    zcdp_to_delta,
    zcdp_to_eps,
)

__all__ = [
    "DEFAULT_METHOD",
    "DEFAULT_ORDERS",
    "DeltaBound",
    "DiscretisationBiasWarning",
    "EpsBound",
    "GdpProfile",
    "METHODS",
    "PiecewiseLinearTradeoff",
    "Pld",
    "Profile",
    "as_tradeoff",
    "compose_discretised",
    "composition_dominated",
    "discretise",
    "discretise_continuous",
    "eps_delta_pld",
    "expost_rdp_to_approximate_dp",
    "gdp_budget",
    "gdp_composed_log_delta",
    "gdp_composed_tradeoff",
    "gdp_delta",
    "gdp_eps",
    "gdp_log_delta",
    "gdp_pure_dp_delta",
    "gdp_tradeoff",
    "hockey_stick_dominated",
    "is_dominated",
    "pure_dp_mu",
    "pure_to_zcdp",
    "rdp_budget",
    "rdp_to_delta",
    "rdp_to_eps",
    "rdp_to_pdp",
    "rdp_usable_orders",
    "self_compose_discretised",
    "smallest_dominating_mu",
    "supremum",
    "supremum_delta",
    "tradeoff_dominating_mu",
    "zcdp_budget",
    "zcdp_to_delta",
    "zcdp_to_eps",
]
