"""Mechanisms and their exact privacy guarantees (PLD, RDP, zCDP, GDP, (eps, delta)).

Finite-output mechanisms on two neighbouring datasets are :class:`FiniteMechanism`; the
selection and sparse-vector bounds, and the App. D threshold checks of Räisä et al., are
here too. The numerical engine of the selection bounds is
:mod:`accounting.mechanisms.selection_numerics`, its mpmath and Monte Carlo references
:mod:`accounting.mechanisms.selection_reference`.
"""

from accounting.mechanisms.brownian import (
    NoiseReductionRun,
    brownian_mechanism,
    fixed_schedule,
    noise_variance,
    precision_weighted_gaussian,
)
from accounting.mechanisms.calibration import (
    dp_sgd_noise_multiplier,
    gaussian_sigma_composed,
    laplace_scale_composed,
)
from accounting.mechanisms.erasure import ERASED, binary_erasure_laws
from accounting.mechanisms.filtered_gd import (
    GdPrivacyPlan,
    count_queries_zcdp,
    filtered_gd_zcdp,
    noise_multiplier_for,
    plan_filtered_gd,
)
from accounting.mechanisms.finite import (
    FiniteMechanism,
)
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
from accounting.mechanisms.laplace import (
    laplace_delta,
    laplace_eps,
    laplace_pld,
    laplace_rdp,
)
from accounting.mechanisms.randomized_response import (
    canonical_laws,
    pure_dp_delta,
    randomized_response_laws,
    randomized_response_pld,
    randomized_response_rdp,
    subsampled_randomized_response,
)
from accounting.mechanisms.selection import (
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
    SvtCheckNoise,
    SvtThresholdCheck,
    gaussian_check_rdp,
    gaussian_check_sigma,
    svt_check_noise,
    svt_check_noise_for_split,
    svt_check_rdp,
)

__all__ = [
    "ERASED",
    "FiniteMechanism",
    "GaussianAboveThreshold",
    "GdPrivacyPlan",
    "NoiseReductionRun",
    "SvtCheckNoise",
    "SvtThresholdCheck",
    "above_threshold_laws",
    "binary_erasure_laws",
    "brownian_mechanism",
    "canonical_laws",
    "count_queries_zcdp",
    "dp_sgd_noise_multiplier",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "filtered_gd_zcdp",
    "fixed_schedule",
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
    "laplace_delta",
    "laplace_eps",
    "laplace_pld",
    "laplace_rdp",
    "laplace_report_noisy_max",
    "laplace_report_noisy_max_eps",
    "laplace_scale_composed",
    "log_stopping_time_moment",
    "log_stopping_time_moment_bound",
    "noise_multiplier_for",
    "noise_variance",
    "permute_and_flip",
    "permute_and_flip_probabilities",
    "plan_filtered_gd",
    "precision_weighted_gaussian",
    "pure_dp_delta",
    "randomized_response_laws",
    "randomized_response_pld",
    "randomized_response_rdp",
    "subsampled_gaussian_eps",
    "subsampled_gaussian_pld",
    "subsampled_gaussian_rdp",
    "subsampled_randomized_response",
    "svt_check_noise",
    "svt_check_noise_for_split",
    "svt_check_rdp",
]
