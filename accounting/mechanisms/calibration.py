"""Calibrations: the noise that meets a target (eps, delta), as the field asks for it.

* :func:`dp_sgd_noise_multiplier`: DP-SGD's noise multiplier for ``steps`` Poisson-subsampled
  Gaussian steps (Opacus ``get_noise_multiplier``; dp_accounting
  ``get_smallest_subsampled_gaussian_noise``), by RDP or by PLD;
* :func:`gaussian_sigma_composed`: the Gaussian noise for ``k`` queries
  (dp_accounting ``get_smallest_gaussian_noise``);
* :func:`laplace_scale_composed`: the Laplace scale for ``k`` queries
  (dp_accounting ``get_smallest_laplace_noise``).

Always on the safe side: each returns a noise whose certified cost (a bound that is never
below the exact one: the library's RDP curve and conversion, its dominating grid PLD, or an
exact closed form) is within the target. Where no closed form exists the noise is found by a
bracket search on that cost (secant steps, bisection as the fallback) and the upper end of
the final bracket is returned, a noise whose cost was evaluated and found within the
target; the peers return their search's end as well
but on uncertified costs (Opacus: eps within ``epsilon_tolerance``; dp_accounting: a
heuristic grid), so ours may be a little larger, never knowingly too small.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from accounting import _checks
from accounting.costs import RenyiCurve
from accounting.curves.pld import self_compose_discretised
from accounting.curves.rdp import DEFAULT_ORDERS, rdp_to_delta, rdp_to_eps
from accounting.mechanisms.gaussian import gaussian_sigma
from accounting.mechanisms.laplace import laplace_delta, laplace_pld, laplace_rdp
from accounting.mechanisms.subsampled_gaussian import (
    subsampled_gaussian_eps,
    subsampled_gaussian_rdp,
)
from accounting.numerics import nudge_up

__all__ = ["dp_sgd_noise_multiplier", "gaussian_sigma_composed", "laplace_scale_composed"]

ACCOUNTANTS = ("rdp", "pld")
#: Largest composed grid (points) that :func:`laplace_scale_composed` convolves; beyond it
#: the search prices a scale by RDP composition instead.
MAX_COMPOSED_GRID = 2**20
#: Largest noise a bisection brackets before it says the target cannot be met (as Opacus).
MAX_NOISE = 1e6
#: Halvings below the first admitted noise before the search accepts that every smaller one
#: is admitted too (e.g. DP-SGD with delta >= the chance of being sampled at all).
_MAX_HALVINGS = 64


def _smallest_admitted(
    cost: Callable[[float], float], target: float, start: float, rel_tol: float
) -> float:
    """The upper end of a bracket search for the smallest noise x with ``cost(x) <= target``:
    an x whose ``cost`` was evaluated and found within ``target``, and (for a cost that
    decreases in x) at most a factor ``1 + rel_tol`` above the smallest such x, because the
    final bracket's lower end was evaluated and found above ``target``.

    Brackets by doubling from ``start`` (a ValueError past :data:`MAX_NOISE`) and by stepping
    down (by ever larger factors, the first one guessed from the cost), then narrows the
    bracket at the root of the secant of log cost against log x, probing just beside it on
    the side that closes the bracket; a bracket that a step does not halve is bisected
    geometrically next. For the smooth costs here this takes about half of bisection's
    evaluations (DP-SGD by PLD: 5 instead of 12). ``cost`` must be a certified upper bound
    for the result to be: no monotonicity is needed for the returned x to be admitted.
    """
    lo: tuple[float, float] | None = None  # (x, cost(x)) with cost(x) > target
    hi: tuple[float, float] | None = None  # (x, cost(x)) with cost(x) <= target
    x, halvings, width, step = start, 0, math.inf, 0.5
    while True:
        c = cost(x)
        if c <= target:
            hi = (x, c)
        else:
            lo = (x, c)
        if hi is None:
            if x * 2.0 > MAX_NOISE:
                raise ValueError(f"no noise up to {MAX_NOISE:g} meets the target {target!r}")
            x *= 2.0
            continue
        if lo is None:
            halvings += 1
            if halvings > _MAX_HALVINGS:
                return hi[0]
            # a cost falling like 1 / x (a Gaussian's eps) is met about at x c / target; a
            # steeper one (a delta) near x: step down by 0.9, then by squares of the step
            ratio = hi[1] / target
            step = step * step if halvings > 1 else ratio if 0.5 <= ratio else 0.9
            x = hi[0] * min(step, 1.0 - rel_tol)
            continue
        if hi[0] - lo[0] <= rel_tol * hi[0]:
            return hi[0]
        x = _next_probe(lo, hi, target, rel_tol, halved=hi[0] - lo[0] <= width / 2.0)
        if not lo[0] < x < hi[0]:  # the bracket is a few ulps wide
            return hi[0]
        width = hi[0] - lo[0]


def _next_probe(
    lo: tuple[float, float], hi: tuple[float, float], target: float, rel_tol: float, halved: bool
) -> float:
    """The next noise to price inside the bracket (lo, hi): just beside the secant root of
    log cost against log x (on the far side from the end nearer it, so that one or two probes
    close the bracket), or the geometric midpoint where the last step did not halve the bracket
    or the secant is undefined (a cost of 0 or inf)."""
    (x_lo, c_lo), (x_hi, c_hi) = lo, hi
    mid = math.sqrt(x_lo * x_hi)
    if not halved or not (0.0 < c_hi < c_lo < math.inf) or not 0.0 < target:
        probe = mid
    else:
        t = math.log(target / c_lo) / math.log(c_hi / c_lo)
        root = math.exp(math.log(x_lo) + t * math.log(x_hi / x_lo))
        nearer_hi = math.log(x_hi / root) < math.log(root / x_lo)
        probe = root * (1.0 - rel_tol / 4.0) if nearer_hi else root * (1.0 + rel_tol / 4.0)
    return probe if x_lo < probe < x_hi else mid


def dp_sgd_noise_multiplier(
    eps: float,
    *,
    delta: float,
    q: float,
    steps: int,
    accountant: str = "rdp",
    rel_tol: float = 1e-3,
    pld_step: float = 1e-4,
) -> float:
    """Smallest noise multiplier (noise std / clip norm), within a factor ``1 + rel_tol``,
    for which ``steps`` Poisson-subsampled Gaussian steps of sampling rate ``q`` are
    (eps, delta)-DP under add/remove-one neighbours.

    ``accountant="rdp"``: the RDP of one step (:func:`subsampled_gaussian_rdp`, Mironov,
    Talwar and Zhang 2019) times ``steps`` (Mironov 2017, Prop. 1), converted at the best
    order of ``DEFAULT_ORDERS`` (:func:`rdp_to_eps`), as Opacus' RDP accountant does.
    ``accountant="pld"``: the connect-the-dots grid PLD of both neighbour pairs composed
    ``steps`` times at grid ``pld_step`` (:func:`subsampled_gaussian_eps`, Doroshenko et al.
    2022), tighter; its search starts from the RDP answer. The returned multiplier's
    certified eps is <= ``eps`` (see the module docstring).
    """
    eps = _checks.positive("eps", eps)
    delta = _checks.open_unit("delta", delta)
    q = _checks.finite("q", q)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    steps = _checks.integer("steps", steps)
    rel_tol = _checks.open_unit("rel_tol", rel_tol)
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")

    def rdp_cost(sigma: float) -> float:
        curve = subsampled_gaussian_rdp(q=q, sigma=sigma, orders=DEFAULT_ORDERS)
        return rdp_to_eps(curve.scaled(steps), delta).eps

    sigma = _smallest_admitted(rdp_cost, eps, 1.0, rel_tol)
    if accountant == "rdp":
        return sigma

    def pld_cost(sigma: float) -> float:
        return subsampled_gaussian_eps(q=q, sigma=sigma, steps=steps, delta=delta, step=pld_step)

    return _smallest_admitted(pld_cost, eps, sigma, rel_tol)


def gaussian_sigma_composed(
    eps: float, *, delta: float, sensitivity: float = 1.0, k: int = 1
) -> float:
    """Smallest Gaussian noise std for which ``k`` (adaptively chosen) Gaussian queries of
    L2 ``sensitivity`` are together (eps, delta)-DP.

    Exact: k mu-GDP mechanisms compose to exactly sqrt(k) mu-GDP (Dong, Roth and Su 2022,
    Cor. 3.3), the Gaussian mechanism of sensitivity sqrt(k) D, so this is
    :func:`gaussian_sigma` (Balle and Wang 2018, Thm. 8, safe side) at a sensitivity that
    is >= sqrt(k) D exactly (rounded up); the answer is dp_accounting's
    ``get_smallest_gaussian_noise`` with ``num_queries=k``.
    """
    eps = _checks.nonnegative("eps", eps)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    k = _checks.integer("k", k)
    exact_square = Fraction(sensitivity) ** 2 * k
    total = nudge_up(lambda s: Fraction(s) ** 2 >= exact_square, sensitivity * math.sqrt(k))
    return gaussian_sigma(eps, delta=delta, sensitivity=total)


def laplace_scale_composed(
    eps: float,
    *,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    k: int = 1,
    rel_tol: float = 1e-3,
    step: float | None = None,
) -> float:
    """Smallest Laplace scale for which ``k`` (adaptively chosen) Laplace queries of L1
    ``sensitivity`` are together (eps, delta)-DP.

    * delta = 0: k D / eps, exactly (rounded up). Pure composition is tight here: the loss
      of one query is D / b on a set of positive probability, so k queries reach k D / b.
    * k = 1: D / (eps - 2 log(1 - delta)), the inverse of the exact delta(eps) =
      1 - e^{(eps - D/b)/2} (:func:`laplace_delta`), stepped up until
      ``laplace_delta(eps) <= delta`` holds exactly.
    * otherwise: bisection (within a factor ``1 + rel_tol``) on the delta(eps) of the
      connect-the-dots grid PLD (:func:`laplace_pld`, Doroshenko et al. 2022, Alg. 1 and
      Thm. 4.2: it dominates the mechanism and is exact at the grid points) composed ``k``
      times with every convolution rounded up (:func:`self_compose_discretised`), on the
      grid ``step`` (default eps / (100 k): whatever the split, each loss moves by less
      than one step, so the grid's pessimism is at most k ``step`` = 1% of eps; it is second
      order in the step, the paper's Sec. 4). dp_accounting's
      ``get_smallest_laplace_noise`` answers the same question on the same kind of grid,
      ten times coarser and uncertified; on one grid they agree (500 queries at
      (1.19, 1e-5), grid 1e-4: ours 70.90, dp_accounting's search 70.89, where the
      pessimistic grid needed 72.49). Where the composed grid would exceed
      :data:`MAX_COMPOSED_GRID` points (beyond about 2,000 queries at the default step), a
      scale is priced by the RDP of k Laplace queries (:func:`laplace_rdp`,
      Mironov 2017, Prop. 6, composed by Prop. 1) converted by :func:`rdp_to_delta`: also
      an upper bound, looser (3,000 queries at (1, 1e-6): 7% above dp_accounting).
    """
    eps = _checks.positive("eps", eps)
    delta = _checks.delta("delta", delta)
    if delta >= 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    sensitivity = _checks.positive("sensitivity", sensitivity)
    k = _checks.integer("k", k)
    rel_tol = _checks.open_unit("rel_tol", rel_tol)
    exact = Fraction(k) * Fraction(sensitivity) / Fraction(eps)
    pure = nudge_up(lambda b: Fraction(b) >= exact, k * sensitivity / eps)
    if delta == 0.0:
        return pure
    if k == 1:
        guess = sensitivity / (eps - 2.0 * math.log1p(-delta))
        return nudge_up(
            lambda b: laplace_delta(eps, sensitivity=sensitivity, scale=b) <= delta, guess
        )
    grid = eps / (100.0 * k) if step is None else _checks.positive("step", step)

    def rdp_delta(scale: float) -> float:
        curve = RenyiCurve.from_function(
            lambda a: laplace_rdp(a, sensitivity=sensitivity, scale=scale), DEFAULT_ORDERS
        )
        return float(rdp_to_delta(curve.scaled(k), eps))

    def delta_at(scale: float) -> float:
        eps0 = sensitivity / scale
        # the composed loss lies within its mean (<= k eps0^2 / 2) + 9 sd (sd <= sqrt(k) eps0)
        # up to the truncated tail, and never beyond k eps0: the composed grid's points
        width = min(k * eps0, k * eps0 * eps0 / 2.0 + 9.0 * math.sqrt(k) * eps0)
        if 2.0 * width / grid > MAX_COMPOSED_GRID:  # RDP composition instead (O(1) in k)
            return rdp_delta(scale)
        pld = laplace_pld(
            sensitivity=sensitivity, scale=scale, step=grid, discretisation="connect_dots"
        )
        # its losses are grid points already: composing keeps them where they are
        return float(self_compose_discretised(pld, k, grid).delta(eps))

    # the RDP answer (milliseconds per price) starts the search: the grid PLD is tighter
    # but costs seconds per price at the large scales a search from `pure` would pass through
    start = min(pure, _smallest_admitted(rdp_delta, delta, pure, rel_tol))
    return _smallest_admitted(delta_at, delta, start, rel_tol)
