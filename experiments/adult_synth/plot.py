"""Fig. 1, Fig. 2a-f and Table 3 of Räisä et al. (Sec. 6, App. D) from the result tables.

    python -m experiments.adult_synth.plot releases.csv checks.csv baseline.csv table3.csv \
        figures/adult_synth/<scale>

The accuracy threshold is the checks table's ``params.threshold`` (its sidecar).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.plotting import (
    MARKERS,
    colour,
    figure,
    legend_outside,
    save,
    table_params,
)

LABELS = {"plain": "Plain Gaussian", "svt": "SVT"}


def _reference_lines(ax, threshold: float, non_dp: float, *, vertical: bool = False) -> None:
    line = ax.axvline if vertical else ax.axhline
    line(threshold, color=colour("reference"), ls="--", lw=0.8, label="threshold")
    line(non_dp, color=colour("reference"), ls=":", lw=0.8, label="non-DP")


def _eps_axis(ax, levels: np.ndarray) -> None:
    """Log eps axis spanning every level, ticks at the levels."""
    ax.set_xscale("log")
    ax.set_xlim(levels.min() / 1.4, levels.max() * 1.4)
    ax.set_xticks(levels, [f"{x:.3g}" for x in levels], rotation=45)
    ax.minorticks_off()


def fig1(
    means: pd.DataFrame,
    checks: pd.DataFrame,
    levels: np.ndarray,
    threshold: float,
    non_dp: float,
    out: Path,
):
    """Released validation accuracy by eps per repeat (up to its accepted release)."""
    with figure(ncols=2, width="double", sharey=True) as (fig, axes):
        for ax, (kind, color) in zip(axes, ((name, colour(name)) for name in LABELS), strict=True):
            for _, acc in checks[checks["check"] == kind].iterrows():
                path = means[(means["repeat"] == acc["repeat"]) & (means["level"] <= acc["level"])]
                ax.plot(path["eps"], path["val_acc"], ".-", color=color, alpha=0.25, lw=0.7)
                ax.plot(acc["eps"], acc["val_acc"], MARKERS[0], color=color, alpha=0.7)
            _reference_lines(ax, threshold, non_dp)
            _eps_axis(ax, levels)
            ax.set(xlabel=r"$\varepsilon$ (RDP, $\alpha=20$)", title=LABELS[kind])
        axes[0].set_ylabel("validation accuracy")
        legend_outside(fig, axes[0], ncols=2)
        save(fig, out / "fig1")


def _ecdf(ax, values: np.ndarray, **kw) -> None:
    x = np.sort(values)
    y = np.arange(x.size + 1) / x.size  # starts at 0 so that a single value shows as a step
    ax.step(np.concatenate([x[:1], x]), y, where="post", **kw)


def fig2(checks: pd.DataFrame, levels: np.ndarray, threshold: float, base: pd.DataFrame, out: Path):
    """(a) accepted eps, (b) validation vs test, (c, d) ECDFs, (e, f) accuracy by eps."""
    non_dp = {"val_acc": base["val_acc"].mean(), "test_acc": base["test_acc"].mean()}
    with figure(nrows=2, ncols=3, width="double", height=4.4) as (fig, axes):
        a, b, c, d, e, f = axes.ravel()
        width = 0.38
        pos = np.arange(levels.size)
        for k, (kind, color) in enumerate((name, colour(name)) for name in LABELS):
            acc = checks[checks["check"] == kind]
            counts = acc["level"].value_counts().reindex(range(levels.size), fill_value=0)
            a.bar(
                pos + (k - 0.5) * width, counts.to_numpy(), width, color=color, label=LABELS[kind]
            )
            b.plot(acc["val_acc"], acc["test_acc"], MARKERS[k], color=color, alpha=0.6)
            _ecdf(c, acc["val_acc"].to_numpy(), color=color, label=LABELS[kind])
            _ecdf(d, acc["test_acc"].to_numpy(), color=color)
            shift = 1.0 + (k - 0.5) * 0.12
            e.plot(acc["eps"] * shift, acc["val_acc"], MARKERS[k], color=color, alpha=0.6)
            f.plot(acc["eps"] * shift, acc["test_acc"], MARKERS[k], color=color, alpha=0.6)
        a.set(xticks=pos, xlabel=r"accepted $\varepsilon$", ylabel="repeats", title="(a)")
        a.set_xticklabels([f"{x:.3g}" for x in levels], rotation=45)
        lo = min(checks["val_acc"].min(), checks["test_acc"].min())
        hi = max(checks["val_acc"].max(), checks["test_acc"].max())
        b.plot([lo, hi], [lo, hi], color="0.6", lw=0.8)
        b.set(xlabel="validation accuracy", ylabel="test accuracy", title="(b)")
        _reference_lines(c, threshold, non_dp["val_acc"], vertical=True)
        _reference_lines(d, threshold, non_dp["test_acc"], vertical=True)
        c.set(xlabel="accepted validation accuracy", ylabel="ECDF", title="(c)")
        d.set(xlabel="accepted test accuracy", ylabel="ECDF", title="(d)")
        for ax, key, title in ((e, "val_acc", "(e)"), (f, "test_acc", "(f)")):
            _reference_lines(ax, threshold, non_dp[key])
            name = "validation" if key == "val_acc" else "test"
            _eps_axis(ax, levels)
            ax.set(xlabel=r"accepted $\varepsilon$", ylabel=f"{name} accuracy")
            ax.set_title(title)
        legend_outside(fig, [a, c], ncols=4)
        save(fig, out / "fig2")


def table3(table: pd.DataFrame, out: Path) -> None:
    """Table 3 rendered: RDP eps at alpha -> approximate ex-post eps at delta."""
    alpha, delta = table["alpha"].iloc[0], table["delta"].iloc[0]
    cells = [
        [f"{r:.6f}", f"{a:.6f}"] for r, a in zip(table["rdp_eps"], table["adp_eps"], strict=True)
    ]
    with figure(width="single", height=0.3 + 0.2 * len(cells)) as (fig, ax):
        ax.axis("off")
        ax.table(
            cellText=cells,
            colLabels=[
                rf"RDP $\varepsilon$ @ $\alpha$={alpha:g}",
                rf"ADP $\varepsilon$ @ $\delta$={delta:g}",
            ],
            loc="center",
        )
        save(fig, out / "table3")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    for name in ("releases", "checks", "baseline", "table3", "outdir"):
        parser.add_argument(name, type=Path)
    args = parser.parse_args()
    threshold = float(table_params(args.checks)["threshold"])
    releases = pd.read_csv(args.releases)
    means = releases.groupby(["repeat", "level"], as_index=False)[
        ["eps", "val_acc", "test_acc"]
    ].mean()
    checks = pd.read_csv(args.checks)
    base = pd.read_csv(args.baseline)
    levels = np.sort(releases["eps"].unique())
    fig1(means, checks, levels, threshold, base["val_acc"].mean(), args.outdir)
    fig2(checks, levels, threshold, base, args.outdir)
    table3(pd.read_csv(args.table3), args.outdir)


if __name__ == "__main__":
    main()
