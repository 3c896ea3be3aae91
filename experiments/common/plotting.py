"""One figure style for every experiment, and atomic, reproducible figure files.

Usage in ``experiments/<exp>/plot.py``::

    from experiments.common.plotting import colour, figure, legend_outside, save

    with figure(ncols=2, width="double") as (fig, axes):
        axes[0].plot(x, y, color=colour("fsrc"), label="FSRC")
        legend_outside(fig, axes)                  # one figure-level legend below the panels
        save(fig, "figures/<exp>/<scale>/<name>")  # writes <name>.pdf and <name>.png

The rules every figure follows (issue 20):

* notation is mathtext (``$\\varepsilon$``, ``$\\sigma_X$``, ``$10^{-6}$`` via :func:`sci`,
  never "1e-06"); tick labels use mathtext too (``axes.formatter.use_mathtext``);
* a method has one colour in every figure, :data:`METHOD_COLOURS` (the paper's colour where
  its caption names one); a sweep over a parameter uses :func:`ramp` (ordered, sequential);
* one legend per figure, outside the axes (:func:`legend_outside`);
* panels meant to be compared share their scales; a diverging map is centred at 0
  (:func:`centred_norm`); quantities spanning decades get log axes;
* widths fit a paper's single (3.3 in) or double (6.8 in) column and no figure is taller
  than a page's text (:data:`MAX_HEIGHT`, checked by :func:`save`).

Importing this module selects the non-interactive Agg backend and applies ``STYLE``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import LogFormatterMathtext, LogLocator, NullFormatter  # noqa: E402
from matplotlib.typing import LegendLocType, RcKeyType  # noqa: E402

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
BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, _YELLOW, BLACK = COLORS
WINE, OLIVE, BEIGE, GREY = "#882255", "#999933", "#C9A86A", "#7F7F7F"

#: One colour per method, the same in every figure; a method a paper's caption gives a colour
#: keeps it (Lebensold et al.: FSRC and numerical integration green, Monte Carlo beige, the
#: median stopping time blue and the 80th percentile red). Keys are the method names of the
#: results tables; colours are distinct within each paper's figures.
METHOD_COLOURS: dict[str, str] = {
    # mechanism-level filters and accountants (Taylor et al., filter comparison, Lebensold)
    "additive": ORANGE,
    "advanced": PURPLE,
    "rdp": OLIVE,
    "composition": OLIVE,  # RDP composition (Lebensold et al., Figs. 18, 20)
    "realisation": BLUE,
    "realisation_rule": SKY,
    "classical": ORANGE,  # classical composition of pure DP (Taylor et al., eq. 13)
    "mechanism": WINE,  # mechanism-level accounting (Taylor et al., eq. 14)
    "whitehouse": WINE,
    "filter": WINE,  # Whitehouse et al.'s filter (Lebensold et al., Figs. 4, 17-20)
    "fsrc": GREEN,  # Lebensold et al., Figs. 4, 5: "FSRC (green)"
    # Lebensold et al.: offline selection
    "gaussian_ours": BLUE,
    "gaussian_post": VERMILLION,
    "exponential": PURPLE,
    "permute_and_flip": ORANGE,
    "laplace_rnm": SKY,
    "laplace_post": BLACK,
    "numerical": GREEN,  # Figs. 3, 6: "numerical integration (green)"
    "monte_carlo": BEIGE,  # Figs. 3, 6: "Monte Carlo estimate (beige)"
    "median_stop": BLUE,  # Fig. 1: "blue dotted line"
    "p80_stop": VERMILLION,  # Fig. 1: "red line"
    # residue filters
    "budget": BLACK,
    "query": VERMILLION,
    "naive": PURPLE,
    "residue": BLUE,
    "residue+query": GREEN,
    "supremum": SKY,
    "worst_case": VERMILLION,
    "worst_case_2": WINE,
    # Raisa et al.
    "plain": BLUE,
    "svt": VERMILLION,
    # Feldman and Zrnic
    "filtered": BLUE,
    # reference lines (thresholds, non-private values, budgets drawn as lines)
    "reference": GREY,
}
LINESTYLES: tuple[str, ...] = ("-", "--", "-.", ":")
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*")

#: Figure widths in inches: one column / full width of a two-column paper.
WIDTHS = {"single": 3.3, "double": 6.8}
#: The tallest figure, inches: a page's text height (letter or A4 with margins).
MAX_HEIGHT = 9.0
DPI = 200

STYLE: dict[RcKeyType, Any] = {
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
    "axes.formatter.use_mathtext": True,
    "mathtext.default": "regular",
    "legend.handlelength": 1.8,
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

    ``width`` is "single" (3.3 in), "double" (6.8 in) or inches; ``height`` defaults to
    0.75 x the width of one panel times the number of rows. A height above
    :data:`MAX_HEIGHT` is a ValueError (no figure taller than a page).
    """
    w = WIDTHS[width] if isinstance(width, str) else float(width)
    h = height if height is not None else 0.75 * w / ncols * nrows
    if not 0 < h <= MAX_HEIGHT:
        raise ValueError(f"figure height must be in (0, {MAX_HEIGHT}] inches (a page), got {h:.2f}")
    with matplotlib.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout="constrained", **subplots_kw)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


@contextmanager
def row_figure(
    nrows: int,
    ncols: int,
    width: Literal["single", "double"] | float = "double",
    row_height: float = 1.9,
    panel_rows: int = 1,
    legend_height: float = 0.8,
    **subplots_kw: Any,
) -> Iterator[tuple[Figure, list[Any], np.ndarray]]:
    """A figure of ``nrows`` titled rows of ``ncols`` panels, closed on exit; yields
    ``(fig, rows, axes)``: the rows are subfigures (title each with ``rows[r].suptitle``) and
    ``axes[panel_rows * r + i, c]`` their panels (``panel_rows`` lines of panels a row).

    For a grid whose rows come from a sweep: a row's setting is its title, above the row, not
    a y label squeezed beside it, so labels stay apart however many rows there are; rows are
    ``row_height`` inches tall, shrunk so that the figure (with ``legend_height`` for a
    legend) stays within :data:`MAX_HEIGHT`.
    """
    w = WIDTHS[width] if isinstance(width, str) else float(width)
    h = min(row_height, (MAX_HEIGHT - legend_height) / nrows)
    with figure(width=w, height=h * nrows + legend_height) as (fig, first):
        first.remove()
        rows = list(fig.subfigures(nrows, 1, squeeze=False)[:, 0])
        axes = np.concatenate(
            [row.subplots(panel_rows, ncols, squeeze=False, **subplots_kw) for row in rows]
        )
        yield fig, rows, axes


@contextmanager
def panel_figure(
    n: int,
    max_cols: int,
    width: Literal["single", "double"] | float = "double",
    panel_height: float = 2.5,
    **subplots_kw: Any,
) -> Iterator[tuple[Figure, np.ndarray, np.ndarray]]:
    """A figure of ``n`` panels, at most ``max_cols`` a row, closed on exit; yields ``(fig,
    axes, first)``: the ``n`` panels in reading order and the first panel of each row (for
    the y labels). Grid cells after the n-th are removed.

    For panels that come from a config list: the list can grow (a sweep edit) and the panels
    wrap into rows instead of narrowing until their labels collide; rows are ``panel_height``
    inches tall, shrunk so that the figure stays within :data:`MAX_HEIGHT`.
    """
    if n < 1 or max_cols < 1:
        raise ValueError(f"n and max_cols must be >= 1, got n={n}, max_cols={max_cols}")
    ncols = min(n, max_cols)
    nrows = -(-n // ncols)
    height = min(panel_height, MAX_HEIGHT / nrows) * nrows
    with figure(nrows, ncols, width, height, squeeze=False, **subplots_kw) as (fig, grid):
        for ax in grid.flat[n:]:
            ax.remove()
        yield fig, grid.flat[:n], grid[:, 0]


def colour(method: str) -> str:
    """The fixed colour of ``method`` (a key of :data:`METHOD_COLOURS`)."""
    try:
        return METHOD_COLOURS[method]
    except KeyError:
        raise ValueError(
            f"method {method!r} has no colour; add it to METHOD_COLOURS (known: "
            f"{', '.join(sorted(METHOD_COLOURS))})"
        ) from None


def ramp(n: int, cmap: str = "viridis") -> list[Any]:
    """``n`` ordered colours for a sweep over a parameter (light to dark end avoided)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return list(plt.get_cmap(cmap)(np.linspace(0.0, 0.85, n)))


def sci(x: float, digits: int = 3) -> str:
    """``x`` in mathtext: ``10^{-6}`` for a power of ten, ``4.9 \\times 10^{-6}`` for a small or
    large number, plain ``0.15`` otherwise (without the dollar signs, to embed in a label)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    exponent = math.floor(math.log10(abs(x)))
    if -3 <= exponent <= 4:
        plain = f"{float(f'{x:.{digits}g}'):f}"
        return plain.rstrip("0").rstrip(".") if "." in plain else plain
    mantissa = float(f"{x / 10.0**exponent:.{digits}g}")
    if mantissa == 10:
        mantissa, exponent = 1.0, exponent + 1
    power = f"10^{{{exponent}}}"
    return power if mantissa == 1 else f"{mantissa:g} \\times {power}"


def centred_norm(values: Iterable[float] | np.ndarray) -> TwoSlopeNorm:
    """A diverging colour norm with 0 at the centre colour, spanning the finite values.

    Each side keeps its own range, so a region where the difference is negative shows in the
    negative colour however small it is next to the positive maximum.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise ValueError("centred_norm needs at least one finite value")
    scale = float(np.max(np.abs(v))) or 1.0
    low = min(float(v.min()), -1e-3 * scale)
    high = max(float(v.max()), 1e-3 * scale)
    return TwoSlopeNorm(vcenter=0.0, vmin=low, vmax=high)


def log_axis(ax: Any, axis: Literal["x", "y"] = "x") -> None:
    """A log axis labelled at powers of ten only (``10^{k}``), for quantities spanning
    decades; minor ticks stay unlabelled so that a narrow range does not crowd the axis."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target.set_major_locator(LogLocator(base=10))
    target.set_major_formatter(LogFormatterMathtext(base=10))
    target.set_minor_formatter(NullFormatter())


def legend_outside(
    fig: Figure,
    axes: Any,
    *,
    ncols: int | None = None,
    loc: LegendLocType = "outside lower center",
    **kw: Any,
) -> Any:
    """One figure-level legend outside the axes, from the labelled artists of every axes
    (each label once, in drawing order); returns the legend, or None when nothing is labelled.

    The figure must use the constrained layout of :func:`figure` ("outside" locations).
    """
    handles: dict[str, Any] = {}
    for ax in np.atleast_1d(axes).ravel():
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if not handles:
        return None
    if ncols is None:
        ncols = min(len(handles), 3 if "right" not in str(loc) else 1)
    return fig.legend(list(handles.values()), list(handles), loc=loc, ncols=ncols, **kw)


def save(fig: Figure, stem: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``<stem>.pdf`` and ``<stem>.png`` atomically; returns both paths.

    ``stem`` is the path without suffix (a trailing ``.pdf``/``.png`` is dropped). Parent
    directories are created.
    """
    height = float(fig.get_size_inches()[1])
    if height > MAX_HEIGHT:
        raise ValueError(f"figure is {height:.2f} in tall; at most {MAX_HEIGHT} in (a page)")
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
