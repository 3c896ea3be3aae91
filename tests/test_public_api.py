"""The re-exported public API resolves and drives a filter end to end."""

import numpy as np

import accounting
import accounting.filters as filters


def test_every_exported_name_resolves() -> None:
    for module in (accounting, filters):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == []


def test_top_level_names_drive_an_interaction() -> None:
    sigma = accounting.gaussian_sigma(0.5, 1e-6, 1.0)
    cost = accounting.EpsDelta(0.5, 1e-6)
    filt = filters.AdditiveFilter(2.0, 1e-5)

    def analyst(outputs: list) -> filters.Query | None:
        return filters.Query(cost, lambda data, rng: data + rng.normal(0.0, sigma))

    transcript = filters.run_interaction(filt, analyst, 3.0, np.random.default_rng(0))
    assert transcript.halted
    assert transcript.stopping_time == 4
    assert accounting.gaussian_delta(0.5, 1.0, sigma) <= 1e-6
