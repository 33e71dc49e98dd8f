"""The import graph of smoothdp_nb has no cycle.

Built from the source with ``ast``, not by importing: every ``import`` and
``from ... import`` statement of every module counts, at module level and
inside functions (a lazy import is still a dependency, only a later one);
the blocks under ``if TYPE_CHECKING:`` do not (they never run).  An edge
goes from a module to the module it names: ``from .mechanisms import X``
points at the package ``mechanisms/__init__.py``, ``from .mechanisms.base
import X`` at ``base`` only, and ``from . import noise`` at the submodule
``noise`` when there is one.  (Importing a submodule also runs its parent
packages' ``__init__``; those implicit edges are left out, as every import
linter does, or every package that re-exports its submodules would be a
cycle.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import smoothdp_nb

ROOT = Path(smoothdp_nb.__file__).resolve().parent
PACKAGE = "smoothdp_nb"


def _module_names() -> dict[str, Path]:
    """Dotted name -> file, for every module of the package (``__init__`` is the package)."""
    out: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of ``if TYPE_CHECKING:`` (not their ``else``)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (see the module docstring)."""
    modules = _module_names()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base_parts = here.split(".")
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = []
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                # ``import a.b.c`` names a.b.c; keep the longest prefix that is one of ours
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle (its modules, the first repeated at the end) or None; iterative DFS."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for start in sorted(graph):
        if colour[start] != WHITE:
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        path = [start]
        colour[start] = GREY
        while stack:
            node, todo = stack[-1]
            if not todo:
                colour[node] = BLACK
                stack.pop()
                path.pop()
                continue
            nxt = todo.pop(0)
            if colour[nxt] == GREY:
                return path[path.index(nxt) :] + [nxt]
            if colour[nxt] == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                stack.append((nxt, sorted(graph[nxt])))
    return None


def all_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles found by removing one edge of each cycle in turn (every strongly connected tangle shows up)."""
    g = {k: set(v) for k, v in graph.items()}
    cycles = []
    while (c := find_cycle(g)) is not None and len(cycles) < 50:
        cycles.append(c)
        g[c[-2]].discard(c[-1])
    return cycles


def test_graph_sees_the_package():
    graph = import_graph()
    assert f"{PACKAGE}.core.smoothed.mechanisms.base" in graph
    assert f"{PACKAGE}.core.smoothed.mechanisms.generic" in graph[f"{PACKAGE}.core.smoothed.mechanisms.base"]
    assert f"{PACKAGE}.core.numerics.divergence" in graph[f"{PACKAGE}.core.smoothed.mechanisms.generic"]
    assert sum(len(v) for v in graph.values()) > 100


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_type_checking_blocks_are_not_edges():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\nelse:\n    import y\ndef f():\n    import z\n"
    )
    names = [a.name for node in _imports(tree) if isinstance(node, ast.Import) for a in node.names]
    assert names == ["y", "z"]


def test_no_import_cycles():
    cycles = all_cycles(import_graph())
    assert not cycles, "import cycles in smoothdp_nb:\n" + "\n".join(" -> ".join(c) for c in cycles)
