"""Fill the core's renderer registry (run once, when :mod:`smoothdp_nb.display` is imported)."""

from __future__ import annotations

from typing import Any

from smoothdp_nb.core.release.compare import ReleaseComparison
from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
from smoothdp_nb.core.runtime import rendering
from smoothdp_nb.core.smoothed.engines.results import SmoothedCurve, SmoothedResult
from smoothdp_nb.core.smoothed.reports import ProfileResult
from smoothdp_nb.display import comparison, render, results

__all__ = ["KINDS", "kind_of", "register", "summary_bundle"]

#: result class -> (kind, chart builder, summary table)
KINDS: dict[type, tuple[str, Any, Any]] = {
    ProfileResult: ("profile", results.profile_result_chart, results.profile_summary),
    SmoothedResult: ("smoothed", results.smoothed_result_chart, results.smoothed_summary),
    SmoothedCurve: ("smoothed-curve", results.curve_chart, results.curve_summary),
    NoiseComparison: ("noise-comparison", results.noise_comparison_chart, results.noise_summary),
    ReleaseReport: ("release", results.release_report_chart, results.release_summary),
    ReleaseComparison: ("release-comparison", comparison.comparison_chart, comparison.comparison_summary),
}


def register() -> None:
    """Register every chart builder and the mimebundle route."""
    for kind, chart, summary in KINDS.values():
        rendering.renderers.register(kind, chart, summary=summary)
    rendering.renderers.set_bundle(render.bundle)


def kind_of(obj: object) -> str | None:
    """The registry kind of a result object (None for other objects)."""
    for cls, (kind, _, _) in KINDS.items():
        if isinstance(obj, cls):
            return kind
    return None


def summary_bundle(obj: object) -> dict[str, str]:
    """The rich display of a result without its chart (text and summary table)."""
    kind = kind_of(obj)
    renderer = rendering.renderers.get(kind) if kind else None
    if renderer is None:
        return {"text/plain": str(obj)}
    return render.bundle(obj, renderer, chart=False)
