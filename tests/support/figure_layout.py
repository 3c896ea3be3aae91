"""Readability checks of a rendered matplotlib figure: no two labels overlap, none is clipped.

Every visible, non-empty text of the figure (titles, axis labels, tick labels, legend entries,
annotations) is measured with the renderer, after the constrained layout has run, exactly as
the saved file draws it. A text is clipped when its box leaves the figure (the saved file's
tight bounding box then grows past the page width, or the text is cut where it is not).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from unittest import mock

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from experiments.common.plotting import MAX_HEIGHT

#: Boxes may touch: a shared pixel row or column is not an overlap (pixels).
TOLERANCE = 1.0


def _shown_texts(fig: Figure) -> list[tuple[Text, Bbox]]:
    """(text, box in display pixels) of every text the figure draws."""
    renderer = fig.canvas.get_renderer()
    tick_labels: set[int] = set()
    drawn_ticks: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                tick_labels.update((id(tick.label1), id(tick.label2)))
            # the ticks inside the view, the ones the axis draws
            for tick in axis._update_ticks():
                drawn_ticks.update((id(tick.label1), id(tick.label2)))
    shown = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        if id(text) in tick_labels and id(text) not in drawn_ticks:
            continue
        if text.axes is not None and not text.axes.get_visible():
            continue
        box = text.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            shown.append((text, box))
    return shown


def _name(text: Text) -> str:
    return repr(text.get_text()[:40])


def _drawn_texts(fig: Figure) -> list[tuple[Text, Bbox]]:
    """Draw ``fig`` (constrained layout included) and measure its shown texts."""
    fig.canvas.draw()
    return _shown_texts(fig)


def _overlaps(shown: list[tuple[Text, Bbox]]) -> list[str]:
    found = []
    for i, (a, box_a) in enumerate(shown):
        for b, box_b in shown[i + 1 :]:
            width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if width > TOLERANCE and height > TOLERANCE:
                found.append(f"{_name(a)} overlaps {_name(b)}")
    return found


def _outside(fig: Figure, shown: list[tuple[Text, Bbox]]) -> list[str]:
    """Drawn texts whose box leaves the figure (part of the label is cut off)."""
    frame = fig.bbox
    return [
        f"{_name(t)} leaves the figure"
        for t, box in shown
        if box.x0 < frame.x0 - TOLERANCE
        or box.y0 < frame.y0 - TOLERANCE
        or box.x1 > frame.x1 + TOLERANCE
        or box.y1 > frame.y1 + TOLERANCE
    ]


def overlapping_labels(fig: Figure) -> list[str]:
    """Pairs of drawn texts whose boxes overlap by more than :data:`TOLERANCE` pixels."""
    return _overlaps(_drawn_texts(fig))


def unreadable_labels(fig: Figure) -> list[str]:
    """Both checks from one drawing: the overlapping pairs, then the clipped texts (drawing
    and measuring is most of a check's cost)."""
    shown = _drawn_texts(fig)
    return _overlaps(shown) + _outside(fig, shown)


@contextmanager
def captured_figures(module: ModuleType, write: bool = False) -> Iterator[list[Figure]]:
    """The figures the plot ``module`` hands to its ``save``, kept open for the checks above
    and closed on exit; written only with ``write`` (the height limit is checked either way)."""
    figures: list[Figure] = []
    save = module.save

    def keep(fig: Figure, stem: object) -> object:
        figures.append(fig)
        if write:
            return save(fig, stem)
        height = float(fig.get_size_inches()[1])
        if height > MAX_HEIGHT:
            raise ValueError(f"figure is {height:.2f} in tall; at most {MAX_HEIGHT} in")
        return None

    try:
        with mock.patch.object(plt, "close"), mock.patch.object(module, "save", keep):
            yield figures
    finally:
        for fig in figures:
            plt.close(fig)


def drawn_tick_labels(fig: Figure) -> dict[str, list[list[str]]]:
    """The non-empty tick labels each axes of ``fig`` draws, per axis (``"x"``, ``"y"``), in
    axes order: an axis with no label shows no scale at all."""
    fig.canvas.draw()
    labels: dict[str, list[list[str]]] = {"x": [], "y": []}
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels[name].append(
                [
                    tick.label1.get_text()
                    for tick in axis._update_ticks()
                    if tick.label1.get_visible() and tick.label1.get_text().strip()
                ]
            )
    return labels
