"""`import accounting` leaves scipy's slow subpackages unloaded: every pipeline job imports the
library (a smoke build starts ~90 of them, the default build ~245), and scipy.optimize, stats,
signal and integrate are needed by few of them, so the functions that use them import them."""

from __future__ import annotations

import subprocess
import sys

LAZY = ("scipy.optimize", "scipy.stats", "scipy.signal", "scipy.integrate")


def test_importing_the_library_loads_no_slow_scipy_subpackage():
    code = "import sys, accounting; print(' '.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert "accounting" in loaded and "scipy.special" in loaded
    assert not loaded & set(LAZY), sorted(loaded & set(LAZY))
