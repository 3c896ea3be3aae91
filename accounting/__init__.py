"""filterlab's accounting library: typed privacy costs, exact curves, mechanisms, filters.

The library knows nothing of experiments, files or plotting. Sub-packages:
``accounting.curves`` (PLD, RDP, zCDP, GDP, domination), ``accounting.mechanisms``
(Gaussian, Laplace, randomized response, Brownian, selection, sparse vector),
``accounting.filters`` (every filter behind one protocol), ``accounting.analysis`` (what is
computed about filters: stopping times, horizons, attacks, guarantees) and ``accounting.audit``.
"""

from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import gdp_delta, gdp_eps, gdp_tradeoff, pure_dp_mu
from accounting.curves.pld import Pld, self_compose_discretised
from accounting.curves.rdp import DEFAULT_ORDERS, rdp_to_delta, rdp_to_eps
from accounting.curves.zcdp import zcdp_to_eps, zcdp_to_eps_optimal
from accounting.filters.renyi import RenyiFilter, ZcdpFilter
from accounting.mechanisms.gaussian import (
    gaussian_delta,
    gaussian_eps,
    gaussian_gdp,
    gaussian_pld,
    gaussian_rdp,
    gaussian_sigma,
    gaussian_zcdp,
)
from accounting.mechanisms.selection import (
    gaussian_above_threshold_expost_eps,
    gaussian_report_noisy_max_eps,
)
from accounting.mechanisms.subsampled_gaussian import (
    subsampled_gaussian_eps,
    subsampled_gaussian_pld,
    subsampled_gaussian_rdp,
)

__all__ = [
    "DEFAULT_ORDERS",
    "EpsDelta",
    "Gdp",
    "Pld",
    "PureDP",
    "RenyiCurve",
    "RenyiFilter",
    "Zcdp",
    "ZcdpFilter",
    "gaussian_above_threshold_expost_eps",
    "gaussian_delta",
    "gaussian_eps",
    "gaussian_gdp",
    "gaussian_pld",
    "gaussian_rdp",
    "gaussian_report_noisy_max_eps",
    "gaussian_sigma",
    "gaussian_zcdp",
    "gdp_delta",
    "gdp_eps",
    "gdp_tradeoff",
    "pure_dp_mu",
    "rdp_to_delta",
    "rdp_to_eps",
    "self_compose_discretised",
    "subsampled_gaussian_eps",
    "subsampled_gaussian_pld",
    "subsampled_gaussian_rdp",
    "zcdp_to_eps",
    "zcdp_to_eps_optimal",
]
