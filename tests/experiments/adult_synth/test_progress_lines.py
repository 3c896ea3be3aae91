"""Adult jobs report progress in their logs without changing the fit, and JAX does not probe
for a TPU (issue 30 item 4)."""

from __future__ import annotations

import logging

import numpy as np
from fake_adult import DOMAIN, fake_adult


def test_progress_counts_pgm_blocks_and_synthetic_sets_and_changes_no_number(caplog):
    from experiments.adult_synth import synthesis
    from experiments.adult_synth.data import split
    from experiments.common.progress import Progress

    train = fake_adult(400)
    cliques = [("age", "income"), ("job", "income")]
    answers = synthesis.true_answers(train, DOMAIN, cliques)
    iters = 120  # mbi runs 50 at a time: 3 blocks
    assert synthesis.pgm_blocks(iters) == 3
    caplog.set_level(logging.INFO, logger="test.adult")
    progress = Progress(3 + 2, "fit", interval=0, logger=logging.getLogger("test.adult"))
    quiet = synthesis.fit_pgm(answers, 100.0, DOMAIN, cliques, iters)
    loud = synthesis.fit_pgm(answers, 100.0, DOMAIN, cliques, iters, progress=progress)
    for clique in cliques:
        cols = tuple(list(DOMAIN).index(c) for c in clique)
        assert np.array_equal(
            np.asarray(quiet.project(cols).datavector()),
            np.asarray(loud.project(cols).datavector()),
        )
    assert progress.done == 3
    s = split(fake_adult(600), DOMAIN, "income", 0.4, 0.4, np.random.default_rng(0))
    runs = [
        synthesis.accuracies(loud, s, 2, 5, np.random.default_rng(1), progress=pr)
        for pr in (None, progress)
    ]
    assert runs[0].equals(runs[1])
    assert progress.done == 5
    assert caplog.messages[0] == "fit: 0/5 started"
    assert caplog.messages[-1].startswith("fit: 5/5 (100%)")
    assert caplog.messages[-1].endswith("synthetic set 2/2 scored")
    assert len(caplog.messages) == 6
