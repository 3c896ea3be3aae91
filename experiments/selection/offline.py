"""Accuracy of offline selection (LPB App. B.3, eq. 39) for Report Noisy Max and baselines.

Acc = 1 - E[|q_{i*} - q_{i_hat}|] / q_max with q_max = 1 (queries are in [0, 1]).
Gaussian and Laplace Report Noisy Max are simulated (mean and standard error over trials);
the exponential mechanism and permute-and-flip use their exact output laws, so their
accuracy is exact (standard error 0).
"""

from __future__ import annotations

import numpy as np

from accounting.mechanisms.selection import (
    exponential_mechanism_probabilities,
    permute_and_flip_probabilities,
)

#: noisy score matrices are drawn this many entries at a time
_CHUNK = 2_000_000


def noisy_max_accuracy(
    queries: np.ndarray, noise: str, scale: float, n_trials: int, rng: np.random.Generator
) -> tuple[float, float]:
    """(mean, standard error) of eq. 39 over ``n_trials`` runs of Report Noisy Max.

    ``noise`` is "gaussian" (standard deviation ``scale``) or "laplace" (scale ``scale``).
    """
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    best = queries.max()
    rows = max(1, _CHUNK // queries.size)
    losses = []
    for start in range(0, n_trials, rows):
        size = (min(rows, n_trials - start), queries.size)
        draw = rng.normal(0.0, scale, size) if noise == "gaussian" else rng.laplace(0, scale, size)
        losses.append(best - queries[np.argmax(queries + draw, axis=1)])
    loss = np.concatenate(losses)
    se = float(loss.std(ddof=1) / np.sqrt(n_trials)) if n_trials > 1 else float("nan")
    return 1.0 - float(loss.mean()), se


def exact_accuracy(queries: np.ndarray, mechanism: str, eps: float, sensitivity: float) -> float:
    """Eq. 39 under the exact output law of "exponential" or "permute_and_flip" (eps-DP)."""
    if mechanism == "exponential":
        probs = exponential_mechanism_probabilities(queries, eps, sensitivity=sensitivity)
    elif mechanism == "permute_and_flip":
        probs = permute_and_flip_probabilities(queries, eps, sensitivity=sensitivity)
    else:
        raise ValueError(
            f"mechanism must be 'exponential' or 'permute_and_flip', got {mechanism!r}"
        )
    return 1.0 - float(probs @ (queries.max() - queries))
