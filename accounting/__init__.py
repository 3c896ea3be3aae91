"""filterlab's accounting library: typed privacy costs, exact curves, mechanisms, filters.

The library knows nothing of experiments, files or plotting. Sub-packages:
``accounting.curves`` (PLD, RDP, zCDP, GDP, domination), ``accounting.mechanisms``
(Gaussian, Laplace, randomized response, Brownian, selection, sparse vector),
``accounting.filters`` (every filter behind one protocol), ``accounting.analysis`` (what is
computed about filters: stopping times, horizons, attacks, guarantees) and ``accounting.audit``.

Every noise scale is a keyword argument with one spelling: ``sensitivity``, ``sigma``
(Gaussian s.d.), ``scale`` (Laplace), ``sigma_threshold`` and ``sigma_query`` (Above
Threshold), ``noise_multiplier`` (sigma / sensitivity).
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
from accounting.curves.gdp import gdp_budget, gdp_delta, gdp_eps, gdp_tradeoff, pure_dp_mu
from accounting.curves.pld import (
    Pld,
    compose_discretised,
    discretise,
    self_compose_discretised,
)
from accounting.curves.rdp import (
    DEFAULT_ORDERS,
    rdp_budget,
    rdp_to_delta,
    rdp_to_eps,
    rdp_to_pdp,
)
from accounting.curves.zcdp import zcdp_budget, zcdp_to_delta, zcdp_to_eps, zcdp_to_eps_optimal
from accounting.filters.renyi import RenyiFilter, ZcdpFilter
from accounting.mechanisms.gaussian import (
    gaussian_delta,
    gaussian_eps,
    gaussian_gdp,
    gaussian_pld,
    gaussian_rdp,
    gaussian_rdp_curve,
    gaussian_sigma,
    gaussian_zcdp,
)
from accounting.mechanisms.laplace import laplace_delta, laplace_eps, laplace_pld, laplace_rdp
from accounting.mechanisms.selection import (
    gaussian_above_threshold_expost_eps,
    gaussian_report_noisy_max_eps,
    laplace_report_noisy_max_eps,
)
from accounting.mechanisms.sparse_vector import GaussianAboveThreshold
from accounting.mechanisms.subsampled_gaussian import (
    subsampled_gaussian_eps,
    subsampled_gaussian_pld,
    subsampled_gaussian_rdp,
)

__all__ = [
    "CostTypeError",
    "DEFAULT_ORDERS",
    "EpsDelta",
    "GaussianAboveThreshold",
    "Gdp",
    "Pld",
    "ProbabilisticDP",
    "PureDP",
    "RenyiCurve",
    "RenyiFilter",
    "Zcdp",
    "ZcdpFilter",
    "compose_discretised",
    "discretise",
    "gaussian_above_threshold_expost_eps",
    "gaussian_delta",
    "gaussian_eps",
    "gaussian_gdp",
    "gaussian_pld",
    "gaussian_rdp",
    "gaussian_rdp_curve",
    "gaussian_report_noisy_max_eps",
    "gaussian_sigma",
    "gaussian_zcdp",
    "gdp_budget",
    "gdp_delta",
    "gdp_eps",
    "gdp_tradeoff",
    "laplace_delta",
    "laplace_eps",
    "laplace_pld",
    "laplace_rdp",
    "laplace_report_noisy_max_eps",
    "pure_dp_mu",
    "rdp_budget",
    "rdp_to_delta",
    "rdp_to_eps",
    "rdp_to_pdp",
    "self_compose_discretised",
    "subsampled_gaussian_eps",
    "subsampled_gaussian_pld",
    "subsampled_gaussian_rdp",
    "zcdp_budget",
    "zcdp_to_delta",
    "zcdp_to_eps",
    "zcdp_to_eps_optimal",
]
