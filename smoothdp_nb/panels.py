"""Live notebook panels (``sdp.panels.smoothed_dp()`` and friends).

Each function returns a panel object that displays as an ipywidgets box with
controls and an Altair ``JupyterChart`` updated in place; see
:mod:`smoothdp_nb.widgets` for how.  Requires ``ipywidgets`` and
``anywidget``; ``vl-convert-python`` makes the chart work offline.

Examples
--------
>>> import smoothdp_nb as sdp
>>> panel = sdp.panels.smoothed_dp()        # doctest: +SKIP
>>> panel                                   # doctest: +SKIP
>>> panel.n.value = 5000                    # the chart follows  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from .widgets import (
    ElectionPanel,
    LiveChart,
    NoiseComparisonPanel,
    ReleasePanel,
    SmoothedDPPanel,
    enable_offline,
)

__all__ = [
    "smoothed_dp",
    "election",
    "noise_comparison",
    "release",
    "SmoothedDPPanel",
    "ElectionPanel",
    "NoiseComparisonPanel",
    "ReleasePanel",
    "LiveChart",
    "enable_offline",
]


def smoothed_dp(**kwargs: Any) -> SmoothedDPPanel:
    """Panel: smoothed delta of the sampling histogram against epsilon.

    Sliders for eta, n, the epsilon range and Pi (an interval of two-category
    distributions, or the 2020 district shares); exact computation within a
    time budget, coarse Monte Carlo beyond it.  Keyword arguments go to
    :class:`~smoothdp_nb.widgets.SmoothedDPPanel`.
    """
    return SmoothedDPPanel(**kwargs)


def election(**kwargs: Any) -> ElectionPanel:
    """Panel: privacy profile of the sampling histogram on the US elections 1920-2020.

    Keyword arguments go to :class:`~smoothdp_nb.widgets.ElectionPanel`.
    """
    return ElectionPanel(**kwargs)


def noise_comparison(**kwargs: Any) -> NoiseComparisonPanel:
    """Panel: noise std per unit of smooth sensitivity against gamma, per family.

    Keyword arguments go to :class:`~smoothdp_nb.widgets.NoiseComparisonPanel`.
    """
    return NoiseComparisonPanel(**kwargs)


def release(series: Any, **kwargs: Any) -> ReleasePanel:
    """Panel: private release of a statistic of ``series`` with smooth-sensitivity noise.

    The true value is never shown unless "reveal true value" is ticked; new
    noisy values are drawn only by the Release button.  Keyword arguments
    (``bounds=``, ``query=``, ``epsilon=``, ``noise=``, ``delta=``) go to
    :class:`~smoothdp_nb.widgets.ReleasePanel`.
    """
    return ReleasePanel(series, **kwargs)
