"""Figures of the Taylor et al. reproduction, from the results tables only.

    python -m experiments.taylor_survival.plot SURVIVAL.csv PUREDP.csv OUTDIR

writes into OUTDIR (figures/taylor_survival/<scale>): ``survival`` (P(T >= t) against t,
Fig. 2 of the paper; one column per eps in ``plot_eps``, one row per (sigma, delta, N) of the
sweep, titled with it), ``survival_at_n`` (P(T >= N) against eps, one panel per setting,
three a row) and ``puredp`` (Sec. V-A: eps^t and the survival of the three accountings).
``plot_eps`` is read from the survival table's sidecar.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from experiments.common.plotting import (
    LINESTYLES,
    MAX_HEIGHT,
    colour,
    figure,
    legend_outside,
    row_figure,
    save,
    sci,
    table_params,
)

STYLE = {
    ("additive", ""): (colour("additive"), LINESTYLES[1], "additive"),
    ("advanced", ""): (colour("advanced"), LINESTYLES[3], "advanced (Rogers et al. Thm. 5.1)"),
    ("rdp", ""): (colour("rdp"), LINESTYLES[2], "RDP"),
    ("realisation", "published"): (
        colour("realisation"),
        LINESTYLES[0],
        r"realisation level, printed $(\tilde\delta, \theta)$",
    ),
    ("realisation", "rule"): (
        colour("realisation_rule"),
        LINESTYLES[0],
        r"realisation level, rule's $(\tilde\delta, \theta)$",
    ),
}
SETTING = ["sigma", "delta", "n_max"]


def _setting_label(sigma: float, delta: float, n_max: int) -> str:
    return rf"$\sigma = {sigma:g},\ \delta = {sci(delta, 5)},\ N = {n_max}$"


def _settings(df: pd.DataFrame) -> list[tuple[float, float, int]]:
    return list(df[SETTING].drop_duplicates().sort_values(SETTING).itertuples(index=False))


def _select(df: pd.DataFrame, sigma: float, delta: float, n_max: int) -> pd.DataFrame:
    return df[(df.sigma == sigma) & (df.delta == delta) & (df.n_max == n_max)]


def _curves(ax, df: pd.DataFrame, x: str) -> None:
    """One line per (filter, pair); Monte Carlo curves get a 95% band (1.96 standard errors).

    Survival against the integer t is a step function, drawn with its jumps at the integers
    (``steps-post``: P(T >= t) holds on [t, t + 1)); against eps, a filter without
    randomness (zero standard error) is 0 or 1 and is drawn as a step too, jumping at the
    first eps of the grid where it admits N queries.
    """
    for (filt, pair), (color, ls, label) in STYLE.items():
        d = df[(df["filter"] == filt) & (df["pair"].fillna("") == pair)].sort_values(x)
        if d.empty:
            continue
        step = "post" if x == "t" or d["se"].max() == 0 else None
        ax.plot(
            d[x],
            d["survival"],
            color=color,
            ls=ls,
            label=label,
            drawstyle=f"steps-{step}" if step else "default",
        )
        if d["se"].max() > 0:
            lo = np.clip(d["survival"] - 1.96 * d["se"], 0, 1)
            hi = np.clip(d["survival"] + 1.96 * d["se"], 0, 1)
            ax.fill_between(d[x], lo, hi, color=color, alpha=0.25, lw=0, step=step)


def plot_survival(df: pd.DataFrame, plot_eps: list[float], stem: Path) -> None:
    """One row per (sigma, delta, N) of the sweep, titled with it, one column per eps."""
    settings = _settings(df)
    with row_figure(len(settings), len(plot_eps), sharey=True) as (fig, rows, axes):
        for r, setting in enumerate(settings):
            sub = _select(df, *setting)
            rows[r].suptitle(_setting_label(*setting))
            for c, eps in enumerate(plot_eps):
                ax = axes[r, c]
                _curves(ax, sub[np.isclose(sub.eps, eps)], "t")
                if r == 0:
                    ax.set_title(rf"$\varepsilon = {eps:g}$")
                ax.set_ylim(-0.02, 1.02)
            axes[r, 0].set_ylabel(r"$P(T \geq t)$")
        for ax in axes[-1]:
            ax.set_xlabel("t")
        legend_outside(fig, axes[0, 0])
        save(fig, stem)


def plot_survival_at_n(df: pd.DataFrame, stem: Path) -> None:
    """One panel per (sigma, delta, N), at most three a row (the titles are long)."""
    last = df[df.t == df.n_max]
    settings = _settings(last)
    ncols = min(len(settings), 3)
    nrows = -(-len(settings) // ncols)
    width: Literal["single", "double"] = "single" if ncols == 1 else "double"
    height = min(2.8, (MAX_HEIGHT - 0.8) / nrows) * nrows + (0 if nrows == 1 else 0.8)
    with figure(nrows, ncols, width=width, height=height, squeeze=False, sharey=True) as (
        fig,
        axes,
    ):
        for ax, setting in zip(axes.flat, settings, strict=False):
            _curves(ax, _select(last, *setting), "eps")
            ax.set_title(_setting_label(*setting))
            ax.set_xlabel(r"$\varepsilon$")
        for ax in axes.flat[len(settings) :]:
            ax.remove()
        for ax in axes[:, 0]:
            ax.set_ylabel(r"$P(T \geq N)$")
        legend_outside(fig, axes[0, 0], ncols=1 if width == "single" else 2)
        save(fig, stem)


def plot_puredp(df: pd.DataFrame, stem: Path) -> None:
    colors = {
        "classical": colour("classical"),
        "mechanism": colour("mechanism"),
        "realisation": colour("realisation"),
    }
    with figure(1, 2, width="double") as (fig, axes):
        for (data, name), d in df.groupby(["data", "accounting"]):
            ls = LINESTYLES[int(data)]
            label = rf"{name}, $X = {data}$"
            axes[0].plot(d.t, d.mean_eps, color=colors[name], ls=ls, label=label)
            axes[1].plot(
                d.t, d.survival, color=colors[name], ls=ls, label=label, drawstyle="steps-post"
            )
        axes[0].axhline(df.budget.iloc[0], color=colour("reference"), lw=0.8, label="budget")
        axes[0].set_ylabel(r"mean $\varepsilon^t$ (eqs. 13-15)")
        axes[1].set_ylabel(r"$P(T \geq t)$")
        for ax in axes:
            ax.set_xlabel("t")
        axes[0].set_ylim(0, 2.5 * df.budget.iloc[0])
        legend_outside(fig, axes)
        save(fig, stem)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("survival", type=Path)
    parser.add_argument("puredp", type=Path)
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args(argv)
    survival = pd.read_csv(args.survival)
    plot_eps = [float(e) for e in table_params(args.survival)["plot_eps"]]
    plot_survival(survival, plot_eps, args.outdir / "survival")
    plot_survival_at_n(survival, args.outdir / "survival_at_n")
    plot_puredp(pd.read_csv(args.puredp), args.outdir / "puredp")


if __name__ == "__main__":
    main()
