"""The tutorial runner's terminal progress: one bar over the code cells of every notebook."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["RunProgress"]


class RunProgress:
    """One overall bar over the code cells of every notebook, naming what is running.

    Without a terminal (CI logs, pytest) the bar is off and each notebook
    prints one line when it starts and one when it ends.
    """

    def __init__(self, total_cells: int, stream: TextIO, enabled: bool | None) -> None:
        self.stream = stream
        self.running: dict[str, str] = {}
        tty = enabled if enabled is not None else stream.isatty()
        self.bar: tqdm[None] | None = None
        if tty:
            from tqdm import tqdm  # deferred: only on a terminal

            self.bar = tqdm(
                total=total_cells,
                unit="cell",
                file=stream,
                dynamic_ncols=True,
                leave=False,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} cells [{elapsed}]",
            )

    def say(self, line: str) -> None:
        """Print one line above the bar (or alone, without a bar)."""
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def start_notebook(self, name: str, cells: int) -> None:
        """A notebook's kernel is starting."""
        if self.bar is None:
            self.say(f"{name:<32} running ({cells} code cells)")
            return
        self.running[name] = f"{name.split('_', 1)[0]} starting kernel"
        self._describe()

    def _describe(self) -> None:
        assert self.bar is not None
        self.bar.set_description_str(" | ".join(v for _, v in sorted(self.running.items())), refresh=True)

    def cell(self, name: str, k: int, n: int, source: str) -> None:
        """Code cell ``k`` of ``n`` of notebook ``name`` is running."""
        if self.bar is None:
            return
        first = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
        self.running[name] = f"{name.split('_', 1)[0]} cell {k}/{n}" + (f" `{first[:28]}`" if first else "")
        self._describe()

    def advance(self, cells: int = 1) -> None:
        """``cells`` more code cells are done (or will never run)."""
        if self.bar is not None:
            self.bar.update(cells)

    def end_notebook(self, name: str) -> None:
        """Notebook ``name`` finished."""
        self.running.pop(name, None)
        if self.bar is not None:
            self._describe()

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self.bar is not None:
            self.bar.close()
