"""Rényi DP of the exponential mechanism through its bounded-range property.

The eps-DP exponential mechanism (McSherry and Talwar 2007), Pr[i] proportional to
exp(eps q_i / (2 Delta)), is eps-bounded-range: for neighbours the log-ratio of output
probabilities lies in an interval of width eps (Durfee and Rogers 2019, "Practical
differentially private top-k selection with pay-what-you-get composition"). An
eps-bounded-range mechanism is eps^2/8-zCDP (Cesar and Rogers 2021, "Bounding,
concentrating, and truncating: unifying privacy loss composition for data analytics",
ALT 2021; restated in T. Steinke, "A better privacy analysis of the exponential
mechanism", differentialprivacy.org, 2021; the bound MST uses, McKenna, Miklau and Sheldon
2021), i.e. (alpha, alpha eps^2 / 8)-RDP at every order alpha > 1 (Bun and Steinke 2016,
Def. 1.1: rho-zCDP is (alpha, rho alpha)-RDP). It is also eps-DP (the interval of width eps
contains 0, since both output laws sum to 1), and eps-DP is (alpha, eps)-RDP at every order
(the Rényi divergence is nondecreasing in alpha up to D_inf <= eps: van Erven and Harremoës
2014, Thm. 3; Mironov 2017, Sec. III), so the RDP is min(alpha eps^2 / 8, eps): the first
term for alpha < 8 / eps, the second beyond (at eps = 1 and alpha = 1000, 1 instead of 125).
tests/accounting/mechanisms/test_bounded_range.py checks the bound against exact Rényi
divergences of the mechanism's output distributions.
"""

from __future__ import annotations

import math
from fractions import Fraction

from accounting import _checks
from accounting.numerics import fraction_up, nudge_down

__all__ = ["exponential_mechanism_eps", "exponential_mechanism_rdp"]


def exponential_mechanism_rdp(alpha: float, eps: float) -> float:
    """(alpha, min(alpha eps^2 / 8, eps))-RDP of the eps-DP exponential mechanism.

    Cesar and Rogers 2021 (eps-BR is eps^2/8-zCDP) with Durfee and Rogers 2019
    (the exponential mechanism is eps-BR), capped at eps (eps-DP bounds every order); see
    the module docstring. The exact value rounded up.
    """
    alpha = _checks.order("alpha", alpha)
    eps = _checks.nonnegative("eps", eps)
    return fraction_up(min(Fraction(alpha) * Fraction(eps) ** 2 / 8, Fraction(eps)))


def exponential_mechanism_eps(alpha: float, rdp: float) -> float:
    """The largest eps whose exponential mechanism has RDP <= ``rdp`` at ``alpha``:
    max(sqrt(8 rdp / alpha), rdp), the inverse of :func:`exponential_mechanism_rdp`.

    The first is MST's calibration eps = sqrt(8 rho) (McKenna et al. 2021, written at one
    RDP order instead of in zCDP); the second, from the cap at eps, is larger when
    rdp >= 8 / alpha. Safe side, exactly: the closed form is stepped down by ulps until
    ``exponential_mechanism_rdp(alpha, eps) <= rdp``.
    """
    alpha = _checks.order("alpha", alpha)
    rdp = _checks.positive("rdp", rdp)
    eps = math.sqrt(8.0) * math.sqrt(rdp) / math.sqrt(alpha)  # no under/overflow of 8 rdp
    return nudge_down(lambda e: exponential_mechanism_rdp(alpha, e) <= rdp, max(eps, rdp))
