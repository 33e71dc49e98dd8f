"""The import graph of smoothdp_nb: no cycle, no two-way folder pair, the core's layers, and
function-level imports only where they defer something heavy.

Built from the source with ``ast``, not by importing.  Every ``import`` and ``from ... import``
counts: at module level, inside functions (a lazy import is still a dependency, only a later one)
and under ``if TYPE_CHECKING:`` (a type-only import is a dependency of the reader, and a cycle
hidden behind it is one a refactor trips over).  An edge goes from a module to the module it
names: ``from .mechanisms import X`` points at the package ``mechanisms/__init__.py``,
``from .mechanisms.base import X`` at ``base`` only, and ``from . import noise`` at the submodule
``noise`` when there is one.  Importing a submodule also runs its parent packages' ``__init__``;
those implicit edges are left out of the graph, as every import linter does (or every package that
re-exports its submodules would be a cycle), but they count where the question is what an import
*loads* (:func:`loaded_by`, for the light entry points).

The rules, each a test below and each tested on a planted example so that it cannot pass
vacuously:

1. no cycle between modules;
2. no cycle between the children (modules and folders) of any folder, at any depth: two folders
   never import each other, even through other modules;
3. the layers: the core imports nothing above it nor the notebook stack; each of its folders
   imports only the folders its docstring allows; inside ``core/smoothed`` imports follow the order
   written in its docstring; the layers above the core (display, spec, panels, magics, reports,
   cli) import only those below them;
4. a function-level import defers something: it loads a heavy or optional package (numpy, dask,
   Altair, ...) that the module does not load at its top, directly or through one of our modules,
   and it says why in a comment containing ``deferred:`` on its line or just above its run of
   imports; and the light entry points (``import smoothdp_nb``, the command line's ``--help``, the
   spec's key table) load none of the heavy packages.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

import smoothdp_nb

ROOT = Path(smoothdp_nb.__file__).resolve().parent
PACKAGE = "smoothdp_nb"


# ---------------------------------------------------------------- reading the source


@dataclass(frozen=True)
class Edge:
    """One name an import statement brings in: ``source`` imports ``target`` at ``line``."""

    source: str
    target: str  #: one of the package's modules, or an external dotted name
    line: int
    kind: str  #: "module", "function" (inside a def or lambda) or "type" (under ``if TYPE_CHECKING:``)
    internal: bool
    comment: str  #: the comments on the statement's lines and just above its run of imports
    names: tuple[str, ...] = ()  #: for ``from <external> import a, b``: a and b (submodules or attributes)


def module_files(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package at ``root`` (``__init__`` is the package)."""
    out: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_statements(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with its kind: "module", "function" or "type" (see :class:`Edge`)."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []

    def visit(node: ast.AST, kind: str) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, "type")
            for child in node.orelse:
                visit(child, kind)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, kind))
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and kind == "module":
            kind = "function"
        for child in ast.iter_child_nodes(node):
            visit(child, kind)

    visit(tree, "module")
    return found


def _comments(source: str) -> dict[int, str]:
    """Line -> the text of the comment on it."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string
    return out


def _previous_imports(tree: ast.AST) -> dict[ast.stmt, ast.stmt | None]:
    """Import statement -> the import statement just before it in the same block, if any."""
    previous: dict[ast.stmt, ast.stmt | None] = {}
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            before: ast.stmt | None = None
            for statement in statements:
                is_import = isinstance(statement, ast.Import | ast.ImportFrom)
                if is_import:
                    previous[statement] = before
                before = statement if is_import else None
    return previous


def _statement_comment(
    node: ast.stmt, previous: dict[ast.stmt, ast.stmt | None], lines: list[str], comments: dict[int, str]
) -> str:
    """The comments on ``node``'s lines, and the nearest comment lines above it in its run of imports."""
    found = [comments[n] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1) if n in comments]
    above: list[str] = []
    current: ast.stmt | None = node
    while current is not None and not above:
        n = current.lineno - 1
        while n >= 1 and lines[n - 1].strip().startswith("#"):
            above.append(comments.get(n, lines[n - 1].strip()))
            n -= 1
        current = previous[current] if isinstance(current, ast.Import | ast.ImportFrom) else None
    return " ".join(found + above)


def edges_of(name: str, path: Path, modules: dict[str, Path]) -> list[Edge]:
    """The edges of module ``name`` (file ``path``) among the package's ``modules``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    comments = _comments(source)
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(source, str(path))
    previous = _previous_imports(tree)
    out: list[Edge] = []
    for node, kind in import_statements(tree):
        comment = _statement_comment(node, previous, lines, comments) if kind == "function" else ""
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
        names = tuple(a.name for a in node.names) if isinstance(node, ast.ImportFrom) else ()
        for target in dict.fromkeys(targets):
            ours = target
            # ``import a.b.c`` names a.b.c; keep the longest prefix that is one of ours
            while ours and ours not in modules:
                ours = ours.rpartition(".")[0]
            if ours:
                if ours != name:
                    out.append(Edge(name, ours, node.lineno, kind, True, comment))
            elif target.split(".")[0] != name.split(".")[0]:
                out.append(Edge(name, target, node.lineno, kind, False, comment, names))
    return out


def package_edges(root: Path) -> list[Edge]:
    """Every edge of the package at ``root``."""
    modules = module_files(root)
    return [edge for name, path in sorted(modules.items()) for edge in edges_of(name, path, modules)]


def import_graph(edges: Iterable[Edge], kinds: Iterable[str] = ("module", "function", "type")) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, counting the statements of the given kinds."""
    kinds = set(kinds)
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set())
        if edge.internal:
            graph.setdefault(edge.target, set())
            if edge.kind in kinds:
                graph[edge.source].add(edge.target)
    return graph


# ---------------------------------------------------------------- cycles


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


def _child(package: str, module: str) -> str | None:
    """The child of ``package`` (a module or a folder) that holds ``module``, or None."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1 :].split(".")[0]


def folder_cycles(graph: dict[str, set[str]], packages: Iterable[str]) -> list[tuple[str, list[str]]]:
    """``(package, cycle)`` for each package whose children, each folder taken whole, import in a circle.

    Two folders anywhere in the tree that import each other are, one level up, two children of their
    nearest common package that do: checking every package's children finds every such pair.
    """
    out = []
    for package in sorted(packages):
        children: dict[str, set[str]] = {}
        for source, targets in graph.items():
            a = _child(package, source)
            if a is None:
                continue
            children.setdefault(a, set())
            for target in targets:
                b = _child(package, target)
                if b is not None and b != a:
                    children[a].add(b)
                    children.setdefault(b, set())
        out += [(package, cycle) for cycle in all_cycles(children)]
    return out


def _packages(root: Path) -> list[str]:
    return [name for name, path in module_files(root).items() if path.name == "__init__.py"]


def _why(edges: list[Edge], cycle: list[str]) -> str:
    """The statements behind a cycle's steps (for folders: any statement from one to the other)."""
    steps = []
    for a, b in itertools.pairwise(cycle):
        lines = [
            f"{e.source}:{e.line} ({e.kind})"
            for e in edges
            if e.internal
            and (e.source == a or e.source.startswith(a + "."))
            and (e.target == b or e.target.startswith(b + "."))
        ]
        steps.append(f"  {a} -> {b}: " + ", ".join(lines[:3]))
    return "\n".join(steps)


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return package_edges(ROOT)


def test_graph_sees_the_package(edges):
    graph = import_graph(edges)
    mechanisms = f"{PACKAGE}.core.smoothed.mechanisms"
    assert f"{mechanisms}.generic" in graph[f"{mechanisms}.base"]
    assert f"{PACKAGE}.core.numerics.divergence" in graph[f"{mechanisms}.generic"]
    assert sum(len(v) for v in graph.values()) > 300
    kinds = {e.kind for e in edges if e.internal}
    assert kinds == {"module", "function", "type"}  # all three kinds are read
    assert any(e.target == "numpy" and not e.internal for e in edges)


def test_no_import_cycles(edges):
    cycles = all_cycles(import_graph(edges))
    assert not cycles, "import cycles in smoothdp_nb:\n" + "\n\n".join(
        " -> ".join(c) + "\n" + _why(edges, c) for c in cycles
    )


def test_no_two_way_dependency_between_folders(edges):
    found = folder_cycles(import_graph(edges), _packages(ROOT))
    assert not found, "folders that import each other:\n" + "\n\n".join(
        f"in {package}: " + " -> ".join(c) + "\n" + _why(edges, c) for package, c in found
    )


# ---------------------------------------------------------------- planted examples


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``pkg`` under ``tmp_path`` with the given files (``__init__.py`` added where missing)."""
    root = tmp_path / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        (folder / "__init__.py").touch()
    return root


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    root = _plant(tmp_path, {"a.py": "from pkg import b\n", "b.py": "def f():\n    from pkg.a import x\n"})
    assert all_cycles(import_graph(package_edges(root))) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_a_planted_type_only_cycle_is_a_cycle(tmp_path):
    root = _plant(
        tmp_path,
        {
            "a.py": "from pkg.b import B\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nelse:\n    import os\n",
        },
    )
    edges = package_edges(root)
    assert [(e.source, e.target, e.kind) for e in edges if e.internal] == [
        ("pkg.a", "pkg.b", "module"),
        ("pkg.b", "pkg.a", "type"),
    ]
    assert [(e.target, e.kind) for e in edges if not e.internal] == [("typing", "module"), ("os", "module")]
    assert all_cycles(import_graph(edges)) == [["pkg.a", "pkg.b", "pkg.a"]]
    assert all_cycles(import_graph(edges, kinds=["module"])) == []


def test_a_planted_two_way_folder_pair_is_found(tmp_path):
    # no module cycle: x.one -> y.two and y.three -> x.four, but the folders x and y import each other
    root = _plant(
        tmp_path,
        {
            "x/one.py": "from pkg.y import two\n",
            "x/four.py": "",
            "y/two.py": "",
            "y/three.py": "from ..x.four import f\n",
            "z/five.py": "from pkg.x import one\n",
        },
    )
    graph = import_graph(package_edges(root))
    assert all_cycles(graph) == []
    assert folder_cycles(graph, _packages(root)) == [("pkg", ["pkg.x", "pkg.y", "pkg.x"])]


# ---------------------------------------------------------------- the core's layers

CORE = f"{PACKAGE}.core"
#: the folders of the core and what each may import inside the core (their docstrings say the same)
MAY_IMPORT = {
    f"{CORE}.numerics": {f"{CORE}.numerics"},
    f"{CORE}.runtime": {f"{CORE}.runtime", f"{CORE}.numerics"},
    f"{CORE}.data": {f"{CORE}.data", f"{CORE}.numerics"},
    f"{CORE}.release": {f"{CORE}.release", f"{CORE}.numerics", f"{CORE}.runtime"},
    f"{CORE}.smoothed": {f"{CORE}.smoothed", f"{CORE}.numerics", f"{CORE}.runtime"},
}
#: the notebook stack: never imported by the core, which serves scripts and other libraries too
NOTEBOOK_STACK = ("IPython", "ipywidgets", "altair", "anywidget", "vl_convert", "ipykernel", "nbformat", "nbclient")


def _within(module: str, folders: Iterable[str]) -> bool:
    return any(module == f or module.startswith(f + ".") for f in folders)


def layer_violations(edges: Iterable[Edge]) -> list[str]:
    """Every import of the core that points up or sideways where its folder's rule forbids it."""
    bad = []
    for e in edges:
        if not _within(e.source, [CORE]):
            continue
        where = f"{e.source}:{e.line} imports {e.target} ({e.kind})"
        if not e.internal:
            if e.target.split(".")[0] in NOTEBOOK_STACK:
                bad.append(f"{where}: the core never imports the notebook stack")
        elif not _within(e.target, [CORE]):
            bad.append(f"{where}: the core never imports the layers above it")
        else:
            folder = next((f for f in MAY_IMPORT if _within(e.source, [f])), None)
            if folder is not None and not _within(e.target, MAY_IMPORT[folder]):
                bad.append(f"{where}: {folder} may import only {sorted(MAY_IMPORT[folder])}")
            elif folder is None and e.source != CORE:
                bad.append(f"{e.source}: a module of the core outside its folders")
    return bad


def test_the_core_imports_point_downward(edges):
    assert set(MAY_IMPORT) == {f"{CORE}.{p.name}" for p in (ROOT / "core").iterdir() if (p / "__init__.py").is_file()}
    bad = layer_violations(edges)
    assert not bad, "\n".join(bad)


def test_the_layer_check_sees_planted_violations():
    planted = [
        Edge(f"{CORE}.numerics.lpmf", f"{CORE}.runtime.budget", 3, "function", True, ""),
        Edge(f"{CORE}.runtime.sweeps", f"{CORE}.smoothed.delta", 4, "type", True, ""),
        Edge(f"{CORE}.release.lattice", f"{CORE}.smoothed.profiles", 5, "module", True, ""),
        Edge(f"{CORE}.smoothed.delta", f"{CORE}.release.noise", 6, "module", True, ""),
        Edge(f"{CORE}.smoothed.reports", f"{PACKAGE}.display", 7, "function", True, ""),
        Edge(f"{CORE}.numerics.hull", "altair.vegalite", 8, "type", False, ""),
        # allowed
        Edge(f"{CORE}.release.lattice", f"{CORE}.runtime.budget", 9, "module", True, ""),
        Edge(f"{CORE}.smoothed.delta", f"{CORE}.numerics.lpmf", 10, "module", True, ""),
        Edge(f"{CORE}.numerics.hull", "scipy.spatial", 11, "function", False, ""),
    ]
    assert [b.split(" ")[0] for b in layer_violations(planted)] == [f"{e.source}:{e.line}" for e in planted[:6]]


#: the layers above the core and what each may import of the package (their docstrings say the same)
ABOVE_CORE = {
    f"{PACKAGE}.display": {CORE},
    f"{PACKAGE}.spec": {CORE},
    f"{PACKAGE}.panels": {CORE, f"{PACKAGE}.display"},
    f"{PACKAGE}.magics": {CORE, f"{PACKAGE}.display", f"{PACKAGE}.spec"},
    f"{PACKAGE}.reports": {CORE, f"{PACKAGE}.display", f"{PACKAGE}.spec", PACKAGE},
    f"{PACKAGE}.cli": {CORE, f"{PACKAGE}.spec", f"{PACKAGE}.reports", PACKAGE},
}


def test_the_layers_above_the_core_import_only_what_they_may(edges):
    bad = []
    for e in edges:
        layer = next((f for f in ABOVE_CORE if _within(e.source, [f])), None)
        if layer is None or not e.internal or _within(e.target, [layer]):
            continue
        # the top-level package itself (its lazy loader), never its other folders through it
        allowed = any(e.target == a if a == PACKAGE else _within(e.target, [a]) for a in ABOVE_CORE[layer])
        if not allowed:
            bad.append(
                f"{e.source}:{e.line} imports {e.target} ({e.kind}): {layer} may import {sorted(ABOVE_CORE[layer])}"
            )
    assert not bad, "\n".join(bad)


SMOOTHED = f"{CORE}.smoothed"
#: "a -> b -> c" in the smoothed half's docstring: each may import those before it
CHAIN = re.compile(r"\b\w+(?:\s*->\s*\w+)+")


def declared_order(docstring: str) -> dict[str, set[str]]:
    """Child -> the children it may import, from the chains ``a -> b -> c`` of a docstring."""
    below: dict[str, set[str]] = {}
    for chain in CHAIN.findall(docstring):
        names = [n.strip() for n in chain.split("->")]
        for i, name in enumerate(names):
            below.setdefault(name, set()).update(names[:i])
    changed = True
    while changed:  # transitive: a -> b and b -> c lets c import a
        changed = False
        for under in below.values():
            more = set().union(*(below.get(u, set()) for u in under)) - under
            if more:
                under |= more
                changed = True
    return below


def order_violations(edges: Iterable[Edge], package: str, below: dict[str, set[str]]) -> list[str]:
    """Imports between the children of ``package`` that do not point down the declared order."""
    bad = []
    for e in edges:
        a, b = _child(package, e.source), _child(package, e.target) if e.internal else None
        if a is None or b is None or a == b:
            continue
        short_a, short_b = a.rpartition(".")[2], b.rpartition(".")[2]
        if short_b not in below.get(short_a, set()):
            bad.append(f"{e.source}:{e.line} imports {e.target} ({e.kind}): {short_a} may not import {short_b}")
    return bad


def test_the_smoothed_half_follows_its_documented_order(edges):
    doc = ast.get_docstring(ast.parse((ROOT / "core" / "smoothed" / "__init__.py").read_text(encoding="utf-8")))
    below = declared_order(doc or "")
    children = {p.stem for p in (ROOT / "core" / "smoothed").iterdir() if p.suffix == ".py" or p.is_dir()}
    children -= {"__init__", "__pycache__"}
    assert children <= set(below), f"the docstring's order leaves out {sorted(children - set(below))}"
    bad = order_violations(edges, SMOOTHED, below)
    assert not bad, "\n".join(bad)


def test_the_order_check_sees_a_planted_upward_import():
    below = declared_order("Imports point down: mechanisms -> profiles -> engines -> delta, and mechanisms -> extra.")
    assert below["delta"] == {"mechanisms", "profiles", "engines"} and below["extra"] == {"mechanisms"}
    planted = [
        Edge(f"{SMOOTHED}.engines.exact", f"{SMOOTHED}.profiles", 1, "module", True, ""),
        Edge(f"{SMOOTHED}.mechanisms.base", f"{SMOOTHED}.engines.exact", 2, "function", True, ""),
        Edge(f"{SMOOTHED}.extra", f"{SMOOTHED}.profiles", 3, "type", True, ""),
        Edge(f"{SMOOTHED}.delta", "numpy", 4, "module", False, ""),
    ]
    assert [b.split(" ")[0] for b in order_violations(planted, SMOOTHED, below)] == [
        f"{SMOOTHED}.mechanisms.base:2",
        f"{SMOOTHED}.extra:3",
    ]


# ---------------------------------------------------------------- function-level imports

#: packages heavy or optional enough to defer into the function that needs them (when the module
#: does not load them anyway)
DEFERRABLE = {
    "numpy", "scipy", "pandas", "mpmath", "flint", "threadpoolctl", "tqdm",  # numerics and plumbing
    "dask", "distributed", "dp_accounting",  # optional extras
    "IPython", "ipywidgets", "altair", "anywidget", "vl_convert",  # the notebook stack
    "nbclient", "nbformat", "jupyter_client", "psutil",  # running notebooks
    "pygments", "markdown_it", "mdit_py_plugins", "latex2mathml",  # writing pages
    "webbrowser",  # imports the platform's browser launchers
    "asyncio",  # tens of milliseconds the command line's --help does without
}  # fmt: skip
#: the light entry points and what each must not load (tests/cli and tests/spec check the same at run time)
HEAVY = ("numpy", "scipy", "pandas", "altair", "ipywidgets", "IPython", "vl_convert", "pygments", "dask")
LIGHT = {
    PACKAGE: HEAVY,  # `import smoothdp_nb`: every name loads on first use
    f"{PACKAGE}.__main__": HEAVY,  # `python -m smoothdp_nb ... --help`
    f"{PACKAGE}.cli": HEAVY,  # the `smoothdp` script
    f"{PACKAGE}.spec.reference": HEAVY,  # the key table and its help
    f"{PACKAGE}.core.runtime.sweeps": ("dask", "distributed", "IPython", "ipywidgets", "altair"),
}
DEFERRED = re.compile(r"deferred:\s*\S")


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def loaded_by(module: str, edges: Iterable[Edge]) -> set[str]:
    """What importing ``module`` loads: our modules (with their parent packages) and external names."""
    by_source: dict[str, list[Edge]] = {}
    for e in edges:
        if e.kind == "module":
            by_source.setdefault(e.source, []).append(e)
    seen: set[str] = set()
    todo = [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += _parents(m)  # importing a.b.c runs a and a.b first
        for e in by_source.get(m, []):
            if e.internal:
                todo.append(e.target)
            else:  # `from scipy import special` loads scipy.special
                seen |= {e.target, *(f"{e.target}.{n}" for n in e.names)}
    return seen


def _heavy(loaded: set[str], heavy: Iterable[str]) -> set[str]:
    return {m.split(".")[0] for m in loaded} & set(heavy)


def deferral_problems(edges: list[Edge]) -> list[str]:
    """Function-level imports with no ``deferred:`` comment, or that defer nothing.

    An import defers something when what it loads includes a :data:`DEFERRABLE` package that the
    module does not load at its top: directly (``import dask``) or through one of our modules
    (``from smoothdp_nb import display`` loads Altair).
    """
    cache: dict[str, set[str]] = {}

    def load(module: str) -> set[str]:
        if module not in cache:
            cache[module] = loaded_by(module, edges)
        return cache[module]

    bad = []
    for e in edges:
        if e.kind != "function":
            continue
        where = f"{e.source}:{e.line} imports {e.target} inside a function"
        if not DEFERRED.search(e.comment):
            bad.append(f"{where} without a '# deferred: <why>' comment")
        if e.internal:
            if not _heavy(load(e.target), DEFERRABLE) - _heavy(load(e.source), DEFERRABLE):
                bad.append(f"{where}: it loads no heavy package the module does not load; import it at the top")
        elif e.target.split(".")[0] not in DEFERRABLE:
            bad.append(f"{where}: {e.target} is light; import it at the top")
        elif e.target in load(e.source):
            bad.append(f"{where}: the module loads {e.target} anyway; import it at the top")
    return bad


def test_function_level_imports_defer_something_and_say_what(edges):
    bad = deferral_problems(edges)
    assert not bad, "\n".join(bad)


def test_the_light_entry_points_load_nothing_heavy(edges):
    heavy = {entry: sorted(_heavy(loaded_by(entry, edges), names)) for entry, names in LIGHT.items()}
    assert heavy == {entry: [] for entry in LIGHT}
    assert f"{PACKAGE}.cli.run" in loaded_by(f"{PACKAGE}.__main__", edges)  # the walk follows the imports


def test_the_deferral_check_sees_planted_imports(tmp_path):
    root = _plant(
        tmp_path,
        {
            "light.py": (
                "import json\n"
                "def f():\n"
                "    from pkg import heavy  # deferred: numpy, only when f runs\n"
                "    # deferred: the notebook stack\n"
                "    import IPython\n"
                "    import altair\n"
                "def g():\n"
                "    from pkg import heavy\n"  # no comment
                "def h():\n"
                "    import sys  # deferred: nothing\n"  # light: pointless
                "    import json  # deferred: nothing\n"
            ),
            "heavy.py": (
                "import numpy as np\n"
                "from pkg import plain\n"
                "def f():\n"
                "    from scipy import special  # deferred: scipy is heavy\n"
                "    import numpy  # deferred: already loaded\n"
                "    from pkg import plain  # deferred: not heavy\n"
            ),
            "plain.py": "import os\n",
        },
    )
    bad = deferral_problems(package_edges(root))
    assert [b.split(" ")[0] for b in bad] == [
        "pkg.heavy:5",  # numpy at the top already
        "pkg.heavy:6",  # pkg.plain loads nothing heavy
        "pkg.light:8",  # no comment
        "pkg.light:10",  # sys is light
        "pkg.light:11",  # json: light (and loaded at the top)
    ]
    assert "comment" in bad[2]


def test_a_comment_above_covers_its_run_of_imports():
    source = "def f():\n    # deferred: why\n    import a\n    from b import (\n        c,\n    )\n    import d\n    x = 1\n    import e\n"
    tree = ast.parse(source)
    previous = _previous_imports(tree)
    comments = _comments(source)
    found = [_statement_comment(node, previous, source.splitlines(), comments) for node, _ in import_statements(tree)]
    assert found == ["# deferred: why"] * 3 + [""]
