"""Shared test settings.

Hypothesis runs derandomised (a fixed seed per test), so that CI and a local run explore the
same examples and a failure reproduces from the same commit; `HYPOTHESIS_PROFILE=explore`
searches with fresh randomness and more examples. No deadline: CI machines are noisy.
"""

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("explore", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
