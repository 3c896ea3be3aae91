"""MST-style selection of the marginal queries under RDP (McKenna, Miklau, Sheldon 2021).

Run once on the training part at RDP level ``eps_query`` (order alpha), split as
* ``one_way_share`` of it for the Gaussian 1-way marginals of all d columns (l2-sensitivity
  sqrt(2 d) under substitution, experiments/adult_synth/neighbours.py; variance
  alpha 2 d / (2 eps_1), Mironov 2017 Cor. 3);
* the rest evenly over the d - 1 exponential-mechanism picks of a maximum spanning tree
  (Kruskal order, as MST), each an eps-DP exponential mechanism with RDP alpha eps^2/8
  (accounting.mechanisms.bounded_range).
The score of a pair (a, b) is the L1 distance between its true 2-way marginal and the product
of the noisy 1-way marginals scaled by the public training size n (sensitivity 2 under
substitution: one row leaves one cell and enters another; the product is post-processing).
MST's domain compression and its Private-PGM fit of the 1-way model are replaced by the
clipped, normalised product itself. Then the label's pairs with every other column are added
(App. D). The measured queries are the 2-way marginals only: together they cover every
column; the variant ``mst_one_way`` (experiments/adult_synth/variants.py) also hands the noisy
1-way marginals (``Selection.one_way``, already paid for) to Private-PGM, as MST does, and
``mst_compress`` also compresses the domain as MST does (``compression``): values whose noisy
count is below 3 sigma are merged into one, before the pairs are scored.
Every step's RDP is its exact value rounded up, the noise is calibrated so that it is within
the step's share, and the ledger sums to at most eps_query exactly (never an ulp above).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from accounting.mechanisms.bounded_range import exponential_mechanism_eps, exponential_mechanism_rdp
from accounting.mechanisms.brownian import noise_variance
from accounting.mechanisms.selection import exponential_mechanism
from accounting.numerics import fraction_up, nudge_down, nudge_up
from experiments.adult_synth.neighbours import SCORE_SENSITIVITY, marginals_l2

Clique = tuple[str, str]


@dataclass(frozen=True)
class Selection:
    """The chosen 2-way marginals and the RDP ledger of the selection steps."""

    tree: tuple[Clique, ...]
    cliques: tuple[Clique, ...]  # tree edges, then the label pairs not in the tree
    steps: tuple[tuple[str, float], ...]  # (step, RDP at alpha)
    one_way: tuple[np.ndarray, ...] = ()  # the noisy 1-way marginals, in domain order
    one_way_sigma: float = 0.0  # their noise standard deviation
    maps: tuple[np.ndarray, ...] = ()  # compress_domain: each column's value -> compressed code

    @property
    def rdp(self) -> float:
        return math.fsum(e for _, e in self.steps)


def compression(noisy: np.ndarray, sigma: float) -> np.ndarray:
    """MST's domain compression of one column (McKenna, Miklau, Sheldon 2021, Sec. 4): the
    values whose noisy 1-way count is >= 3 sigma keep a code each (in order); the others are
    merged into one further code. Returns value -> compressed code (post-processing)."""
    kept = noisy >= 3.0 * sigma
    if kept.all():
        return np.arange(len(noisy))
    mapping = np.full(len(noisy), int(kept.sum()))
    mapping[kept] = np.arange(int(kept.sum()))
    return mapping


def compress(
    frame: pd.DataFrame, domain: dict[str, int], maps: dict[str, np.ndarray]
) -> tuple[pd.DataFrame, dict[str, int]]:
    """``frame`` and ``domain`` with each column in ``maps`` recoded by its compression."""
    out = frame.copy()
    sizes = dict(domain)
    for c, mapping in maps.items():
        out[c] = mapping[frame[c].to_numpy()]
        sizes[c] = int(mapping.max()) + 1
    return out, sizes


def marginal(frame: pd.DataFrame, clique: tuple[str, ...], domain: dict[str, int]) -> np.ndarray:
    """Counts of ``clique`` (row-major over the domain sizes), as float64."""
    shape = tuple(domain[c] for c in clique)
    index = np.ravel_multi_index(tuple(frame[c].to_numpy() for c in clique), shape)
    return np.bincount(index, minlength=math.prod(shape)).astype(np.float64)


def one_way_rdp(alpha: float, d: int, sigma: float) -> float:
    """RDP at alpha of the d Gaussian 1-way marginals (l2-sensitivity sqrt(2 d) under
    substitution, neighbours.py): alpha 2 d / (2 sigma^2) (Mironov 2017, Cor. 3), the exact
    value rounded up."""
    return fraction_up(Fraction(alpha) * d / Fraction(sigma) ** 2)


def select_queries(
    train: pd.DataFrame,
    domain: dict[str, int],
    target: str,
    eps_query: float,
    alpha: float,
    one_way_share: float,
    rng: np.random.Generator,
    compress_domain: bool = False,
) -> Selection:
    """MST's spanning tree of 2-way marginals plus the label pairs; see the module docstring.

    ``compress_domain``: score the pairs on MST's compressed domain (``Selection.maps``)."""
    columns = list(domain)
    if target not in columns:
        raise ValueError(f"target={target!r} is not a column; columns: {columns}")
    d = len(columns)
    if d < 2:
        raise ValueError("need at least two columns to select 2-way marginals")
    eps_one_way = one_way_share * eps_query
    # sigma^2 = alpha Delta^2 / (2 eps_1) with Delta^2 = 2 d (substitution, neighbours.py),
    # stepped up until the 1-way RDP is <= eps_1 exactly
    sigma = math.sqrt(noise_variance(alpha, eps_one_way, sensitivity=marginals_l2(d)))
    sigma = nudge_up(lambda s: one_way_rdp(alpha, d, s) <= eps_one_way, sigma)
    spent_one_way = one_way_rdp(alpha, d, sigma)
    # the d - 1 picks share the rest: spent_one_way + (d - 1) eps_pick <= eps_query exactly
    rest = Fraction(eps_query) - Fraction(spent_one_way)
    eps_pick = nudge_down(lambda e: (d - 1) * Fraction(e) <= rest, float(rest / (d - 1)))
    one_way = [marginal(train, (c,), domain) + rng.normal(0.0, sigma, domain[c]) for c in columns]
    maps = {c: compression(y, sigma) for c, y in zip(columns, one_way, strict=True)}
    if compress_domain:
        train, domain = compress(train, domain, maps)
    probs = {}
    for c, noisy in zip(columns, one_way, strict=True):
        if compress_domain:
            # float64 with weights; numpy's stub types bincount as intp always
            noisy = np.bincount(maps[c], weights=noisy, minlength=domain[c])  # type: ignore[assignment]
        clipped = np.clip(noisy, 0.0, None)
        mass = clipped.sum()
        probs[c] = clipped / mass if mass > 0 else np.full(domain[c], 1.0 / domain[c])
    n = len(train)  # public: neighbours are substitutions (neighbours.py)
    steps: list[tuple[str, float]] = [("one_way_gaussian", spent_one_way)]
    pairs = list(itertools.combinations(columns, 2))
    scores = {
        pair: float(
            np.abs(
                marginal(train, pair, domain) - n * np.outer(*(probs[c] for c in pair)).ravel()
            ).sum()
        )
        for pair in pairs
    }
    eps_em = exponential_mechanism_eps(alpha, eps_pick)
    component = {c: c for c in columns}

    def root(c: str) -> str:
        while component[c] != c:
            c = component[c]
        return c

    tree: list[Clique] = []
    for i in range(d - 1):
        candidates = [p for p in pairs if root(p[0]) != root(p[1])]
        pick = candidates[
            exponential_mechanism(
                [scores[p] for p in candidates], eps_em, sensitivity=SCORE_SENSITIVITY, rng=rng
            )
        ]
        tree.append(pick)
        component[root(pick[0])] = root(pick[1])
        steps.append((f"tree_pick_{i + 1}", exponential_mechanism_rdp(alpha, eps_em)))
    label_pairs: list[Clique] = [
        (target, c) if columns.index(target) < columns.index(c) else (c, target)
        for c in columns
        if c != target
    ]
    extra = [p for p in label_pairs if p not in tree]
    return Selection(
        tuple(tree),
        tuple(tree) + tuple(extra),
        tuple(steps),
        tuple(one_way),
        sigma,
        tuple(maps.values()) if compress_domain else (),
    )
