"""The numbers of this experiment the docs quote (experiments/common/doc_quotes.py)."""

from __future__ import annotations

from experiments.common.doc_quotes import Generator, Quote, quotes

ADULT = (
    Quote(
        r"baseline_(?:val|test)_acc(?:_sd)?", ".4f", "non-DP baseline: mean (s.d.) over its runs"
    ),
    Quote(r"split_n_\w+", ".0f", "rows of the training / validation / test part"),
    Quote(r"frac_above_threshold_\w+", ".2f", "Fig. 2c: accepted releases above the threshold"),
    Quote(r"(?:plain|svt)_(?:mean|median)_eps", ".4g", "accepted eps, mean / median over repeats"),
    Quote(r"(?:plain|svt)_mean_val_acc", ".4f", "accepted validation accuracy, mean"),
    Quote(r"(?:plain|svt)_repeats_at_last_level", ".0f", "repeats accepted only at the last eps"),
    Quote(r"variant_\w+_baseline_(?:val|test)_(?:acc|sd)", ".4f", "a variant's baseline (s.d.)"),
    Quote(r"seed_spread_baseline_.*", ".4f", "the baseline over the seeds: s.d., min, max"),
    Quote("seed_spread_n", ".0f", "seeds in that spread (the paper reading's and seed_<k>)"),
)


DOC_BLOCKS: dict[str, Generator] = {
    "adult-numbers": quotes("adult_synth", "baseline.csv", ADULT),
}
