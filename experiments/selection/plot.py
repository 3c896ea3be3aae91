"""Figures of the selection experiments from the merged result tables only.

    python -m experiments.selection.plot TABLE CSV OUTDIR [OTHER_TABLE_CSV...]

The file stems each table's plot writes are listed by ``experiments.selection.figures``
(rules.smk reads them there without importing matplotlib).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

from experiments.common.plotting import (
    MARKERS,
    centred_norm,
    colour,
    figure,
    legend_outside,
    log_axis,
    panel_figure,
    ramp,
    save,
    sci,
)
from experiments.selection.summaries import TARGET_ACCURACY, eps_at_accuracy, online_final

LABELS = {
    "gaussian_ours": r"Gaussian RNM, ours ($\delta = 0$)",
    "gaussian_post": r"Gaussian post-processing ($\delta = 1/N$)",
    "exponential": "exponential mechanism",
    "permute_and_flip": "permute-and-flip",
    "laplace_rnm": r"Laplace RNM ($\varepsilon = 2\Delta/b$)",
    "laplace_post": r"Laplace post-processing ($\varepsilon = d\Delta/b$)",
    "fsrc": "FSRC (ours)",
    "filter": "Whitehouse filter",
    "composition": "RDP composition",
}


def offline_tasks(df: pd.DataFrame) -> list[tuple[str, int]]:
    """(dataset, d) of every task in the offline table, in table order."""
    return list(dict.fromkeys(zip(df["dataset"], df["d"], strict=True)))


def _band(ax, x, y, se, color, label, marker=None) -> None:
    ax.plot(x, y, color=color, label=label, marker=marker)
    ax.fill_between(x, y - se, y + se, color=color, alpha=0.25, lw=0)


EPS = r"privacy loss $\varepsilon$"


def plot_offline(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 9-11, 13, 14 (privacy_utility) and 12, 15, 16 (baselines), per task."""
    for ds, d in offline_tasks(df):
        sub = df[(df.dataset == ds) & (df.d == d)]
        n = int(sub.n_users.iloc[0])
        with figure(ncols=2, width="double", height=2.6) as (fig, (ax1, ax2)):
            for mech in ("gaussian_ours", "gaussian_post"):
                m = sub[sub.mechanism == mech].sort_values("sigma")
                _band(
                    ax1,
                    m.eps.to_numpy(),
                    m.accuracy.to_numpy(),
                    m.se.to_numpy(),
                    colour(mech),
                    LABELS[mech],
                )
                ax2.plot(m.sigma, m.eps, color=colour(mech), label=LABELS[mech])
            log_axis(ax1, "x")
            log_axis(ax2, "x")
            log_axis(ax2, "y")
            ax1.set(xlabel=EPS, ylabel="accuracy (eq. 39)")
            ax2.set(xlabel=r"noise $\sigma$", ylabel=EPS)
            ax1.axhline(0.9, color=colour("reference"), lw=0.6, ls=":")
            fig.suptitle(rf"{ds}, $d = {d}$, $N = {n}$")
            legend_outside(fig, ax1, ncols=2)
            save(fig, outdir / f"privacy_utility_{ds}_d{d}")
        mechs = (
            "gaussian_ours",
            "exponential",
            "permute_and_flip",
            "laplace_rnm",
            "laplace_post",
            "gaussian_post",
        )
        with figure(width="single", height=3.4) as (fig, ax):
            for mech in mechs:
                m = sub[sub.mechanism == mech].sort_values("eps")
                _band(
                    ax,
                    m.eps.to_numpy(),
                    m.accuracy.to_numpy(),
                    m.se.to_numpy(),
                    colour(mech),
                    LABELS[mech],
                )
            ax.axhline(0.9, color=colour("reference"), lw=0.6, ls=":")
            log_axis(ax, "x")
            ax.set(
                xlabel=EPS,
                ylabel="accuracy (eq. 39)",
                title=rf"{ds}, $d = {d}$: baselines ($\Delta = 1/N$)",
            )
            legend_outside(fig, ax, ncols=1)
            save(fig, outdir / f"baselines_{ds}_d{d}")


def plot_online(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 4/5, 17, 19 (F1 against final eps) and 18, 20 (cumulative eps against day)."""
    final = online_final(df)
    for ds in list(dict.fromkeys(df.dataset)):
        sub = final[final.dataset == ds]
        sigmas = sorted(sub.sigma_x.unique())
        marker = {s: MARKERS[j % len(MARKERS)] for j, s in enumerate(sigmas)}
        with figure(width="single", height=3.3) as (fig, ax):
            for acct in ("fsrc", "filter"):
                for s in sigmas:
                    m = sub[sub.sigma_x == s]
                    ax.scatter(
                        m[acct], m.f1, s=8, color=colour(acct), marker=marker[s], alpha=0.6, lw=0
                    )
            ax.set(
                xlabel=r"final privacy loss $\varepsilon$",
                ylabel="F1",
                title=rf"{ds}, $\rho = {sub.threshold.iloc[0]:g}$",
            )
            keys = [
                Line2D([], [], color=colour(a), marker="o", ls="", label=LABELS[a])
                for a in ("fsrc", "filter")
            ] + [
                Line2D([], [], color="0.35", marker=marker[s], ls="", label=rf"$\sigma_X = {s:g}$")
                for s in sigmas
            ]
            fig.legend(handles=keys, loc="outside lower center", ncols=2, markerscale=1.2)
            save(fig, outdir / f"online_f1_{ds}")
        runs = df[(df.dataset == ds) & (df.run == 0)]
        with panel_figure(len(sigmas), 4, panel_height=2.4, sharey=True) as (fig, axes, firsts):
            for ax, s in zip(axes, sigmas, strict=True):
                r = runs[runs.sigma_x == s].sort_values("instance")
                for acct in ("fsrc", "filter", "composition"):
                    ax.step(
                        r.start_day, r[acct], where="post", color=colour(acct), label=LABELS[acct]
                    )
                log_axis(ax, "y")
                ax.set(title=rf"$\sigma_X = {s:g}$", xlabel="day")
            for ax in firsts:
                ax.set_ylabel(r"cumulative $\varepsilon$ (run 0)")
            legend_outside(fig, axes)
            save(fig, outdir / f"online_spend_{ds}")


def plot_heatmap(df: pd.DataFrame, outdir: Path) -> None:
    """Fig. 1: ex-ante minus ex-post eps, with worst-case stopping-time quantiles.

    One colour scale for every rho panel, centred at 0 (blue: ex-post better, as the paper).
    """
    rhos = sorted(df.threshold.unique())
    norm = centred_norm(df["difference"].to_numpy())
    with panel_figure(len(rhos), 3, panel_height=2.6, sharey=True) as (fig, axes, firsts):
        for ax, rho in zip(axes, rhos, strict=True):
            sub = df[df.threshold == rho]
            grid = sub.pivot(index="sigma_x", columns="t", values="difference")
            mesh = ax.pcolormesh(
                grid.columns, grid.index, grid.to_numpy(), cmap="RdBu", norm=norm, shading="nearest"
            )
            q = sub.groupby("sigma_x")[["median_stop", "p80_stop"]].first()
            ax.plot(
                q.median_stop,
                q.index,
                color=colour("median_stop"),
                ls=":",
                lw=1.5,
                label="median stopping time",
            )
            ax.plot(q.p80_stop, q.index, color=colour("p80_stop"), label="80th percentile")
            ax.set(
                xlim=(grid.columns.min(), grid.columns.max()),
                title=rf"$\rho = {rho:g}$",
                xlabel="halting step $t$",
            )
            ax.grid(False)
        for ax in firsts:
            ax.set_ylabel(r"$\sigma_X$")
        fig.colorbar(mesh, ax=list(axes), label=r"ex-ante $-$ ex-post $\varepsilon$")
        legend_outside(fig, axes, ncols=2)
        save(fig, outdir / "heatmap_above_threshold")


def plot_threshold_sweep(df: pd.DataFrame, outdir: Path) -> None:
    """Fig. 2: ex-post loss of halting at t against rho.

    Top: the loss (log axis, as the paper). Bottom: the loss relative to its minimum over rho
    for each t, where the t = 2 minimum at rho = 0.5 (a 2% dip) is visible; dots mark the
    minima.
    """
    steps = sorted(df.t.unique())
    colours = dict(zip(steps, ramp(len(steps)), strict=True))
    with figure(nrows=2, width="single", height=4.2, sharex=True) as (fig, (top, bottom)):
        for t in steps:
            sub = df[df.t == t].sort_values("threshold")
            top.plot(sub.threshold, sub.expost, color=colours[t], label=f"$t = {t}$")
            relative = sub.expost / sub.expost.min() - 1
            bottom.plot(sub.threshold, 100 * relative, color=colours[t])
            best = sub.expost.idxmin()
            bottom.plot(sub.threshold[best], 0.0, "o", color=colours[t], ms=3)
        top.set(
            ylabel=r"ex-post $\varepsilon$",
            yscale="log",
            title=rf"$\Delta = 10^{{-3}}$, $\sigma_X = {df.sigma_x.iloc[0]:g}$",
        )
        bottom.set(xlabel=r"threshold $\rho$", ylabel=r"above the minimum over $\rho$ (%)")
        bottom.set_ylim(-0.5, min(10.0, float(bottom.get_ylim()[1])))
        legend_outside(fig, top, ncols=3)
        save(fig, outdir / "expost_vs_threshold")


def _log_axis_labelled(ax, axis: Literal["x", "y"]) -> None:
    """A log axis with at least two labelled ticks: powers of ten where the view holds two of
    them, else a few round values (a view inside one decade, as the smoke scale's eps of
    0.02-0.06 or its d of 2 and 10, holds at most one power of ten and would show no scale)."""
    log_axis(ax, axis)
    low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
    if math.floor(math.log10(high)) - math.ceil(math.log10(low)) >= 1:
        return
    ticks = [t for t in MaxNLocator(nbins=4).tick_values(low, high) if low <= t <= high]
    (ax.set_xlim if axis == "x" else ax.set_ylim)(low, high)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def plot_rnm_mc(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 3/6: numerical bound against Monte Carlo mean and standard deviation over d.

    Log axes: the estimates span decades where the sampler fails (small sigma, large d).
    """
    sigmas = sorted(df.sigma.unique())
    with panel_figure(len(sigmas), 3, panel_height=2.5) as (fig, axes, firsts):
        for ax, s in zip(axes, sigmas, strict=True):
            sub = df[df.sigma == s]
            g = sub.replace([np.inf, -np.inf], np.nan).groupby("d")
            mean, sd, num = g.estimate.mean(), g.estimate.std(), g.numeric.first()
            ax.plot(num.index, num, color=colour("numerical"), label="numerical integration")
            ax.plot(mean.index, mean, color=colour("monte_carlo"), label="Monte Carlo mean")
            low = (mean - sd).where(mean - sd > 0, mean / 10)
            ax.fill_between(
                mean.index,
                low,
                mean + sd,
                color=colour("monte_carlo"),
                alpha=0.3,
                lw=0,
                label=r"$\pm$ 1 s.d. over trials",
            )
            samples = sci(float(sub.n_samples.iloc[0]))
            _log_axis_labelled(ax, "x")
            _log_axis_labelled(ax, "y")
            ax.set(xlabel="$d$", title=rf"$\sigma = {s:g}$, ${samples}$ samples")
        for ax in firsts:
            ax.set_ylabel(r"$\varepsilon$")
        legend_outside(fig, axes)
        save(fig, outdir / "rnm_monte_carlo")


def plot_rnm_bounds(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 7/8: pure RNM eps, the analytic Gaussian with sqrt(d) Delta, their difference.

    The two bounds share one log colour scale; the difference (post-processing minus ours) is
    centred at 0 so that the region where ours is worse (negative, red) shows as such, and is
    outlined by its zero contour.
    """
    both = df[["ours", "post_processing"]].to_numpy()
    shared = LogNorm(vmin=float(np.nanmin(both[both > 0])), vmax=float(np.nanmax(both)))
    with figure(ncols=3, width="double", height=2.4, sharey=True) as (fig, axes):
        for ax, col, title in zip(
            axes,
            ("ours", "post_processing", "difference"),
            (
                r"ours ($\delta = 0$)",
                r"analytic Gaussian, $\sqrt{d}\,\Delta$",
                r"difference (blue: ours smaller)",
            ),
            strict=True,
        ):
            grid = df.pivot(index="sigma", columns="d", values=col)
            diff = col == "difference"
            mesh = ax.pcolormesh(
                grid.columns,
                grid.index,
                grid.to_numpy(),
                shading="nearest",
                cmap="RdBu" if diff else "viridis",
                norm=centred_norm(grid.to_numpy()) if diff else shared,
            )
            if diff and np.nanmin(grid.to_numpy()) < 0 < np.nanmax(grid.to_numpy()):
                ax.contour(
                    grid.columns,
                    grid.index,
                    grid.to_numpy(),
                    levels=[0.0],
                    colors="black",
                    linewidths=0.6,
                )
            log_axis(ax, "x")
            ax.set(xlabel="$d$", title=title)
            ax.grid(False)
            if diff:
                fig.colorbar(mesh, ax=ax, label=r"$\varepsilon$ difference")
        axes[0].set_ylabel(r"$\sigma$")
        fig.colorbar(axes[0].collections[0], ax=axes[:2], label=r"$\varepsilon$ (shared scale)")
        save(fig, outdir / "rnm_bounds")


def plot_scalings(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 5/19 under each LCL scaling: mean final eps of FSRC over the filter's against
    sigma_X (below 1: FSRC spends less, the paper's claim), and F1."""
    names = list(dict.fromkeys(df.scaling))
    means = df.groupby(["scaling", "sigma_x"], sort=False)[["fsrc", "filter", "f1"]].mean()
    with figure(ncols=2, width="double", height=2.8) as (fig, (ax1, ax2)):
        for j, (name, c) in enumerate(zip(names, ramp(len(names), "tab10"), strict=True)):
            m = means.loc[name]
            first = df[df.scaling == name].iloc[0]
            label = f"{name} ({int(first.n_above)} days above, max day {int(first.max_day)})"
            mk = MARKERS[j % len(MARKERS)]
            ax1.plot(m.index, m.fsrc / m["filter"], color=c, marker=mk, label=label)
            ax2.plot(m.index, m.f1, color=c, marker=mk)
        ax1.axhline(1.0, color=colour("reference"), lw=0.6, ls=":")
        ax1.set(xlabel=r"$\sigma_X$", ylabel="final eps, FSRC / filter (mean)")
        ax2.set(xlabel=r"$\sigma_X$", ylabel="F1 (mean)")
        fig.suptitle(rf"LCL, $\rho = {df.threshold.iloc[0]:g}$, $\Delta = 1/N$ in every accountant")
        legend_outside(fig, ax1, ncols=2)
        save(fig, outdir / "lcl_scalings")


def plot_calibration(df: pd.DataFrame, outdir: Path, offline: pd.DataFrame) -> None:
    """Figs. 12b/15: eps at 90% accuracy of EM and permute-and-flip under each reading, per
    offline task; the line is ours' (right of it: ours needs less, the paper's claim)."""
    tasks = offline_tasks(df)
    readings = list(dict.fromkeys(df.reading))
    with panel_figure(len(tasks), 3, panel_height=2.9, sharey=True) as (fig, axes, firsts):
        for ax, (ds, d) in zip(axes, tasks, strict=True):
            sub = df[(df.dataset == ds) & (df.d == d)]
            for k, mech in enumerate(("exponential", "permute_and_flip")):
                eps90 = [
                    eps_at_accuracy(m.eps.to_numpy(), m.accuracy.to_numpy(), TARGET_ACCURACY)
                    for m in (sub[(sub.reading == r) & (sub.mechanism == mech)] for r in readings)
                ]
                y = np.arange(len(readings)) + (k - 0.5) * 0.25
                ax.scatter(eps90, y, color=colour(mech), marker=MARKERS[k], label=LABELS[mech])
            ours = offline[
                (offline.dataset == ds) & (offline.d == d) & (offline.mechanism == "gaussian_ours")
            ]
            ax.axvline(
                eps_at_accuracy(ours.eps.to_numpy(), ours.accuracy.to_numpy(), TARGET_ACCURACY),
                color=colour("gaussian_ours"),
                label=LABELS["gaussian_ours"],
            )
            log_axis(ax, "x")
            ax.set(title=rf"{ds}, $d = {d}$", xlabel=r"$\varepsilon$ at 90% accuracy")
        first = axes[0]  # the y axis is shared: its ticks and direction hold for every row
        first.set_yticks(np.arange(len(readings)), readings)
        first.invert_yaxis()  # readings top to bottom in config order
        legend_outside(fig, first, ncols=3)
        save(fig, outdir / "calibration_readings")


PLOTS: dict[str, Callable[..., None]] = {
    "offline": plot_offline,
    "online": plot_online,
    "heatmap": plot_heatmap,
    "threshold_sweep": plot_threshold_sweep,
    "rnm_mc": plot_rnm_mc,
    "rnm_bounds": plot_rnm_bounds,
    "scalings": plot_scalings,
    "calibration": plot_calibration,
}

if __name__ == "__main__":
    table, csv, outdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    PLOTS[table](pd.read_csv(csv), outdir, *(pd.read_csv(x) for x in sys.argv[4:]))
