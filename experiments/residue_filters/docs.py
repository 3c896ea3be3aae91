"""The numbers of this experiment the docs quote (experiments/common/doc_quotes.py)."""

from __future__ import annotations

from experiments.common.doc_quotes import Generator, Quote, quotes

RESIDUE = (
    Quote(
        "nu_(?:naive|residue)_[abc]",
        ".5f",
        "Fig. 1 panel (a)-(c): nu of the naive / residue update",
    ),
    Quote(
        "naive_max_gap_[abc]",
        ".1e",
        "Fig. 1: largest type-II gap of the naive update to the budget",
    ),
    Quote(
        "residue_query_max_gap_[abc]",
        ".1e",
        "Fig. 1: largest gap of residue (x) query to the budget",
    ),
    Quote(r"excess_fig[23]_\w+", ".3f", "Figs. 2, 3: worst-case excess over the budget (type II)"),
    Quote(r"counts_\w+", ".3g", "queries admitted at the smallest eps of each mu, and their ratio"),
)


DOC_BLOCKS: dict[str, Generator] = {
    "residue-numbers": quotes("residue_filters", "fig1.csv", RESIDUE),
}
