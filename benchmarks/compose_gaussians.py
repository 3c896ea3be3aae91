"""Compose k Gaussian mechanisms and convert to (eps, delta): every route, side by side.

Routes: the exact answer (k Gaussians of noise sigma are one of noise sigma / sqrt(k),
Balle and Wang 2018, Thm. 8), our RDP curve with the classical and the improved
conversion, our grid PLD rounded up ("pessimistic") and connect-the-dots (Doroshenko et
al. 2022) at several steps, and the baselines dp_accounting 0.6.0 (RDP accountant, PLD
self-composition, PLD accountant) and Opacus (RDP, sample rate 1). Our and dp_accounting's
RDP routes compose one event at a time, as a filter would; Opacus multiplies one step's RDP
by k (its compute_rdp(steps=k)); our PLD routes and dp_accounting's ``self_compose`` compose
k times. dp_accounting's PLDAccountant does NOT compose: for k Gaussian events it builds one
Gaussian PLD of noise sigma / sqrt(k) (the closed form), so it is listed as a shortcut, not as
a composition baseline. Prints a markdown table: eps at the target delta, its ratio to the
exact eps, the median wall time and the time ratio to the dp_accounting route of the same
kind (PLD: dp_accounting's connect-the-dots self_compose at step 1e-4; the DP-SGD rows, k
Poisson-subsampled Gaussian steps at q = 0.01, noise multiplier 1, against dp_accounting's
PLDAccountant, which composes them). Each route runs once
untimed (warm-up; its first call is ~20% slower), then the routes are timed in turn, repeat
after repeat, so a shared machine's load changes hit all of them alike. Timed one route after
the other, the rounded-up rows (timed first) printed 2.32x dp_accounting where side by side
they measure 1.25-1.43x.

    python -m benchmarks.compose_gaussians [--k 1000] [--sigma 30] [--delta 1e-5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
import warnings
from collections.abc import Callable

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution
from dp_accounting.rdp import rdp_privacy_accountant
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

from accounting.costs import RenyiCurve
from accounting.curves.pld import self_compose_discretised
from accounting.curves.rdp import DEFAULT_ORDERS, rdp_to_eps
from accounting.mechanisms.gaussian import gaussian_eps, gaussian_pld, gaussian_rdp
from accounting.mechanisms.subsampled_gaussian import subsampled_gaussian_eps

#: the DP-SGD rows: k Poisson-subsampled Gaussian steps at (q, noise multiplier)
DPSGD = (0.01, 1.0)


def timed_interleaved(
    fns: dict[str, Callable[[], float]], repeats: int
) -> dict[str, tuple[float, float]]:
    """(result, median seconds) of each function: one untimed warm-up call each, then
    ``repeats`` rounds that call every function in turn."""
    values = {name: float(fn()) for name, fn in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: (values[name], statistics.median(times[name])) for name in fns}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--sigma", type=float, default=30.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    k, sigma, delta = args.k, args.sigma, args.delta

    def ours_rdp(method: str) -> float:
        step = RenyiCurve.from_function(
            lambda a: gaussian_rdp(a, sensitivity=1.0, sigma=sigma), DEFAULT_ORDERS
        )
        total = RenyiCurve(DEFAULT_ORDERS, (0.0,) * len(DEFAULT_ORDERS))
        for _ in range(k):
            total = total + step
        return rdp_to_eps(total, delta, method).eps

    def ours_pld(grid_step: float, discretisation: str) -> float:
        pld = gaussian_pld(
            sensitivity=1.0, sigma=sigma, step=grid_step, discretisation=discretisation
        )
        return self_compose_discretised(pld, k, grid_step).eps(delta)

    def dpa_rdp() -> float:
        acc = rdp_privacy_accountant.RdpAccountant()
        for _ in range(k):
            acc.compose(dp_accounting.GaussianDpEvent(sigma))
        return acc.get_epsilon(delta)

    def dpa_pld_compose(grid_step: float) -> float:
        pld = privacy_loss_distribution.from_gaussian_mechanism(
            sigma, value_discretization_interval=grid_step, use_connect_dots=True
        )
        return pld.self_compose(k).get_epsilon_for_delta(delta)

    def dpa_pld_shortcut() -> float:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dp_accounting.GaussianDpEvent(sigma), k)
        return acc.get_epsilon(delta)

    def ours_dpsgd() -> float:
        q, z = DPSGD
        return subsampled_gaussian_eps(q=q, sigma=z, steps=k, delta=delta)

    def dpa_dpsgd() -> float:
        q, z = DPSGD
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
        acc.compose(event, k)
        return acc.get_epsilon(delta)

    def opacus_rdp() -> float:
        orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
        rdp = compute_rdp(q=1.0, noise_multiplier=sigma, steps=k, orders=orders)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return get_privacy_spent(orders=orders, rdp=rdp, delta=delta)[0]

    routes = [
        (
            "exact: Gaussian with mu sqrt(k)",
            "",
            lambda: gaussian_eps(delta, sensitivity=math.sqrt(k), sigma=sigma),
        ),
        ("ours: RDP, classical", "rdp", lambda: ours_rdp("classical")),
        ("ours: RDP, improved", "rdp", lambda: ours_rdp("improved")),
        ("ours: PLD rounded up, step 1e-4", "pld", lambda: ours_pld(1e-4, "pessimistic")),
        ("ours: PLD rounded up, step 1e-5", "pld", lambda: ours_pld(1e-5, "pessimistic")),
        ("ours: PLD connect-the-dots, step 1e-3", "pld", lambda: ours_pld(1e-3, "connect_dots")),
        ("ours: PLD connect-the-dots, step 3e-4", "pld", lambda: ours_pld(3e-4, "connect_dots")),
        ("ours: PLD connect-the-dots, step 1e-4", "pld", lambda: ours_pld(1e-4, "connect_dots")),
        ("dp_accounting: RDP accountant", "rdp", dpa_rdp),
        ("dp_accounting: PLD self_compose, 1e-3", "pld", lambda: dpa_pld_compose(1e-3)),
        ("dp_accounting: PLD self_compose, 1e-4", "pld", lambda: dpa_pld_compose(1e-4)),
        ("dp_accounting: PLDAccountant (sigma/sqrt(k) shortcut), 1e-4", "pld", dpa_pld_shortcut),
        ("opacus: RDP, compute_rdp(steps=k)", "rdp", opacus_rdp),
        ("ours: DP-SGD PLD, subsampled_gaussian_eps (connect-the-dots, 1e-4)", "dpsgd", ours_dpsgd),
        ("dp_accounting: DP-SGD PLDAccountant (connect-the-dots, 1e-4)", "dpsgd", dpa_dpsgd),
    ]
    timed = timed_interleaved({name: fn for name, _, fn in routes}, args.repeats)
    results = {name: (kind, *timed[name]) for name, kind, _ in routes}
    exact = results[routes[0][0]][1]
    baseline = {
        "rdp": results["dp_accounting: RDP accountant"][2],
        "pld": results["dp_accounting: PLD self_compose, 1e-4"][2],
        "dpsgd": results["dp_accounting: DP-SGD PLDAccountant (connect-the-dots, 1e-4)"][2],
    }
    print(f"k = {k} Gaussians, sigma = {sigma}, delta = {delta:g}; median of {args.repeats}")
    print(f"machine: {platform.processor() or platform.machine()}, {platform.platform()}\n")
    print("| route | eps | eps / exact - 1 | time (ms) | time / dp_accounting (same kind) |")
    print("|---|---:|---:|---:|---:|")
    for name, (kind, eps, seconds) in results.items():
        ratio = f"{seconds / baseline[kind]:.3g}" if kind else "-"
        gap = "-" if kind == "dpsgd" else f"{eps / exact - 1:.2e}"  # no closed form for DP-SGD
        print(f"| {name} | {eps:.6f} | {gap} | {1e3 * seconds:.3g} | {ratio} |")


if __name__ == "__main__":
    main()
