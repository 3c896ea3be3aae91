"""The binary erasure channel (Taylor, Vippathalla and Coon 2026, Sec. II-B).

One use is (0, reveal)-DP; repeated, it breaks the naive realisation-level filter
(:class:`~accounting.filters.realisation.InvalidNaiveRealisationFilter`).
"""

from __future__ import annotations

import numpy as np

from accounting import _checks

#: Output index of an erasure in :func:`binary_erasure_laws`.
ERASED = 2


def binary_erasure_laws(reveal: float) -> tuple[np.ndarray, np.ndarray]:
    """Binary erasure channel of Taylor et al., Sec. II-B, on datasets 0 (X = 0) and 1 (X = 1).

    Outputs (0, 1, ERASED): Y = X with probability ``reveal``, else erased. The realised
    loss is +-inf on a reveal and 0 on an erasure; one use is (0, reveal)-DP.
    """
    r = _checks.open_unit("reveal", reveal)
    return np.array([r, 0.0, 1.0 - r]), np.array([0.0, r, 1.0 - r])
