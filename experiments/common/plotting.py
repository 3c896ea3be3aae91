"""One figure style for every experiment, and atomic, reproducible figure files.

Usage in ``experiments/<exp>/plot.py``::

    from experiments.common.plotting import COLORS, figure, save

    with figure(ncols=2, width="double") as (fig, axes):
        axes[0].plot(x, y, color=COLORS[0], label="...")
        save(fig, "figures/<exp>/<scale>/<name>")   # writes <name>.pdf and <name>.png

Importing this module selects the non-interactive Agg backend and applies ``STYLE``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from experiments.common.atomic import atomic_path  # noqa: E402
from experiments.common.provenance import read_sidecar  # noqa: E402

#: Okabe-Ito palette: distinguishable with the common colour-vision deficiencies and in grey.
COLORS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)
LINESTYLES: tuple[str, ...] = ("-", "--", "-.", ":")
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*")

#: Figure widths in inches: one column / full width of a two-column paper.
WIDTHS = {"single": 3.4, "double": 7.0}
DPI = 200

STYLE: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.prop_cycle": cycler(color=COLORS),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "legend.frameon": False,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.hashsalt": "filterlab",
    "image.cmap": "viridis",
}
matplotlib.rcParams.update(STYLE)

# Fixed metadata: no creation date, so the same figure gives the same bytes.
_METADATA = {
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": "filterlab"},
    "png": {"Software": "filterlab"},
}


@contextmanager
def figure(
    nrows: int = 1,
    ncols: int = 1,
    width: Literal["single", "double"] | float = "single",
    height: float | None = None,
    **subplots_kw: Any,
) -> Iterator[tuple[Figure, Any]]:
    """A new figure in the shared style, closed on exit; yields ``(fig, axes)`` as ``subplots``.

    ``width`` is "single" (3.4 in), "double" (7.0 in) or inches; ``height`` defaults to
    0.75 x the width of one panel times the number of rows.
    """
    w = WIDTHS[width] if isinstance(width, str) else float(width)
    h = height if height is not None else 0.75 * w / ncols * nrows
    with matplotlib.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout="constrained", **subplots_kw)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


def save(fig: Figure, stem: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``<stem>.pdf`` and ``<stem>.png`` atomically; returns both paths.

    ``stem`` is the path without suffix (a trailing ``.pdf``/``.png`` is dropped). Parent
    directories are created.
    """
    base = Path(stem)
    if base.suffix in (".pdf", ".png"):
        base = base.with_suffix("")
    written = []
    for fmt in ("pdf", "png"):
        out = base.with_name(f"{base.name}.{fmt}")
        with matplotlib.rc_context(STYLE), atomic_path(out) as tmp:
            fig.savefig(tmp, format=fmt, metadata=_METADATA[fmt])
        written.append(out)
    return written[0], written[1]


def table_params(table: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``params`` a result table was made with, from its sidecar.

    The one way a plot learns its parameters (e.g. which eps to show): from the tables the
    rule hands it, so a command-line override of the run reaches the figure too.
    """
    params = read_sidecar(table).get("params")
    if not isinstance(params, dict):
        raise ValueError(f"table {table} has no params in its sidecar: make it with its run.py")
    return params
