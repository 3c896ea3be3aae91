"""Brownian releases of the selected marginals -> Private-PGM -> synthetic data -> accuracy.

The selected k 2-way marginals of the training part are one vector of counts; under
substitution (experiments/adult_synth/neighbours.py) one row leaves one cell of each marginal
and enters another, so its l2-sensitivity is sqrt(2 k). The Brownian mechanism
(accounting.mechanisms.brownian) releases it at the levels eps_1 < eps_2 < ... (order alpha)
with variance T_i = alpha 2 k / (2 eps_i) per cell. Each release is
fitted by Private-PGM (``mbi`` 2.x, mirror descent, float64) and sampled with as many rows as
the training part; a gradient-boosting classifier on one-hot features of each synthetic set
is scored on the validation and test parts.

Private-PGM sees each column by its position in the domain (0, 1, ...), never by its name:
``mbi`` iterates sets of attributes internally (``MarkovRandomField.synthetic_data`` stacks a
column's parents in the order of a set, which decides how its random draws are spent), and a
set of strings iterates in an order salted by PYTHONHASHSEED, whereas an int hashes to itself.
With int attributes every run draws the same synthetic data whatever the hash seed.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence

from experiments.common.jax_setup import cpu_only_platform, use_persistent_cache

cpu_only_platform()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

with warnings.catch_warnings():
    # mbi warns at import whenever JAX's compilation cache is on (JAX's default) that it is
    # "counterproductive"; for these jobs it pays (measured: jax_setup.py), so in every Adult
    # job's log the warning was noise. Only that warning is silenced, only here.
    warnings.filterwarnings("ignore", "JAX persistent compilation cache", UserWarning)
    import mbi  # noqa: E402

use_persistent_cache()  # after importing mbi (jax_setup.py)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import sparse  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier  # noqa: E402

from accounting.mechanisms.brownian import (  # noqa: E402
    NoiseReductionRun,
    brownian_mechanism,
    fixed_schedule,
)
from experiments.adult_synth.data import Split, one_hot  # noqa: E402
from experiments.adult_synth.neighbours import marginals_l2  # noqa: E402
from experiments.adult_synth.queries import marginal  # noqa: E402
from experiments.common.progress import Progress  # noqa: E402
from experiments.common.timings import record  # noqa: E402


def true_answers(
    train: pd.DataFrame, domain: dict[str, int], cliques: Sequence[tuple]
) -> np.ndarray:
    """The selected marginals of ``train``, concatenated in ``cliques`` order."""
    return np.concatenate([marginal(train, c, domain) for c in cliques])


def brownian_releases(
    answers: np.ndarray,
    n_queries: int,
    alpha: float,
    levels: Sequence[float],
    rng: np.random.Generator,
) -> NoiseReductionRun:
    """All releases of one repeat at ``levels`` (the Brownian path is fixed by ``rng``);
    l2-sensitivity sqrt(2 k) for k = ``n_queries`` marginals (substitution neighbours)."""
    sensitivity = marginals_l2(n_queries)
    return brownian_mechanism(
        answers, sensitivity=sensitivity, alpha=alpha, selector=fixed_schedule(levels), rng=rng
    )


def pgm_blocks(iters: int) -> int:
    """Blocks of mirror-descent iterations in a fit: mbi runs ``CALLBACK_EVERY`` (50) at a time."""
    return math.ceil(iters / mbi.estimation.CALLBACK_EVERY)


def fit_pgm(
    estimate: np.ndarray,
    variance: float,
    domain: dict[str, int],
    cliques: Sequence[tuple],
    iters: int,
    one_way: Sequence[tuple[str, np.ndarray, float, np.ndarray | None]] = (),
    progress: Progress | None = None,
) -> mbi.MarkovRandomField:
    """Private-PGM (mirror descent) from one noisy release; std sqrt(variance) per cell.

    The model's attributes are the column positions in ``domain`` (see the module docstring).
    ``one_way``: further measurements (column, noisy counts, std, compression or None), MST's
    1-way marginals; with a compression (``queries.compression``) the measurement is merged
    onto the compressed domain as MST does (mbi's ``LinearMeasurement.compress``: the merged
    cells' sum, scaled so that its noise keeps the std).

    ``variance = 0`` (the non-DP baseline) uses unit weights: the loss then fits the exact
    marginals. ``progress`` advances by one after each of the :func:`pgm_blocks` blocks of
    iterations (mbi's callback, once the block has run); the fit is the same without it.
    """
    position = {c: i for i, c in enumerate(domain)}
    dom = mbi.Domain(range(len(domain)), [domain[c] for c in domain])
    sizes = [math.prod(domain[a] for a in c) for c in cliques]
    parts = np.split(estimate, np.cumsum(sizes)[:-1])
    std = math.sqrt(variance) if variance > 0 else 1.0
    measurements = [
        mbi.LinearMeasurement(part, tuple(position[a] for a in c), stddev=std)
        for part, c in zip(parts, cliques, strict=True)
    ]
    for c, y, sd, mapping in one_way:
        one = mbi.LinearMeasurement(y, (position[c],), stddev=sd)
        if mapping is not None:
            one = one.compress({position[c]: mapping}, mbi.Domain([position[c]], [len(y)]))
        measurements.append(one)

    def block_done(state: object) -> None:
        jax.block_until_ready(state)  # JAX dispatches asynchronously: count finished blocks
        if progress is not None:
            progress.advance(note="Private-PGM")

    model = mbi.estimation.MirrorDescent().estimate(
        dom, measurements, iters=iters, callback_fn=None if progress is None else block_done
    )
    jax.block_until_ready(model.marginals)  # JAX dispatches asynchronously: time the fit here
    return model


def expand(
    frame: pd.DataFrame, maps: Mapping[str, np.ndarray], rng: np.random.Generator
) -> pd.DataFrame:
    """Compressed codes back to the original values, as MST's decompression: a code that
    merged several values becomes one of them uniformly at random."""
    out = frame.copy()
    for c, mapping in maps.items():
        codes = frame[c].to_numpy()
        values = np.empty_like(codes)
        for code in range(int(mapping.max()) + 1):
            rows = codes == code
            members = np.flatnonzero(mapping == code)
            values[rows] = members[rng.integers(0, len(members), int(rows.sum()))]
        out[c] = values
    return out


def accuracies(
    model: mbi.MarkovRandomField,
    split: Split,
    n_synth: int,
    gbc_estimators: int,
    rng: np.random.Generator,
    maps: Mapping[str, np.ndarray] | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Validation and test accuracy of a classifier fitted to each of ``n_synth`` synthetic sets.

    ``maps``: the model is over MST's compressed domain; each synthetic set is expanded back
    (``expand``) before the classifier sees it. ``progress`` advances by one after each set.

    Wall times go to the sidecar (``experiments.common.timings``: ``sample_s``, ``fit_s``).

    The classifier is fitted to the one-hot features as a sparse (CSC) matrix: scikit-learn's
    sparse splitter visits only a node's nonzero entries of a feature (one in ten here), where
    the dense one sorts all of the node's rows; it runs the same exact greedy search on the
    same criterion in 0.4 of the CPU time (measured: benchmarks/README.md). It sums a node's
    rows in another order, so a tie between equally good splits can go the other way, and the
    later trees, fitted to the residuals, then differ too: another of the classifiers that the
    greedy search allows, as arbitrary as its ``random_state``.
    """
    columns = list(split.domain)
    x_val = one_hot(split.val, split.domain, split.target)
    x_test = one_hot(split.test, split.domain, split.target)
    rows = []
    for s in range(n_synth):
        started = time.perf_counter()
        # mbi samples from numpy's legacy global state; seed it from this job's generator
        np.random.seed(int(rng.integers(0, 2**32 - 1)))  # noqa: NPY002
        synth = model.synthetic_data(rows=len(split.train))
        frame = pd.DataFrame({c: np.asarray(synth.data[i]) for i, c in enumerate(columns)})
        if maps:
            frame = expand(frame, maps, rng)
        record("sample_s", time.perf_counter() - started)
        started = time.perf_counter()
        y = frame[split.target].to_numpy()
        if np.unique(y).size < 2:  # one class only: the fitted classifier is that constant
            pred_val = np.full(len(split.val), y[0])
            pred_test = np.full(len(split.test), y[0])
        else:
            clf = GradientBoostingClassifier(
                n_estimators=gbc_estimators, random_state=int(rng.integers(0, 2**31 - 1))
            )
            clf.fit(sparse.csc_matrix(one_hot(frame, split.domain, split.target)), y)
            pred_val, pred_test = clf.predict(x_val), clf.predict(x_test)
        record("fit_s", time.perf_counter() - started)
        if progress is not None:
            progress.advance(note=f"synthetic set {s + 1}/{n_synth} scored")
        rows.append(
            {
                "synth": s,
                "val_acc": float(np.mean(pred_val == split.val[split.target].to_numpy())),
                "test_acc": float(np.mean(pred_test == split.test[split.target].to_numpy())),
            }
        )
    return pd.DataFrame(rows)
