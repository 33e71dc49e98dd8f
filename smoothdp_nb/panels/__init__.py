"""Live notebook panels (``sdp.panels.smoothed_dp()`` and friends).

Each function returns a panel that displays as an ipywidgets box with
controls, a status line and an Altair ``JupyterChart`` updated in place
(:mod:`.live`); the charts are the builders of :mod:`smoothdp_nb.display`,
the same as the result objects' and the notebooks'.  A move that keeps the
chart's layers sends only their new rows to the browser (the Vega-Lite spec is
built once per kind of chart), so an update costs the core's computation plus
a few milliseconds.  :mod:`.base` is what every panel shares and :mod:`.live` the chart updated
in place; then one module per panel:

* :func:`smoothed_dp` -- :class:`~.smoothed.SmoothedDPPanel`;
* :func:`election` -- :class:`~.election.ElectionPanel`;
* :func:`noise_comparison` -- :class:`~.noise.NoiseComparisonPanel`;
* :func:`release` -- :class:`~.release.ReleasePanel`.

Requires ``ipywidgets`` and ``anywidget``; ``vl-convert-python`` makes the
chart work offline.

May import: the core and :mod:`smoothdp_nb.display`; never the spec, the reports or the command line.

Examples
--------
>>> import smoothdp_nb as sdp
>>> panel = sdp.panels.smoothed_dp()        # doctest: +SKIP
>>> panel                                   # doctest: +SKIP
>>> panel.n.value = 5000                    # the chart follows  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from smoothdp_nb.panels.election import ElectionPanel
from smoothdp_nb.panels.live import LiveChart, enable_offline
from smoothdp_nb.panels.noise import NoiseComparisonPanel
from smoothdp_nb.panels.release import ReleasePanel
from smoothdp_nb.panels.smoothed import SmoothedDPPanel

__all__ = [
    "ElectionPanel",
    "LiveChart",
    "NoiseComparisonPanel",
    "ReleasePanel",
    "SmoothedDPPanel",
    "election",
    "enable_offline",
    "noise_comparison",
    "release",
    "smoothed_dp",
]


def smoothed_dp(**kwargs: Any) -> SmoothedDPPanel:
    """Panel: smoothed delta of the sampling histogram against epsilon.

    Sliders for eta, n, the epsilon range and Pi (an interval of two-category
    distributions, or the 2020 district shares); the exact method whenever its
    estimated cost is within the budget, Monte Carlo (said so in the chart)
    beyond it.  Keyword arguments go to :class:`SmoothedDPPanel`.
    """
    return SmoothedDPPanel(**kwargs)


def election(**kwargs: Any) -> ElectionPanel:
    """Panel: privacy profile of the sampling histogram on the US elections 1920-2020.

    Keyword arguments go to :class:`ElectionPanel`.
    """
    return ElectionPanel(**kwargs)


def noise_comparison(**kwargs: Any) -> NoiseComparisonPanel:
    """Panel: noise std per unit of smooth sensitivity against gamma, per family.

    Keyword arguments go to :class:`NoiseComparisonPanel`.
    """
    return NoiseComparisonPanel(**kwargs)


def release(series: Any, **kwargs: Any) -> ReleasePanel:
    """Panel: private release of a statistic of ``series`` with smooth-sensitivity noise.

    The chart shows public numbers only unless "curator diagnostics" is
    ticked; the true value only while "reveal true value" is ticked; new noisy
    values are drawn only by the Release button.  ``bounds=`` (public) is
    required; ``missing=`` says what a missing record counts as (else missing
    records are refused); ``budget=`` is the curator's budget (a
    :class:`~smoothdp_nb.PrivacyOdometer`, shared with other releases, or its
    epsilon or (epsilon, delta)), whose spent and remaining parts the status
    line shows.  Keyword arguments (``bounds=``, ``query=``, ``epsilon=``,
    ``noise=``, ``delta=``, ``missing=``, ``budget=``) go to :class:`ReleasePanel`.
    """
    return ReleasePanel(series, **kwargs)
