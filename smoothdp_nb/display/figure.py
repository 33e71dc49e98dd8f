"""A chart split into its data and its drawing, so that a live panel can resend the data alone.

A builder such as :func:`~smoothdp_nb.display.delta_vs_epsilon_chart` does two
jobs: it reduces a tidy frame to the rows each layer draws (numpy and pandas,
a few milliseconds) and it assembles the Altair layers around them (tens of
milliseconds of Altair object building and serialisation).  A :class:`Figure`
keeps the two apart:

* ``frames`` -- the rows of every dataset reference of the spec, in the order
  the spec lists them (one entry per layer; two layers drawing the same rows
  have one entry each);
* ``draw`` and ``options`` -- the function that assembles the chart from the
  frames, and everything else the spec depends on (titles, labels, colour
  domains, which tooltip fields exist).  ``draw`` reads the frames' *columns*
  only through ``options`` and hands their rows to the layers unread, so two
  figures with the same ``draw`` and ``options`` have the same spec up to the
  dataset values.

``figure.chart()`` is the builder's chart, and a live chart that already shows
a figure of the same :meth:`~Figure.shape` only needs :meth:`Figure.rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

from smoothdp_nb.display.style import records

__all__ = ["Figure"]


@dataclass(frozen=True, eq=False)
class Figure:
    """The layers' rows of a chart and how to draw it.

    Attributes
    ----------
    draw : callable
        ``draw(frames, **options)`` returns the Altair chart; it builds one
        layer per entry of ``frames``, in order.
    frames : mapping of str to pandas.DataFrame
        The rows of each dataset reference, in the spec's order (the keys only
        name the layers for the reader).
    options : mapping
        The other arguments of ``draw``; compared with ``==``.
    """

    draw: Callable[..., Any]
    frames: Mapping[str, pd.DataFrame]
    options: Mapping[str, Any]

    def chart(self) -> alt.TopLevelMixin:
        """The Altair chart (what the figure's builder returns)."""
        chart: alt.TopLevelMixin = self.draw(self.frames, **self.options)
        return chart

    def shape(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        """What the spec depends on besides the rows: equal shapes, equal specs up to the data."""
        return self.draw, dict(self.options)

    def rows(self) -> list[list[dict[str, Any]]]:
        """The JSON rows of each dataset reference, in the spec's order (as Altair would embed them)."""
        return [records(frame) for frame in self.frames.values()]
