"""CPU time of the Adult release job's classifier fit: row-major against column-major features.

Each Adult release or baseline job (experiments/adult_synth/synthesis.py, ``accuracies``)
fits a GradientBoostingClassifier to the one-hot features of every synthetic set; at the
default scale those fits are most of a job's CPU (issue 44). The trees read one feature over
a node's rows at a time, so the layout of the feature matrix decides how far apart in memory
those reads are. This script fits the same classifier to the training part's features in both
layouts, interleaved, reports the median CPU time of the process (``time.process_time``, so
other work on a shared machine does not distort it) and the ratio, and checks that both
layouts give the same trees and predictions, byte for byte.

    python -m benchmarks.adult_classifier --repeats 3

The features are those of the training part of a 40/40/20 split of the processed Adult table
(``data/processed/adult.csv``: ``snakemake --cores 1 data/processed/adult.csv``); with
``--random-rows N`` they are N rows of uniform codes over Adult's domain sizes (data/README.md)
instead, and no data file is read.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier

from experiments.adult_synth.data import load, one_hot, split

TARGET = "income"
#: The processed Adult table's columns and domain sizes (data/README.md), for ``--random-rows``.
ADULT_SIZES = {
    "age": 8,
    "workclass": 7,
    "education": 16,
    "marital-status": 7,
    "occupation": 14,
    "relationship": 6,
    "race": 5,
    "sex": 2,
    "capital-gain": 2,
    "capital-loss": 2,
    "hours-per-week": 10,
    "native-country": 41,
    TARGET: 2,
}


def random_frame(rows: int, domain: dict[str, int], rng: np.random.Generator) -> pd.DataFrame:
    """``rows`` rows of uniform codes over ``domain``."""
    return pd.DataFrame({c: rng.integers(0, k, rows) for c, k in domain.items()})


def fit_once(x: np.ndarray, y: np.ndarray, trees: int) -> tuple[float, bytes]:
    """CPU seconds of one fit, and the fitted trees and predictions as bytes."""
    started = time.process_time()
    clf = GradientBoostingClassifier(n_estimators=trees, random_state=7).fit(x, y)
    seconds = time.process_time() - started
    fitted = [
        (t.tree_.feature.tobytes(), t.tree_.threshold.tobytes(), t.tree_.value.tobytes())
        for t in clf.estimators_[:, 0]
    ]
    return seconds, pickle.dumps((fitted, clf.predict(np.ascontiguousarray(x)).tobytes()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/processed/adult.csv"))
    parser.add_argument("--domain", type=Path, default=Path("data/processed/adult_domain.json"))
    parser.add_argument("--random-rows", type=int, default=0, help="uniform codes, not Adult")
    parser.add_argument("--trees", type=int, default=100, help="the config's gbc_estimators")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.repeats < 1 or args.trees < 1 or args.random_rows < 0:
        raise ValueError("--repeats and --trees must be >= 1, --random-rows >= 0")
    rng = np.random.default_rng(0)
    if args.random_rows:
        domain = ADULT_SIZES
        train = random_frame(args.random_rows, domain, rng)
    else:
        frame, domain = load(args.data, args.domain, TARGET)
        train = split(frame, domain, TARGET, 0.4, 0.4, rng).train
    x = one_hot(train, domain, TARGET)
    y = train[TARGET].to_numpy()
    layouts = {"row-major (C)": x, "column-major (F)": np.asfortranarray(x)}
    times: dict[str, list[float]] = {name: [] for name in layouts}
    results = set()
    for _ in range(args.repeats):
        for name, features in layouts.items():
            seconds, fitted = fit_once(features, y, args.trees)
            times[name].append(seconds)
            results.add(fitted)
    print(f"{x.shape[0]} rows x {x.shape[1]} features, {args.trees} trees, {args.repeats} repeats")
    print()
    print("| layout | median CPU s | ratio to row-major |")
    print("|---|---:|---:|")
    base = statistics.median(times["row-major (C)"])
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"| {name} | {median:.2f} | {median / base:.2f} |")
    print(f"\nsame trees and predictions in both layouts: {len(results) == 1}")


if __name__ == "__main__":
    main()
