"""The tables of the Adult synthetic-data experiment (Räisä et al., Sec. 6); run.py says what
each table is and how its streams are seeded.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from accounting.curves.rdp import expost_rdp_to_approximate_dp
from experiments.adult_synth import variants
from experiments.adult_synth.checks import CHECKS, accepted_index
from experiments.adult_synth.data import Split, load, split
from experiments.adult_synth.metrics import fractions_above_threshold
from experiments.adult_synth.queries import Selection, compress, select_queries
from experiments.adult_synth.schema import Params
from experiments.common.job import Job, substream
from experiments.common.progress import Progress
from experiments.common.timings import timed

log = logging.getLogger(__name__)


def fixed_split(job: Job, p: Params, rng: np.random.Generator) -> Split:
    """The train/validation/test split every table shares (stream 0)."""
    variants.check_data(p, job.input("data"))
    frame, domain = load(job.input("data"), job.input("domain"), p.target)
    return split(frame, domain, p.target, p.train_frac, p.val_frac, substream(rng, 0), p.n_rows)


def _sizes(s: Split) -> dict[str, int]:
    return {"n_train": len(s.train), "n_val": len(s.val), "n_test": len(s.test)}


def selection(s: Split, p: Params, rng: np.random.Generator) -> Selection:
    """The query selection of the split (stream 1): the same draws in every table."""
    return select_queries(
        s.train,
        s.domain,
        p.target,
        p.eps_query,
        p.alpha,
        p.one_way_share,
        substream(rng, 1),
        p.compress_domain,
    )


@dataclass(frozen=True)
class ModelData:
    """What Private-PGM is fitted to: the training part and its domain (MST-compressed where
    the variant compresses), the 1-way measurements it adds, the compression maps."""

    train: pd.DataFrame
    domain: dict[str, int]
    one_way: list[tuple[str, np.ndarray, float, np.ndarray | None]]
    maps: dict[str, np.ndarray]


def model_data(
    s: Split, p: Params, rng: np.random.Generator, cliques: list[tuple[str, str]]
) -> ModelData:
    """The model's data under the variant (MST's 1-way measurements and compression, from
    the selection's noisy 1-way marginals, redrawn from stream 1: the selection must be the
    table's); App. D's reading: the training part as it is."""
    if not (p.one_way_in_model or p.compress_domain):
        return ModelData(s.train, s.domain, [], {})
    sel = selection(s, p, rng)
    if list(sel.cliques) != cliques:
        raise ValueError("inputs.selection was not made from this split and seed")
    maps = dict(zip(s.domain, sel.maps, strict=True)) if p.compress_domain else {}
    train, domain = compress(s.train, s.domain, maps)
    one_way = [
        (c, y, sel.one_way_sigma, maps.get(c))
        for c, y in zip(s.domain, sel.one_way, strict=True)
        if p.one_way_in_model
    ]
    return ModelData(train, domain, one_way, maps)


def selection_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """The selection's RDP ledger and the chosen 2-way marginals (stream 1)."""
    s = fixed_split(job, p, rng)
    sel = selection(s, p, rng)
    rows = [
        {"step": name, "a": "", "b": "", "source": "measure", "rdp": e} for name, e in sel.steps
    ]
    for i, (a, b) in enumerate(sel.tree):  # steps[1:] are the tree picks, in order
        rows[i + 1].update(a=a, b=b, source="tree")
    rows += [
        {"step": "label_pair", "a": a, "b": b, "source": "label", "rdp": 0.0}
        for a, b in sel.cliques[len(sel.tree) :]
    ]
    log.info("selection RDP %.6g at alpha=%g, %d queries", sel.rdp, p.alpha, len(sel.cliques))
    return pd.DataFrame(rows).assign(alpha=p.alpha, **_sizes(s))


def read_cliques(path: str | Path) -> list[tuple[str, str]]:
    """The selected 2-way marginals from a ``selection`` table, in release order."""
    table = pd.read_csv(path, keep_default_na=False)
    chosen = table[table["source"].isin(["tree", "label"])]
    if chosen.empty:
        raise ValueError(f"{path} selects no queries")
    return list(zip(chosen["a"], chosen["b"], strict=True))


@dataclass(frozen=True)
class Repeat:
    """A release job: repeat ``repeat``. Its streams are keyed by the repeat (run.py), so it
    adds no seed entry of its own."""

    repeat: int

    @property
    def seed(self) -> tuple[int, ...]:
        return ()

    @property
    def stem(self) -> str:
        return f"r{self.repeat}"


def release_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Every release of repeat ``job.setting`` (one job: JAX compiles once for all levels)."""
    from experiments.adult_synth import synthesis  # JAX/mbi only where needed

    repeat = job.setting_as(Repeat).repeat
    s = fixed_split(job, p, rng)
    cliques = read_cliques(job.input("selection"))
    data = model_data(s, p, rng, cliques)
    answers = synthesis.true_answers(data.train, data.domain, cliques)
    path = synthesis.brownian_releases(
        answers, len(cliques), p.alpha, p.eps, substream(rng, 2, repeat)
    )
    tables = []
    per_level = synthesis.pgm_blocks(p.pgm_iters) + p.n_synth
    levels = len(path.estimates)
    progress = Progress(levels * per_level, f"repeat {repeat}: {levels} eps levels")
    for level, (estimate, variance) in enumerate(zip(path.estimates, path.variances, strict=True)):
        with timed("pgm_s"):
            model = synthesis.fit_pgm(
                estimate, variance, data.domain, cliques, p.pgm_iters, data.one_way, progress
            )
        acc = synthesis.accuracies(
            model,
            s,
            p.n_synth,
            p.gbc_estimators,
            substream(rng, 3, repeat, level),
            data.maps,
            progress,
        )
        tables.append(
            acc.assign(
                repeat=repeat,
                level=level,
                eps=p.eps[level],
                variance=variance,
                **_sizes(s),
            )
        )
    return pd.concat(tables, ignore_index=True)


def baseline_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """The same from the noiseless marginals (stream 5)."""
    from experiments.adult_synth import synthesis

    s = fixed_split(job, p, rng)
    cliques = read_cliques(job.input("selection"))
    data = model_data(s, p, rng, cliques)
    answers = synthesis.true_answers(data.train, data.domain, cliques)
    progress = Progress(synthesis.pgm_blocks(p.pgm_iters) + p.n_baseline, "baseline")
    with timed("pgm_s"):
        model = synthesis.fit_pgm(
            answers, 0.0, data.domain, cliques, p.pgm_iters, data.one_way, progress
        )
    acc = synthesis.accuracies(
        model, s, p.n_baseline, p.gbc_estimators, substream(rng, 5), data.maps, progress
    )
    return acc.assign(**_sizes(s))


def checks_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Both checks on the merged releases (check c of repeat r: stream (4, r, c))."""
    releases = pd.read_csv(job.input("releases"))
    means = releases.groupby(["repeat", "level"], as_index=False).agg(
        eps=("eps", "first"),
        val_acc=("val_acc", "mean"),
        test_acc=("test_acc", "mean"),
        n_val=("n_val", "first"),
    )
    rows = []
    for repeat, runs in means.groupby("repeat"):
        runs = runs.sort_values("level")
        if list(runs["level"]) != list(range(len(p.eps))):
            raise ValueError(f"repeat {repeat} lacks levels: has {list(runs['level'])}")
        n_val = int(runs["n_val"].iloc[0])
        for c, kind in enumerate(CHECKS):
            i, n_checks = accepted_index(
                kind,
                runs["val_acc"].tolist(),
                p.threshold,
                p.eps_check,
                p.alpha,
                n_val,
                substream(rng, 4, int(repeat), c),
            )
            eps = float(runs["eps"].iloc[i])
            rows.append(
                {
                    "repeat": repeat,
                    "check": kind,
                    "level": i,
                    "eps": eps,
                    "val_acc": float(runs["val_acc"].iloc[i]),
                    "test_acc": float(runs["test_acc"].iloc[i]),
                    "n_checks": n_checks,
                    "threshold": p.threshold,
                    # Sec. 6: eps_total = eps_query + max(eps, eps_check) (Algorithms 1 and 4)
                    "eps_total": p.eps_query + max(eps, p.eps_check),
                }
            )
    return pd.DataFrame(rows)


def variant_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """One row of the variants table: what the variant changes, its non-DP baseline (mean and
    standard deviation over the runs) and, where its checks ran (``inputs.checks``), Fig. 2c's
    fractions of accepted releases above the threshold and the median accepted eps."""
    base = pd.read_csv(job.input("baseline"))
    v = variants.variant(p.variant)
    row: dict[str, object] = {
        "variant": p.variant,
        "changes": v.changes,
        "n_rows": int(base[["n_train", "n_val", "n_test"]].iloc[0].sum()),
        "n_train": int(base["n_train"].iloc[0]),
        "runs": len(base),
        "baseline_val_acc": float(base["val_acc"].mean()),
        "baseline_val_sd": float(base["val_acc"].std()),
        "baseline_test_acc": float(base["test_acc"].mean()),
        "baseline_test_sd": float(base["test_acc"].std()),
    }
    checks = job.inputs.get("checks")
    if checks:
        table = pd.read_csv(checks)
        row["repeats"] = int(table["repeat"].nunique())
        row.update(fractions_above_threshold(table))
        for kind, rows in table.groupby("check"):
            row[f"median_eps_{kind}"] = float(rows["eps"].median())
    return pd.DataFrame([row])


def table3(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rdp_eps": p.eps,
            "alpha": p.alpha,
            "delta": p.delta,
            "adp_eps": [
                expost_rdp_to_approximate_dp(e, alpha=p.alpha, delta=p.delta) for e in p.eps
            ],
        }
    )
