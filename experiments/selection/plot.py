"""Figures of the selection experiments from the merged result tables only.

    python -m experiments.selection.plot TABLE CSV OUTDIR

``figure_names(table, df)`` lists what a table produces (rules.smk uses the same names).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.plotting import COLORS, figure, save

LABELS = {
    "gaussian_ours": "Gaussian RNM, ours (δ = 0)",
    "gaussian_post": "Gaussian post-processing (δ = 1/N)",
    "exponential": "exponential mechanism",
    "permute_and_flip": "permute-and-flip",
    "laplace_rnm": "Laplace RNM (ε = 2Δ/b)",
    "laplace_post": "Laplace post-processing (ε = dΔ/b)",
    "fsrc": "FSRC (ours)",
    "filter": "Whitehouse filter",
    "composition": "RDP composition",
}


def offline_tasks(df: pd.DataFrame) -> list[tuple[str, int]]:
    """(dataset, d) of every task in the offline table, in table order."""
    return list(dict.fromkeys(zip(df["dataset"], df["d"], strict=True)))


def figure_names(table: str, tasks: list[tuple[str, int]] | list[str]) -> list[str]:
    """File stems a table's plot writes; ``tasks``: (dataset, d) pairs or online datasets."""
    if table == "offline":
        return [f"{kind}_{ds}_d{d}" for ds, d in tasks for kind in ("privacy_utility", "baselines")]
    if table == "online":
        return [f"{kind}_{ds}" for ds in tasks for kind in ("online_f1", "online_spend")]
    return {
        "heatmap": ["heatmap_above_threshold"],
        "threshold_sweep": ["expost_vs_threshold"],
        "rnm_mc": ["rnm_monte_carlo"],
        "rnm_bounds": ["rnm_bounds"],
    }[table]


def _band(ax, x, y, se, color, label, marker=None) -> None:
    ax.plot(x, y, color=color, label=label, marker=marker)
    ax.fill_between(x, y - se, y + se, color=color, alpha=0.25, lw=0)


def plot_offline(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 9-11, 13, 14 (privacy_utility) and 12, 15, 16 (baselines), per task."""
    for ds, d in offline_tasks(df):
        sub = df[(df.dataset == ds) & (df.d == d)]
        n = int(sub.n_users.iloc[0])
        with figure(ncols=2, width="double") as (fig, (ax1, ax2)):
            for k, mech in enumerate(("gaussian_ours", "gaussian_post")):
                m = sub[sub.mechanism == mech].sort_values("sigma")
                _band(
                    ax1,
                    m.eps.to_numpy(),
                    m.accuracy.to_numpy(),
                    m.se.to_numpy(),
                    COLORS[k],
                    LABELS[mech],
                )
                ax2.plot(m.sigma, m.eps, color=COLORS[k], label=LABELS[mech])
            ax1.set(
                xlabel="privacy loss ε",
                ylabel="accuracy (eq. 39)",
                xscale="log",
                title=f"{ds}, d = {d}, N = {n}",
            )
            ax2.set(xlabel="noise σ", ylabel="privacy loss ε", xscale="log", yscale="log")
            ax1.axhline(0.9, color="grey", lw=0.6, ls=":")
            ax1.legend()
            save(fig, outdir / f"privacy_utility_{ds}_d{d}")
        with figure(width="single") as (fig, ax):
            for k, mech in enumerate(
                (
                    "gaussian_ours",
                    "exponential",
                    "permute_and_flip",
                    "laplace_rnm",
                    "laplace_post",
                    "gaussian_post",
                )
            ):
                m = sub[sub.mechanism == mech].sort_values("eps")
                _band(
                    ax,
                    m.eps.to_numpy(),
                    m.accuracy.to_numpy(),
                    m.se.to_numpy(),
                    COLORS[k],
                    LABELS[mech],
                )
            ax.set(
                xlabel="privacy loss ε",
                ylabel="accuracy (eq. 39)",
                xscale="log",
                title=f"{ds}, d = {d}: baselines (Δ = 1/N)",
            )
            ax.legend(loc="lower right", fontsize=6)
            save(fig, outdir / f"baselines_{ds}_d{d}")


def online_final(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, sigma_X, run): F1 and the final spend of each accountant."""
    keys = ["dataset", "threshold", "sigma_x", "run"]
    return df.sort_values("instance").groupby(keys, as_index=False).last()


def plot_online(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 4/5, 17, 19 (F1 against final eps) and 18, 20 (cumulative eps against day)."""
    final = online_final(df)
    for ds in list(dict.fromkeys(df.dataset)):
        sub = final[final.dataset == ds]
        sigmas = sorted(sub.sigma_x.unique())
        with figure(width="single") as (fig, ax):
            for k, acct in enumerate(("fsrc", "filter")):
                for j, s in enumerate(sigmas):
                    m = sub[sub.sigma_x == s]
                    ax.scatter(
                        m[acct],
                        m.f1,
                        s=6,
                        color=COLORS[k],
                        marker="os^Dv*P"[j % 7],
                        alpha=0.6,
                        label=f"{LABELS[acct]}" if j == 0 else None,
                    )
            ax.set(
                xlabel="final privacy loss ε",
                ylabel="F1",
                title=f"{ds}, ρ = {sub.threshold.iloc[0]}, σ_X ∈ [{sigmas[0]}, {sigmas[-1]}]",
            )
            ax.legend()
            save(fig, outdir / f"online_f1_{ds}")
        runs = df[(df.dataset == ds) & (df.run == 0)]
        with figure(ncols=len(sigmas), width="double", height=2.2, sharey=True) as (fig, axes):
            for ax, s in zip(np.atleast_1d(axes), sigmas, strict=True):
                r = runs[runs.sigma_x == s].sort_values("instance")
                for k, acct in enumerate(("fsrc", "filter", "composition")):
                    ax.step(r.start_day, r[acct], where="post", color=COLORS[k], label=LABELS[acct])
                ax.set(title=f"σ_X = {s}", xlabel="day", yscale="log")
            np.atleast_1d(axes)[0].set_ylabel("cumulative ε (run 0)")
            np.atleast_1d(axes)[0].legend()
            save(fig, outdir / f"online_spend_{ds}")


def plot_heatmap(df: pd.DataFrame, outdir: Path) -> None:
    """Fig. 1: ex-ante minus ex-post eps, with worst-case stopping-time quantiles."""
    rhos = sorted(df.threshold.unique())
    with figure(ncols=len(rhos), width="double", height=2.4) as (fig, axes):
        for ax, rho in zip(np.atleast_1d(axes), rhos, strict=True):
            sub = df[df.threshold == rho]
            grid = sub.pivot(index="sigma_x", columns="t", values="difference")
            lim = float(np.nanmax(np.abs(grid.to_numpy())))
            mesh = ax.pcolormesh(
                grid.columns,
                grid.index,
                grid.to_numpy(),
                cmap="RdBu",
                vmin=-lim,
                vmax=lim,
                shading="nearest",
            )
            q = sub.groupby("sigma_x")[["median_stop", "p80_stop"]].first()
            ax.plot(q.median_stop, q.index, color="tab:blue", ls="--", label="median stop")
            ax.plot(q.p80_stop, q.index, color="tab:red", label="80th percentile")
            ax.set(
                xlim=(grid.columns.min(), grid.columns.max()),
                title=f"ρ = {rho}",
                xlabel="halting step t",
                ylabel="σ_X",
            )
            fig.colorbar(mesh, ax=ax, label="ex-ante − ex-post ε")
        np.atleast_1d(axes)[0].legend(loc="upper right")
        save(fig, outdir / "heatmap_above_threshold")


def plot_threshold_sweep(df: pd.DataFrame, outdir: Path) -> None:
    """Fig. 2: ex-post loss of halting at t against rho."""
    with figure(width="single") as (fig, ax):
        for k, (t, sub) in enumerate(df.groupby("t")):
            ax.plot(sub.threshold, sub.expost, color=COLORS[k % len(COLORS)], label=f"t = {t}")
        ax.set(
            xlabel="threshold ρ",
            ylabel="ex-post ε",
            yscale="log",
            title=f"Δ = 1e-3, σ_X = {df.sigma_x.iloc[0]}",
        )
        ax.legend()
        save(fig, outdir / "expost_vs_threshold")


def plot_rnm_mc(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 3/6: numerical bound against Monte Carlo mean and standard deviation over d."""
    sigmas = sorted(df.sigma.unique())
    with figure(ncols=len(sigmas), width="double", height=2.3) as (fig, axes):
        for ax, s in zip(np.atleast_1d(axes), sigmas, strict=True):
            sub = df[df.sigma == s]
            g = sub.replace([np.inf, -np.inf], np.nan).groupby("d")
            mean, sd, num = g.estimate.mean(), g.estimate.std(), g.numeric.first()
            ax.plot(num.index, num, color=COLORS[2], label="numerical integration")
            ax.plot(mean.index, mean, color=COLORS[4], label="Monte Carlo mean")
            ax.fill_between(mean.index, mean - sd, mean + sd, color=COLORS[4], alpha=0.3, lw=0)
            ax.set(
                xscale="log", xlabel="d", title=f"σ = {s}, {int(sub.n_samples.iloc[0]):.0e} samples"
            )
        np.atleast_1d(axes)[0].set_ylabel("ε")
        np.atleast_1d(axes)[0].legend()
        save(fig, outdir / "rnm_monte_carlo")


def plot_rnm_bounds(df: pd.DataFrame, outdir: Path) -> None:
    """Figs. 7/8: pure RNM eps, the analytic Gaussian with sqrt(d) Delta, their difference."""
    with figure(ncols=3, width="double", height=2.3) as (fig, axes):
        for ax, col, title in zip(
            axes,
            ("ours", "post_processing", "difference"),
            ("ours (δ = 0)", "analytic Gaussian, √d Δ", "difference"),
            strict=True,
        ):
            grid = df.pivot(index="sigma", columns="d", values=col)
            mesh = ax.pcolormesh(
                grid.columns,
                grid.index,
                grid.to_numpy(),
                shading="nearest",
                cmap="RdBu" if col == "difference" else "viridis",
            )
            ax.set(xscale="log", xlabel="d", ylabel="σ", title=title)
            fig.colorbar(mesh, ax=ax)
        save(fig, outdir / "rnm_bounds")


PLOTS = {
    "offline": plot_offline,
    "online": plot_online,
    "heatmap": plot_heatmap,
    "threshold_sweep": plot_threshold_sweep,
    "rnm_mc": plot_rnm_mc,
    "rnm_bounds": plot_rnm_bounds,
}

if __name__ == "__main__":
    table, csv, outdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    PLOTS[table](pd.read_csv(csv), outdir)
