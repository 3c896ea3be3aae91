"""Numbers of the selection experiments compared with the paper (config/selection/paper.yaml).

Every key is computed from the merged tables in ``results/selection/<scale>/``; a missing
table leaves its keys out. Definitions fixed before looking at results:

* ``eps90``: the smallest eps at which a mechanism reaches accuracy 0.9 (eq. 39), by linear
  interpolation of accuracy in log eps between the grid points around the crossing
  (summaries.py).
* "less than half the budget": eps90 of ours < eps90 of post-processing / 2.
* "competitive": the better of EM / permute-and-flip needs at most 1.2 x ours' eps90.
* online "benefit": mean final eps of FSRC below the Whitehouse filter's at that sigma_X.
* a calibration reading "supports" Figs. 12b/15 when ours' eps90 is below both EM's and
  permute-and-flip's under it; a scaling supports an online claim when the claim holds on it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.metric_keys import NUMBER, any_of
from experiments.selection.calibration import MECHANISMS, READINGS
from experiments.selection.scalings import SCALINGS
from experiments.selection.schema import DATASETS
from experiments.selection.summaries import TARGET_ACCURACY, eps_at_accuracy, online_final

COMPETITIVE_FACTOR = 1.2
#: The offline table's mechanisms (eps90 keys).
OFFLINE_MECHANISMS = (
    "gaussian_ours",
    "gaussian_post",
    "exponential",
    "permute_and_flip",
    "laplace_rnm",
    "laplace_post",
)
_TASK = rf"{any_of(DATASETS)}_d\d+"
_SCALING = f"scaling_{any_of(SCALINGS)}"
_READING = any_of(READINGS)
#: The online claims of a dataset (``0.06``) and of a scaling (``0p06``: keys without a ".").
_CLAIMS = "fsrc_below_filter_(?:all|above_0{0}06|0{0}04)"
_CLAIMS_DOT, _CLAIMS_P = _CLAIMS.format(r"\."), _CLAIMS.format("p")
#: Every key :func:`metrics` returns, as full-match patterns: the scoreboard refuses a
#: paper.yaml key or reason field that matches none (experiments/scoreboard/scoring.py).
KEYS = (
    # offline
    f"eps90_{any_of(OFFLINE_MECHANISMS)}_{_TASK}",
    f"eps90_ratio_{_TASK}",
    "(?:half_budget|ours_beats_em_pf|em_pf_competitive|ours_beats_laplace_post"
    f"|ours_beats_laplace_rnm)_{_TASK}",
    # online
    f"(?:fsrc_minus_filter|f1)_{any_of(DATASETS)}_s{NUMBER}",
    f"{_CLAIMS_DOT}_{any_of(DATASETS)}",
    # scalings (keys without a "."; sigma_x's "." written "p")
    f"(?:n_users|n_days|n_above|max_day|max_value|valid_sensitivity)_{_SCALING}",
    f"(?:fsrc_over_filter|f1)_{_SCALING}_sx{NUMBER.replace('.', 'p')}",
    f"{_CLAIMS_P}_{_SCALING}",
    "scalings_count",
    f"scalings_supporting_{_CLAIMS_P}",
    # calibration
    f"eps90_{any_of(MECHANISMS)}_{_TASK}_{_READING}",
    f"ours_beats_em_pf_{_TASK}_{_READING}",
    "readings_count",
    f"(?:readings_supporting_ours|em_pf_sensitivity_to_lose)_{_TASK}",
    # threshold sweep, heatmap, report noisy max
    r"argmin_threshold_t\d+",
    "heatmap_improved_fraction",
    "heatmap_gain_grows_with_threshold",
    rf"mc_median_rel_error_s{NUMBER}_d\d+",
    "mc_error_grows_with_d",
    "rnm_max_difference",
    "rnm_max_difference_at_max_d_min_sigma",
    # for the docs (pipeline/post/doc_blocks.py), not checks
    f"(?:fsrc|filter|composition)_mean_{any_of(DATASETS)}_s{NUMBER}",
    f"fsrc_paper_reading_max_(?:gap|delta)_{any_of(DATASETS)}",
    f"heatmap_(?:improved_fraction|gain_first_t_mean|gain_first_t_max)_rho{NUMBER}",
    "heatmap_min_difference",
    rf"mc_(?:mean|sd|numeric)_s{NUMBER}_d\d+",
    "rnm_min_difference",
)


def offline_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    out: dict[str, float | bool] = {}
    for (ds, d), sub in df.groupby(["dataset", "d"], sort=False):
        eps90 = {
            mech: eps_at_accuracy(m.eps.to_numpy(), m.accuracy.to_numpy(), TARGET_ACCURACY)
            for mech, m in sub.groupby("mechanism")
        }
        tag = f"{ds}_d{d}"
        for mech, value in eps90.items():
            out[f"eps90_{mech}_{tag}"] = value
        ours, post = eps90["gaussian_ours"], eps90["gaussian_post"]
        out[f"eps90_ratio_{tag}"] = ours / post
        out[f"half_budget_{tag}"] = bool(ours < post / 2)
        best_pure = min(eps90["exponential"], eps90["permute_and_flip"])
        out[f"ours_beats_em_pf_{tag}"] = bool(ours < best_pure)
        out[f"em_pf_competitive_{tag}"] = bool(best_pure <= COMPETITIVE_FACTOR * ours)
        out[f"ours_beats_laplace_post_{tag}"] = bool(ours < eps90["laplace_post"])
        out[f"ours_beats_laplace_rnm_{tag}"] = bool(ours < eps90["laplace_rnm"])
    return out


def _fsrc_claims(means: pd.DataFrame, tag: str) -> dict[str, float | bool]:
    """The three online claims (Figs. 4/17, 5, 19) of per-sigma_X mean final spends."""
    benefit = means.fsrc < means["filter"]
    out: dict[str, float | bool] = {
        f"fsrc_below_filter_all_{tag}": bool(benefit.all()),
        f"fsrc_below_filter_above_0.06_{tag}": bool(benefit[means.index > 0.06].all()),
    }
    if 0.04 in means.index:
        out[f"fsrc_below_filter_0.04_{tag}"] = bool(benefit[0.04])
    return out


def online_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    out: dict[str, float | bool] = {}
    final = online_final(df)
    for ds, sub in final.groupby("dataset", sort=False):
        means = sub.groupby("sigma_x")[["fsrc", "filter", "f1"]].mean()
        for sx, row in means.iterrows():
            out[f"fsrc_minus_filter_{ds}_s{sx:g}"] = float(row.fsrc - row["filter"])
            out[f"f1_{ds}_s{sx:g}"] = float(row.f1)
        out.update(_fsrc_claims(means, str(ds)))
        # for the docs (not checks): each accountant's mean final spend per sigma_X
        spends = sub.groupby("sigma_x")[["fsrc", "filter", "composition"]].mean()
        for sx, row in spends.iterrows():
            for accountant in ("fsrc", "filter", "composition"):
                out[f"{accountant}_mean_{ds}_s{sx:g}"] = float(row[accountant])
        # and the paper's reading of FSRC (delta_t = 1/N per instance): its largest distance
        # to ours in final eps, and its largest union-bound delta, over every run
        if {"fsrc_paper", "fsrc_paper_delta"} <= set(sub.columns):
            gap = (sub.fsrc_paper - sub.fsrc).abs().max()
            out[f"fsrc_paper_reading_max_gap_{ds}"] = float(gap)
            out[f"fsrc_paper_reading_max_delta_{ds}"] = float(sub.fsrc_paper_delta.max())
    return out


def scalings_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    """Per LCL scaling (keys ``..._scaling_<name>``): N, days, days above rho, the day of the
    maximum, FSRC / filter per sigma_X (``_sx0p04``) and the online claims; and how many
    scalings support each claim (``scalings_supporting_<claim>``). Keys have no ".", so a
    format template can name them."""
    out: dict[str, float | bool] = {}
    support: dict[str, int] = {}
    for name, sub in df.groupby("scaling", sort=False):
        tag = f"scaling_{name}"
        first = sub.iloc[0]
        for col in ("n_users", "n_days", "n_above", "max_day", "max_value", "valid_sensitivity"):
            out[f"{col}_{tag}"] = float(first[col])
        means = sub.groupby("sigma_x")[["fsrc", "filter", "f1"]].mean()
        for sx, row in means.iterrows():
            sx_key = f"{sx:g}".replace(".", "p")
            out[f"fsrc_over_filter_{tag}_sx{sx_key}"] = float(row.fsrc / row["filter"])
            out[f"f1_{tag}_sx{sx_key}"] = float(row.f1)
        for key, value in _fsrc_claims(means, tag).items():
            claim = key.removesuffix(f"_{tag}").replace(".", "p")
            out[f"{claim}_{tag}"] = value
            support[claim] = support.get(claim, 0) + int(value)
    out["scalings_count"] = float(df.scaling.nunique())
    for claim, n in support.items():
        out[f"scalings_supporting_{claim}"] = float(n)
    return out


def calibration_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    """eps90 of EM and permute-and-flip per (task, reading): ``eps90_<mech>_<task>_<reading>``."""
    out: dict[str, float | bool] = {}
    for (ds, d, reading, mech), sub in df.groupby(
        ["dataset", "d", "reading", "mechanism"], sort=False
    ):
        out[f"eps90_{mech}_{ds}_d{d}_{reading}"] = eps_at_accuracy(
            sub.eps.to_numpy(), sub.accuracy.to_numpy(), TARGET_ACCURACY
        )
    return out


def calibration_claims(offline: pd.DataFrame, calibration: pd.DataFrame) -> dict[str, float | bool]:
    """Which readings support "ours better than EM / PF" (ours' eps90 below both), per task:
    ``ours_beats_em_pf_<task>_<reading>``, their count ``readings_supporting_ours_<task>``
    (of ``readings_count``), and ``em_pf_sensitivity_to_lose_<task>``: the multiple of 1/N
    that EM / PF's (general) sensitivity must reach before they need ours' eps90 (their eps90
    is proportional to it)."""
    out: dict[str, float | bool] = {}
    base = offline_metrics(offline)
    cal = calibration_metrics(calibration)
    readings = list(dict.fromkeys(calibration.reading))
    out["readings_count"] = float(len(readings))
    for ds, d in dict.fromkeys(zip(calibration.dataset, calibration.d, strict=True)):
        tag = f"{ds}_d{d}"
        ours = base.get(f"eps90_gaussian_ours_{tag}")
        if ours is None:
            continue
        n = 0
        for r in readings:
            pure = min(cal[f"eps90_{m}_{tag}_{r}"] for m in ("exponential", "permute_and_flip"))
            beats = bool(ours < pure)
            out[f"ours_beats_em_pf_{tag}_{r}"] = beats
            n += beats
        out[f"readings_supporting_ours_{tag}"] = float(n)
        best = min(base[f"eps90_{m}_{tag}"] for m in ("exponential", "permute_and_flip"))
        out[f"em_pf_sensitivity_to_lose_{tag}"] = float(ours) / float(best)
    return out


def threshold_sweep_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    out: dict[str, float | bool] = {}
    for t, sub in df.groupby("t"):
        out[f"argmin_threshold_t{t}"] = float(sub.threshold.to_numpy()[np.argmin(sub.expost)])
    return out


def heatmap_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    out: dict[str, float | bool] = {"heatmap_improved_fraction": float((df.difference > 0).mean())}
    first = df[df.t == df.t.min()].groupby("threshold").difference.mean()
    out["heatmap_gain_grows_with_threshold"] = bool(np.all(np.diff(first.to_numpy()) > 0))
    # for the docs (not checks): per threshold, the share of cells where ex-post is better
    # and the gain at the first t (mean and max over sigma_X); the smallest difference
    for rho, rows in df.groupby("threshold"):
        gain = rows[rows.t == df.t.min()].difference
        out[f"heatmap_improved_fraction_rho{rho:g}"] = float((rows.difference > 0).mean())
        out[f"heatmap_gain_first_t_mean_rho{rho:g}"] = float(gain.mean())
        out[f"heatmap_gain_first_t_max_rho{rho:g}"] = float(gain.max())
    out["heatmap_min_difference"] = float(df.difference.min())
    return out


def rnm_mc_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    out: dict[str, float | bool] = {}
    err = (df.estimate - df.numeric).abs() / df.numeric
    g = err.replace([np.inf], np.nan).groupby([df.sigma, df.d]).median()
    for (s, d), value in g.items():
        out[f"mc_median_rel_error_s{s:g}_d{d}"] = float(value)
    out["mc_error_grows_with_d"] = bool(
        all(g.xs(s, level=0).iloc[-1] > g.xs(s, level=0).iloc[0] for s in df.sigma.unique())
    )
    # for the docs (not checks): mean and s.d. of the estimates over trials, the bound
    for (s, d), rows in df.groupby(["sigma", "d"]):
        out[f"mc_mean_s{s:g}_d{d}"] = float(rows.estimate.mean())
        out[f"mc_sd_s{s:g}_d{d}"] = float(rows.estimate.std())
        out[f"mc_numeric_s{s:g}_d{d}"] = float(rows.numeric.iloc[0])
    return out


def rnm_bounds_metrics(df: pd.DataFrame) -> dict[str, float | bool]:
    top = df.loc[df.difference.idxmax()]
    return {
        "rnm_max_difference": float(top.difference),
        "rnm_min_difference": float(df.difference.min()),  # for the docs, not a check
        "rnm_max_difference_at_max_d_min_sigma": bool(
            top.d == df.d.max() and top.sigma == df.sigma.min()
        ),
    }


METRICS = {
    "offline": offline_metrics,
    "online": online_metrics,
    "threshold_sweep": threshold_sweep_metrics,
    "heatmap": heatmap_metrics,
    "rnm_mc": rnm_mc_metrics,
    "rnm_bounds": rnm_bounds_metrics,
    "scalings": scalings_metrics,
    "calibration": calibration_metrics,
}


def metrics(results_dir: Path) -> dict[str, float | bool]:
    """Every key computable from the tables present in ``results_dir``."""
    out: dict[str, float | bool] = {}
    for table, fn in METRICS.items():
        path = Path(results_dir) / f"{table}.csv"
        if path.is_file():
            out.update(fn(pd.read_csv(path)))
    offline, calibration = (Path(results_dir) / f"{t}.csv" for t in ("offline", "calibration"))
    if offline.is_file() and calibration.is_file():
        out.update(calibration_claims(pd.read_csv(offline), pd.read_csv(calibration)))
    return out
