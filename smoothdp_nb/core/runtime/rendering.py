"""The renderer registry through which the core's result objects display themselves.

The core never imports the display layer (not even lazily).  Instead, every
result object names its *kind* (``"profile"``, ``"smoothed"``, ...) and asks
this registry for a chart or a notebook mimebundle; the display package
(:mod:`smoothdp_nb.display`, which needs Altair) fills the registry when it is
imported, much as Altair's own ``alt.renderers`` are filled by entry points.
Importing Altair costs about as much as the whole numerical core, so the
package root installs a *loader* (:meth:`RendererRegistry.set_loader`): a
callable that imports the display package the first time a renderer is
needed.  The registry calls it without knowing what it imports.

Without a registered renderer a result still displays: :func:`mimebundle`
falls back to its plain text, and :func:`chart` says what to install.

Examples
--------
>>> from smoothdp_nb.core import rendering
>>> class Thing:
...     def __str__(self):
...         return "a thing"
>>> rendering.mimebundle(Thing(), "no-such-kind")
{'text/plain': 'a thing'}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Renderer", "RendererRegistry", "chart", "mimebundle", "renderers"]


@dataclass(frozen=True)
class Renderer:
    """How one kind of result is drawn.

    Attributes
    ----------
    chart : callable
        ``chart(result) -> altair chart``.
    summary : callable or None
        ``summary(result) -> pandas.DataFrame``: the compact table shown above
        the chart in a notebook.
    """

    chart: Callable[[Any], Any]
    summary: Callable[[Any], Any] | None = None


class RendererRegistry:
    """Chart builders by result kind, and the one route that turns them into a mimebundle."""

    def __init__(self) -> None:
        self._by_kind: dict[str, Renderer] = {}
        self._bundle: Callable[[Any, Renderer], dict[str, Any]] | None = None
        self._loader: Callable[[], None] | None = None

    def register(self, kind: str, fn: Callable[[Any], Any], *, summary: Callable[[Any], Any] | None = None) -> None:
        """Register the chart builder ``fn`` (and optional ``summary``) for ``kind``."""
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"kind must be a non-empty str, got {kind!r}")
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self._by_kind[kind] = Renderer(chart=fn, summary=summary)

    def set_bundle(self, route: Callable[[Any, Renderer], dict[str, Any]]) -> None:
        """Set the mimebundle route: ``route(result, renderer) -> {mime type: data}``."""
        if not callable(route):
            raise TypeError(f"route must be callable, got {type(route).__name__}")
        self._bundle = route

    def set_loader(self, loader: Callable[[], None] | None) -> None:
        """Set the callable run (once) before the first lookup, to fill the registry."""
        if loader is not None and not callable(loader):
            raise TypeError(f"loader must be callable or None, got {type(loader).__name__}")
        self._loader = loader

    def _load(self) -> None:
        loader, self._loader = self._loader, None  # once, even if it fails
        if loader is not None:
            try:
                loader()
            except ImportError:  # no Altair: results fall back to plain text
                pass

    def get(self, kind: str) -> Renderer | None:
        """The renderer registered for ``kind``, or None."""
        if kind not in self._by_kind:
            self._load()
        return self._by_kind.get(kind)

    @property
    def kinds(self) -> list[str]:
        """The kinds with a registered renderer, sorted."""
        self._load()
        return sorted(self._by_kind)

    @property
    def bundle_route(self) -> Callable[[Any, Renderer], dict[str, Any]] | None:
        """The mimebundle route, or None."""
        self._load()
        return self._bundle


#: the process-wide registry (filled by ``import smoothdp_nb.display``)
renderers = RendererRegistry()


def chart(obj: object, kind: str) -> Any:
    """The chart of ``obj`` drawn by the renderer registered for ``kind``.

    Raises
    ------
    ImportError
        When no renderer is registered (Altair is not installed).
    """
    renderer = renderers.get(kind)
    if renderer is None:
        raise ImportError(
            f"no chart renderer for {kind!r} results: charts need Altair "
            "(pip install 'altair>=6'), which registers them on import smoothdp_nb"
        )
    return renderer.chart(obj)


def mimebundle(obj: object, kind: str) -> dict[str, Any]:
    """Notebook display of ``obj``: rich when a renderer is registered, else plain text."""
    renderer = renderers.get(kind)
    route = renderers.bundle_route
    if renderer is None or route is None:
        return {"text/plain": str(obj)}
    return route(obj, renderer)
