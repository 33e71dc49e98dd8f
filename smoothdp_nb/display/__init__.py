"""The display layer: Altair chart builders, offline rendering and the rich display of results.

One builder per figure, all in one style (:mod:`.style`: sizes, fonts, the
colour-blind-safe palette, log axes at powers of ten, line styles in the
legends):

* :func:`delta_vs_epsilon_chart` -- smoothed delta against epsilon (Figure 2, right);
* :func:`delta_vs_n_chart` -- smoothed delta against n with fits and Monte Carlo bands (Figures 2 left, 4, 5);
* :func:`profile_chart` -- the privacy profile delta_eps(x) per database (Figure 3);
* :func:`figure1_chart` -- delta(x) and the adjusted utility per election (Figure 1);
* :func:`bound_chart` -- an upper bound against the exact smoothed delta (Remark 8);
* :func:`composition_chart` -- a computed delta against a reference bound per database (composition vs its sum);
* :func:`noise_chart` -- noise std per unit of smooth sensitivity (Hladik & Tetek, Figure 1);
* :func:`release_chart` -- released values on the bounds' axis (public numbers only);
* :func:`comparison_chart` -- the exact error laws of the data-dependent release methods on one dataset.

The numbers a person reads (titles, notes, notebook prose) are written by the formatters of
:mod:`smoothdp_nb.core.numerics.formatting`, re-exported here: :func:`format_sci` (``7.97·10⁻¹``),
:func:`format_bound` (``δ ≤ 7.97·10⁻¹``), :func:`format_param`, :func:`format_value`, :func:`format_range`.

The live panels use the ``*_figure`` twins of the builders they draw
(:class:`Figure`: the layers' rows apart from the drawing), so that an update
of the same shape sends new rows without building an Altair chart.

The builders live in :mod:`.delta` (smoothed delta and profiles), :mod:`.noise` and
:mod:`.release`, :mod:`.comparison` (the release methods side by side), on the frames of :mod:`.frames`; :mod:`.figure` splits a chart into its data and
its drawing, :mod:`.results` draws the core's result objects, :mod:`.register` registers them
and :mod:`.render` renders offline.

May import: the core, Altair and vl-convert; never the panels, the spec, the reports or the
command line.

Importing this package registers the charts of the core's result objects
(``.chart()``, ``_repr_mimebundle_``) in :mod:`smoothdp_nb.core.runtime.rendering`;
:func:`render_svg` / :func:`render_png` render any chart offline (vl-convert,
no CDN), and ``display(StaticChart(chart))`` shows one in a notebook in the
notebook's theme (JupyterLab's light and dark themes alike).
"""

from __future__ import annotations

from smoothdp_nb.core.numerics.formatting import (
    format_bound,
    format_log10,
    format_log10_up,
    format_param,
    format_range,
    format_sci,
    format_value,
)
from smoothdp_nb.display.comparison import comparison_chart, comparison_summary
from smoothdp_nb.display.delta import (
    bound_chart,
    composition_chart,
    delta_vs_epsilon_chart,
    delta_vs_epsilon_figure,
    delta_vs_n_chart,
    figure1_chart,
    profile_chart,
    profile_figure,
)
from smoothdp_nb.display.figure import Figure
from smoothdp_nb.display.noise import noise_chart, noise_figure
from smoothdp_nb.display.register import register as _register, summary_bundle
from smoothdp_nb.display.release import lattice_text, release_chart, release_density, release_figure
from smoothdp_nb.display.render import StaticChart, render_png, render_svg
from smoothdp_nb.display.style import MAX_ROWS, PALETTE, PROFILE, format_delta

__all__ = [
    "Figure",
    "StaticChart",
    "MAX_ROWS",
    "PALETTE",
    "PROFILE",
    "bound_chart",
    "composition_chart",
    "comparison_chart",
    "comparison_summary",
    "delta_vs_epsilon_chart",
    "delta_vs_epsilon_figure",
    "delta_vs_n_chart",
    "figure1_chart",
    "format_bound",
    "format_delta",
    "format_log10",
    "format_log10_up",
    "format_param",
    "format_range",
    "format_sci",
    "format_value",
    "lattice_text",
    "noise_chart",
    "noise_figure",
    "profile_chart",
    "profile_figure",
    "release_chart",
    "release_density",
    "release_figure",
    "render_png",
    "render_svg",
    "summary_bundle",
]

_register()
