"""The numbers of this experiment the docs quote (experiments/common/doc_quotes.py): the
metrics, and two tables that lay them out by calibration reading and by LCL scaling.
"""

from __future__ import annotations

import re
from pathlib import Path

from experiments.common.doc_quotes import Generator, MissingResults, Quote, metrics, quotes

SELECTION = (
    Quote(r"argmin_threshold_t\d+", ".3f", "Fig. 2: the threshold minimising the loss at t"),
    Quote(
        r"heatmap_improved_fraction(?:_rho.*)?", ".3f", "Fig. 1: share of cells where ex-post wins"
    ),
    Quote(r"heatmap_gain_first_t_(?:mean|max)_rho.*", ".4f", "Fig. 1: gain at t = 3 over sigma_X"),
    Quote("heatmap_min_difference", ".4f", "Fig. 1: smallest ex-ante minus ex-post"),
    Quote(
        r"mc_(?:mean|sd|numeric)_s[0-9.]+_d(?:2|10|1000)",
        ".4g",
        "Figs. 3, 6: MC mean / s.d., the bound",
    ),
    Quote("rnm_(?:max|min)_difference", ".3g", "Figs. 7, 8: post-processing minus ours, max / min"),
    Quote(r"eps90_(?:gaussian_ours|gaussian_post|ratio)_\w+_d\d+", ".4f", "eps at 90% accuracy"),
    Quote(
        r"eps90_(?:exponential|permute_and_flip|laplace_\w+)_\w+_d\d+", ".4f", "eps90, baselines"
    ),
    Quote(r"readings_supporting_ours_.*", ".0f", "calibration readings under which ours wins"),
    Quote(r"ours_beats_laplace_(?:post|rnm)_.*", "", "ours below Laplace RNM's eps90 (2 readings)"),
    Quote(r"em_pf_sensitivity_to_lose_.*", ".2f", "EM/PF sensitivity (x 1/N) at which ours wins"),
    Quote(r"(?:fsrc|filter|composition)_mean_.*", ".3f", "online: mean final eps per sigma_X"),
    Quote(r"f1_(?:bikes|lcl|near)_s.*", ".2f", "online: mean F1 per sigma_X"),
    Quote(r"fsrc_paper_reading_max_gap_.*", ".4f", "FSRC, paper's delta_t = 1/N: max |eps - ours|"),
    Quote(
        r"fsrc_paper_reading_max_delta_.*", ".3f", "FSRC, paper's delta_t: its union-bound delta"
    ),
)


def selection_readings(results: Path, scale: str) -> str:
    """Figs. 12b, 15: eps90 of EM / permute-and-flip under each calibration reading, per task,
    and ours (``eps90_<mech>_<task>_<reading>``, ``eps90_gaussian_ours_<task>``)."""
    values, line = metrics(results, "selection", scale, "calibration.csv")
    found = [re.fullmatch(r"eps90_exponential_(\w+_d\d+)_(\w+)", k) for k in values]
    tasks = list(dict.fromkeys(m.group(1) for m in found if m))
    readings = list(dict.fromkeys(m.group(2) for m in found if m))
    if not tasks:
        raise MissingResults(f"no calibration metrics in {results / 'selection' / scale}")
    rows = [line, "", "| reading | " + " | ".join(f"EM / PF, {t}" for t in tasks) + " |"]
    rows.append("| --- |" + " --- |" * len(tasks))
    for r in readings:
        em = [values[f"eps90_exponential_{t}_{r}"] for t in tasks]
        pf = [values[f"eps90_permute_and_flip_{t}_{r}"] for t in tasks]
        cells = [f"{e:.4f} / {f:.4f}" for e, f in zip(em, pf, strict=True)]
        rows.append(f"| `{r}` | " + " | ".join(cells) + " |")
    ours = [f"{values.get(f'eps90_gaussian_ours_{t}', float('nan')):.4f}" for t in tasks]
    rows.append("| ours (Gaussian RNM, delta = 0) | " + " | ".join(ours) + " |")
    return "\n".join(rows)


def _delta(value: float) -> str:
    """A sensitivity as the docs write it: ``1/N`` below 1, ``none finite`` for inf."""
    if value == float("inf"):
        return "none finite"
    return f"{value:g}" if value >= 1 else f"1/{round(1 / value):,}"


def selection_scalings(results: Path, scale: str) -> str:
    """Figs. 5, 19, 20 under each LCL scaling: its valid Delta, days, the day of the series'
    maximum and its value, days above rho, FSRC / filter per sigma_X, F1 at the first and last
    sigma_X and the two captions' claims (``..._scaling_<name>`` metrics)."""
    values, line = metrics(results, "selection", scale, "scalings.csv")
    names = [k.removeprefix("n_days_scaling_") for k in values if k.startswith("n_days_scaling_")]
    if not names:
        raise MissingResults(f"no scalings metrics in {results / 'selection' / scale}")
    sigmas = [
        k.rsplit("_sx", 1)[1]
        for k in values
        if k.startswith(f"fsrc_over_filter_scaling_{names[0]}_sx")
    ]
    shown_sigmas = ", ".join(x.replace("p", ".") for x in sigmas)
    rows = [
        line,
        "",
        "| scaling | valid Delta | days | max (day, value) | days >= rho "
        f"| FSRC / filter at sigma_X = {shown_sigmas} | F1 at {sigmas[0].replace('p', '.')} / "
        f"{sigmas[-1].replace('p', '.')} | Fig. 5 / Fig. 19 claim |",
        "| --- | --- | ---: | --- | ---: | --- | --- | --- |",
    ]
    held = {True: "holds", False: "fails"}
    for n in names:
        tag = f"scaling_{n}"
        ratios = ", ".join(f"{values[f'fsrc_over_filter_{tag}_sx{x}']:.3f}" for x in sigmas)
        f1 = f"{values[f'f1_{tag}_sx{sigmas[0]}']:.2f} / {values[f'f1_{tag}_sx{sigmas[-1]}']:.2f}"
        claims = " / ".join(
            held[bool(values.get(f"fsrc_below_filter_{c}_{tag}"))] for c in ("0p04", "above_0p06")
        )
        delta = _delta(values[f"valid_sensitivity_{tag}"])
        rows.append(
            f"| `{n}` | {delta} | {values[f'n_days_{tag}']:.0f} "
            f"| {values[f'max_day_{tag}']:.0f}, {values[f'max_value_{tag}']:.3f} "
            f"| {values[f'n_above_{tag}']:.0f} | {ratios} | {f1} | {claims} |"
        )
    return "\n".join(rows)


DOC_BLOCKS: dict[str, Generator] = {
    "selection-numbers": quotes("selection", "offline.csv", SELECTION),
    "selection-readings": selection_readings,
    "selection-scalings": selection_scalings,
}
