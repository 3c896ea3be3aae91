"""CPU time of the Adult release job's classifier fit: dense row-major, dense column-major
and sparse (CSC) one-hot features.

Each Adult release or baseline job (experiments/adult_synth/synthesis.py, ``accuracies``)
fits a GradientBoostingClassifier to the one-hot features of every synthetic set; at the
default scale those fits are most of a job's CPU (issue 44). The dense splitter reads one
feature over a node's rows at a time, so the layout decides how far apart in memory those
reads are; the sparse splitter reads only the feature's nonzero entries in the node. This
script fits the same classifier to the training part's features in the three forms,
interleaved, and reports the median CPU time of the process (``time.process_time``, so other
work on a shared machine does not distort it) and the ratio to row-major. It checks that both
dense layouts give the same trees and predictions, byte for byte, and reports how the sparse
fit compares: whether its predictions of the validation part are the same labels, and the
largest difference of its decision function from the dense fit's.

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
from scipy import sparse
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


def fit_once(
    x: np.ndarray | sparse.csc_matrix, y: np.ndarray, trees: int, held_out: np.ndarray
) -> tuple[float, bytes, np.ndarray, np.ndarray]:
    """CPU seconds of one fit; its trees and predictions as bytes; its labels and decision
    function on ``held_out``."""
    started = time.process_time()
    clf = GradientBoostingClassifier(n_estimators=trees, random_state=7).fit(x, y)
    seconds = time.process_time() - started
    fitted = [
        (t.tree_.feature.tobytes(), t.tree_.threshold.tobytes(), t.tree_.value.tobytes())
        for t in clf.estimators_[:, 0]
    ]
    labels = clf.predict(held_out)
    return (
        seconds,
        pickle.dumps((fitted, labels.tobytes())),
        labels,
        clf.decision_function(held_out),
    )


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
        val = random_frame(args.random_rows, domain, rng)
    else:
        frame, domain = load(args.data, args.domain, TARGET)
        parts = split(frame, domain, TARGET, 0.4, 0.4, rng)
        train, val = parts.train, parts.val
    x = one_hot(train, domain, TARGET)
    y = train[TARGET].to_numpy()
    held_out = one_hot(val, domain, TARGET)
    layouts = {
        "row-major (C)": x,
        "column-major (F)": np.asfortranarray(x),
        "sparse (CSC)": sparse.csc_matrix(x),
    }
    times: dict[str, list[float]] = {name: [] for name in layouts}
    dense_results = set()
    labels: dict[str, np.ndarray] = {}
    decisions: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):
        for name, features in layouts.items():
            seconds, fitted, labels[name], decisions[name] = fit_once(
                features, y, args.trees, held_out
            )
            times[name].append(seconds)
            if name != "sparse (CSC)":
                dense_results.add(fitted)
    print(f"{x.shape[0]} rows x {x.shape[1]} features, {args.trees} trees, {args.repeats} repeats")
    print()
    print("| layout | median CPU s | ratio to row-major |")
    print("|---|---:|---:|")
    base = statistics.median(times["row-major (C)"])
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"| {name} | {median:.2f} | {median / base:.2f} |")
    print(f"\nsame trees and predictions in both dense layouts: {len(dense_results) == 1}")
    dense, sparse_fit = "column-major (F)", "sparse (CSC)"
    same = bool(np.array_equal(labels[dense], labels[sparse_fit]))
    gap = float(np.max(np.abs(decisions[dense] - decisions[sparse_fit])))
    print(
        f"sparse against dense, {len(held_out)} validation rows: same labels {same}, "
        f"largest decision-function difference {gap:.3g}"
    )


if __name__ == "__main__":
    main()
