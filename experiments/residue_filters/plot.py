"""Figures of the residue-filter reproduction, from the results tables only.

    python -m experiments.residue_filters.plot FIG1.csv FIG2.csv FIG3.csv COUNTS.csv OUTDIR

writes into OUTDIR (figures/residue_filters/<scale>): ``fig1`` (GDP residue vs naive update,
three regimes), ``fig2`` (natural filter not free: (eps, delta) queries; pure-DP queries
over 2 and 3 rounds), ``fig3`` (GDP and approximate-GDP budgets) and ``counts`` (pure-DP
queries admitted by the naive and the residue GDP filter; for small eps the ratio tends to
pi/2: the naive filter charges mu_q^2 = (2 Phi^-1(e^eps / (1 + e^eps)))^2 ~ (pi/2) eps^2
per query, while k queries of RR_eps compose to about G_{sqrt(k) eps} (Dong et al., CLT)).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.plotting import (
    BEIGE,
    LINESTYLES,
    OLIVE,
    ORANGE,
    colour,
    figure,
    legend_outside,
    ramp,
    row_figure,
    save,
)

FIG1_STYLE = {
    "budget": (colour("budget"), LINESTYLES[0], r"budget $G_\mu$"),
    "query": (colour("query"), LINESTYLES[0], r"query ($\varepsilon$-DP)"),
    "naive": (colour("naive"), LINESTYLES[1], r"naive update $G_{\nu_0}$"),
    "residue": (colour("residue"), LINESTYLES[0], r"residue update $G_\nu$ (Thm. 5)"),
    "residue+query": (colour("residue+query"), LINESTYLES[3], r"$G_\nu \otimes$ query"),
}
#: Colours of a panel's queries (first, second, ...) in Figs. 2 and 3.
QUERY_COLOURS = (ORANGE, OLIVE, BEIGE)
PANEL_TITLES = {
    "fig1": {
        "a": "(a) well approximated, large budget",
        "b": "(b) small budget",
        "c": "(c) poorly approximated",
    },
    "fig2": {"a": r"(a) $(\varepsilon,\delta)$-DP queries", "b": "(b) pure-DP queries"},
    "fig3": {
        "a": "(a) GDP budget, general queries",
        "b": r"(b) approx. GDP budget, $(\varepsilon,\delta)$ queries",
    },
}


def _diagonal(ax) -> None:  # noqa: ANN001 - matplotlib axes
    ax.plot([0, 1], [1, 0], color="0.8", lw=0.6, zorder=0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("type I error")
    ax.set_aspect("equal")


def plot_fig1(df: pd.DataFrame, out: Path) -> None:
    """Top: the trade-off curves. Bottom: each curve minus the budget's (the gains). One
    column per regime of the config, three a row (a longer list wraps)."""
    panels = list(dict.fromkeys(df["panel"]))
    ncols = min(len(panels), 3)
    blocks = -(-len(panels) // ncols)
    with row_figure(blocks, ncols, row_height=5.0, panel_rows=2, legend_height=0.5) as (
        fig,
        _,
        axes,
    ):
        for i, panel in enumerate(panels):
            top, bottom = axes[2 * (i // ncols), i % ncols], axes[2 * (i // ncols) + 1, i % ncols]
            sub = df[df["panel"] == panel]
            first = sub.iloc[0]
            for curve, (color, ls, label) in FIG1_STYLE.items():
                c = sub[sub["curve"] == curve]
                top.plot(c["alpha"], c["beta"], color=color, ls=ls, label=label)
                if curve not in ("budget", "query"):
                    bottom.plot(c["alpha"], c["gap"], color=color, ls=ls, label=label)
            _diagonal(top)
            top.set_title(
                f"{PANEL_TITLES['fig1'].get(panel, panel)}\n"
                rf"$\mu = {first.mu:g},\ \varepsilon = {first.eps:g}$"
                "\n"
                rf"$\nu_0 = {first.nu_naive:.5f},\ \nu = {first.nu_residue:.5f}$"
            )
            bottom.axhline(0.0, color=colour("budget"), lw=0.8)
            bottom.set_xlim(0, 1)
            bottom.set_xlabel("type I error")
            bottom.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
        for i in range(len(panels), blocks * ncols):  # the last row's empty cells
            axes[2 * (i // ncols), i % ncols].remove()
            axes[2 * (i // ncols) + 1, i % ncols].remove()
        for block in range(blocks):
            axes[2 * block, 0].set_ylabel("type II error")
            axes[2 * block + 1, 0].set_ylabel(r"type II error $-$ budget's")
        legend_outside(fig, axes[0])
        save(fig, out / "fig1")


def _distinct(sub: pd.DataFrame, curves: list[str]) -> list[tuple[list[str], pd.DataFrame]]:
    """The query curves with identical ones merged: (names, points) per distinct curve, so
    that one curve never hides another under the same colour (e.g. Fig. 3(a): the maxima of
    the RR family and of the subsampled family are both RR_3)."""
    groups: list[tuple[list[str], pd.DataFrame]] = []
    for curve in curves:
        c = sub[sub["curve"] == curve]
        for names, other in groups:
            if len(other) == len(c) and np.allclose(
                other[["alpha", "beta"]].to_numpy(), c[["alpha", "beta"]].to_numpy(), atol=1e-9
            ):
                names.append(curve)
                break
        else:
            groups.append(([curve], c))
    return groups


def plot_cost(df: pd.DataFrame, name: str, out: Path) -> None:
    """Top: queries, supremum, budget, worst-case costs. Bottom: cost minus budget."""
    panels = list(dict.fromkeys(df["panel"]))
    with figure(nrows=2, ncols=len(panels), width="double", height=6.0) as (fig, axes):
        for col, panel in enumerate(panels):
            top, bottom = axes[0, col], axes[1, col]
            sub = df[df["panel"] == panel]
            curves = list(dict.fromkeys(sub["curve"]))
            queries = [c for c in curves if c not in ("budget", "supremum") and "cost" not in c]
            for i, (names, c) in enumerate(_distinct(sub, queries)):
                label = f"({panel}) " + " = ".join(names)
                if len(names) > 1:
                    label += " (the curves coincide)"
                top.plot(c["alpha"], c["beta"], color=QUERY_COLOURS[i % 3], lw=0.9, label=label)
            c = sub[sub["curve"] == "supremum"]
            top.plot(
                c["alpha"], c["beta"], color=colour("supremum"), ls=LINESTYLES[3], label="supremum"
            )
            c = sub[sub["curve"] == "budget"]
            top.plot(c["alpha"], c["beta"], color=colour("budget"), lw=1.4, label="budget")
            for i, curve in enumerate(c for c in curves if "cost" in c):
                c = sub[sub["curve"] == curve]
                excess = c["excess"].iloc[0]
                verdict = "exceeds budget by" if excess > 1e-9 else "within budget,"
                style = {
                    "color": colour(("worst_case", "worst_case_2")[i % 2]),
                    "ls": LINESTYLES[1 + i % 2],
                }
                label = (
                    f"({panel}) worst case, {curve.split(', ')[1]}: {verdict} {max(excess, 0):.3f}"
                )
                top.plot(c["alpha"], c["beta"], label=label, **style)
                bottom.plot(c["alpha"], c["gap"], label=label, **style)
            _diagonal(top)
            top.set_title(PANEL_TITLES[name].get(panel, panel))
            bottom.axhline(0.0, color=colour("budget"), lw=0.8)
            bottom.set_xlim(0, 1)
            bottom.set_xlabel("type I error")
        legend_outside(fig, axes[0], ncols=2)
        axes[0, 0].set_ylabel("type II error")
        axes[1, 0].set_ylabel(r"type II error $-$ budget's ($<0$: exceeds)")
        save(fig, out / name)


def plot_counts(df: pd.DataFrame, out: Path) -> None:
    wide = df.pivot_table(index=["mu", "eps"], columns="filter", values="count").reset_index()
    with figure(ncols=2, width="double", height=2.6) as (fig, axes):
        mus = sorted(wide["mu"].unique())
        colours = dict(zip(mus, ramp(len(mus)), strict=True))
        for mu, sub in wide.groupby("mu"):
            color = colours[mu]
            axes[0].plot(
                sub["eps"],
                sub["residue"],
                color=color,
                marker="o",
                label=rf"$\mu = {mu:g}$, residue",
            )
            axes[0].plot(
                sub["eps"],
                sub["naive"],
                color=color,
                ls=LINESTYLES[1],
                marker="s",
                mfc="none",
                label=rf"$\mu = {mu:g}$, naive",
            )
            ratio = np.where(sub["naive"] > 0, sub["residue"] / sub["naive"].clip(lower=1), np.nan)
            axes[1].plot(sub["eps"], ratio, color=color, marker="o")
        axes[1].axhline(np.pi / 2, color=colour("reference"), ls=LINESTYLES[3], lw=0.8)
        axes[1].annotate(
            r"$\pi/2$ (small-$\varepsilon$ limit)",
            (wide["eps"].min(), np.pi / 2),
            xytext=(0, 3),
            textcoords="offset points",
            fontsize=7,
        )
        axes[0].set_yscale("symlog", linthresh=1)
        axes[0].set_ylim(bottom=0)
        axes[0].set_ylabel("queries admitted")
        axes[1].set_ylabel("residue / naive (where naive > 0)")
        legend_outside(fig, axes[0], ncols=3)
        ticks = [
            t for t in (0.1, 0.2, 0.5, 1.0, 2.0, 3.0) if wide["eps"].min() <= t <= wide["eps"].max()
        ]
        for ax in axes:
            ax.set_xscale("log")
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.minorticks_off()
            ax.set_xlabel(r"query $\varepsilon$ (pure DP)")
        save(fig, out / "counts")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("fig1", "fig2", "fig3", "counts"):
        parser.add_argument(name, type=Path)
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args(argv)
    plot_fig1(pd.read_csv(args.fig1), args.outdir)
    plot_cost(pd.read_csv(args.fig2), "fig2", args.outdir)
    plot_cost(pd.read_csv(args.fig3), "fig3", args.outdir)
    plot_counts(pd.read_csv(args.counts), args.outdir)


if __name__ == "__main__":
    main()
