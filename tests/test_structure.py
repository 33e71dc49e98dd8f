"""The package's house rules, checked over ``smoothdp_nb/`` by reading its source.

1. One job per module, and a folder says what lives in it: every module's docstring opens with one
   sentence saying its job; every folder's ``__init__`` docstring opens the same way, names each
   module and subfolder it holds and says what the folder may import (``May import: ...``; the
   import rules themselves are checked against the import graph in tests/test_import_graph.py).
2. No module reaches into another module's private names: no ``from x import _y``, no import of a
   private module (``from altair.utils._importers import ...``), no ``module._y`` on an imported
   module.  A name another module needs is public, or it moves.
3. Every public docstring (module, public function, public class, public method) that cites a
   numbered result (Theorem / Lemma / Algorithm / Definition / Claim / Proposition / Corollary N)
   has a numpydoc ``References`` section naming a work (a title in ``*...*`` or quotes): the seed
   papers share theorem numbers, so "Theorem 2" alone does not say which.
4. The public signatures of the top-level API (``smoothdp_nb.__all__``: functions, and the
   constructors, methods and properties of classes) carry no ``typing.Any``: an alias exists for
   every parameter there (``numpy.typing.ArrayLike``, the ``Mechanism`` protocol, ``object`` for
   a value that truly may be anything); the few places with none are listed in ``NO_ALIAS``.

Each rule is one test per module (or per public name) so a failure names the file to fix.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "smoothdp_nb"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(PACKAGE.parent)) for p in paths]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# ---------------------------------------------------------------- 1. one job per module

#: a sentence ends inside a paragraph: ". " (or "?", "!") before a capital, a backquote, a star or
#: "(", but not after an abbreviation (e.g., i.e., cf., etc.)
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)(?<!\betc)[.!?]\s+(?=[A-Z`*(])")
#: the job of a module fits in one sentence a reader takes in at once
JOB_CHARACTERS = 300


def job_problems(doc: str | None) -> list[str]:
    """What is wrong with the opening of a module docstring: it must be one sentence saying the job."""
    if not doc or not doc.strip():
        return ["no docstring"]
    first = " ".join(doc.strip().split("\n\n")[0].split())
    problems = []
    if not first.endswith("."):
        problems.append(f"its first paragraph is not a sentence ending with a period: {first[:80]!r}")
    if SENTENCE_END.search(first[:-1]):
        problems.append(f"it opens with more than one sentence: {first[:120]!r}")
    if len(first) > JOB_CHARACTERS:
        problems.append(f"its opening sentence is {len(first)} characters (at most {JOB_CHARACTERS})")
    return problems


def folder_problems(doc: str | None, folder: Path) -> list[str]:
    """A folder's docstring names every module and subfolder it holds and what the folder may import."""
    problems = job_problems(doc)
    text = doc or ""
    held = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    for name in sorted(held - {"__init__"}):
        if not re.search(r"[.:`]" + re.escape(name) + r"\b", text):
            problems.append(f"does not name {name} (e.g. :mod:`.{name}`)")
    if not re.search(r"\bMay import\b", text):
        problems.append("does not say what the folder may import ('May import: ...')")
    return problems


@pytest.mark.parametrize("path", MODULES, ids=_ids(MODULES))
def test_every_module_opens_with_its_job(path: Path) -> None:
    problems = job_problems(ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))))
    assert not problems, f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(problems)


FOLDERS = sorted(p.parent for p in MODULES if p.name == "__init__.py")


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids(FOLDERS))
def test_every_folder_says_what_lives_there_and_what_it_may_import(folder: Path) -> None:
    init = folder / "__init__.py"
    problems = folder_problems(ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), folder)
    assert not problems, f"{init.relative_to(PACKAGE.parent)}:\n" + "\n".join(problems)


def test_the_job_checks_see_planted_docstrings(tmp_path: Path) -> None:
    assert job_problems("Exact log-pmfs for counts of any size.\n\nMore text. Any length.") == []
    assert job_problems("The sample size: a rate eta\n(T = ceil(eta n)) or a fixed T, e.g. T = 3.") == []
    assert [p.split(":")[0] for p in job_problems(None)] == ["no docstring"]
    assert "more than one sentence" in job_problems("Helpers. Also the cost model.")[0]
    assert "period" in job_problems("Helpers for the engines")[0]
    assert "characters" in job_problems("A job " + "and another " * 30 + "job.")[0]
    (tmp_path / "a.py").touch()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").touch()
    doc = "What lives here: :mod:`.a` and :mod:`.sub`.\n\nMay import: numpy."
    assert folder_problems(doc, tmp_path) == []
    assert folder_problems("What lives here: :mod:`.a`.", tmp_path) == [
        "does not name sub (e.g. :mod:`.sub`)",
        "does not say what the folder may import ('May import: ...')",
    ]


# ---------------------------------------------------------------- 2. private reaches


def _absolute(module: str | None, level: int, here: str, is_package: bool) -> str:
    """The absolute module a ``from`` import names (``from ..x import y`` inside ``here``)."""
    if level == 0:
        return module or ""
    base = here.split(".")
    # a package's own __init__ is its base for level 1; a plain module's base is its parent
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _is_module(name: str) -> bool:
    """Whether ``name`` is an importable module (a submodule bound by ``from pkg import sub``)."""
    if name.startswith("smoothdp_nb"):
        rel = Path(*name.split("."))
        root = PACKAGE.parent
        return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def private_reaches(source: str, here: str, is_package: bool = False) -> list[str]:
    """Every reach from module ``here`` (text ``source``) into another module's private names, as ``line: text``."""
    tree = ast.parse(source)
    modules: set[str] = set()  # local names bound to modules
    hits: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    hits.append(f"{node.lineno}: import {alias.name}")
                modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node.module, node.level, here, is_package)
            shown = "." * node.level + (node.module or "")
            if node.module and any(_private(part) for part in node.module.split(".")):
                hits.append(f"{node.lineno}: from {shown} import ...")
            for alias in node.names:
                if _private(alias.name):
                    hits.append(f"{node.lineno}: from {shown} import {alias.name}")
                elif alias.name != "*" and _is_module(f"{source}.{alias.name}"):
                    modules.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules:
                hits.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(set(hits), key=lambda h: int(h.split(":")[0]))


@pytest.mark.parametrize("path", MODULES, ids=_ids(MODULES))
def test_no_reach_into_private_names(path: Path) -> None:
    hits = private_reaches(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")
    assert not hits, f"{path.relative_to(PACKAGE.parent)} uses private names of other modules:\n" + "\n".join(hits)


def test_the_private_reach_check_sees_each_form() -> None:
    # the checker itself: each forbidden form is found, and the allowed ones are not
    source = (
        "import os\n"
        "from smoothdp_nb.core.release import noise as _noise\n"
        "from smoothdp_nb.core.release.noise import _check_family\n"
        "from altair.utils._importers import import_vegafusion\n"
        "from smoothdp_nb.core import release\n"
        "x = _noise._check_delta\n"
        "y = release._lattice_text\n"
        "z = os.__name__\n"
        "class A:\n"
        "    def f(self):\n"
        "        return self._own\n"
    )
    hits = private_reaches(source, "smoothdp_nb.core.structure_probe")
    assert [h.split(": ", 1)[1] for h in hits] == [
        "from smoothdp_nb.core.release.noise import _check_family",
        "from altair.utils._importers import ...",
        "_noise._check_delta",
        "release._lattice_text",
    ]


# ---------------------------------------------------------------- 3. References

#: a numbered result of some paper: "Theorem 2", "Lemmas 7", "Algorithm 1", "Claims 16-18", "Lemma A.1"
CITATION = re.compile(r"\b(Theorem|Lemma|Algorithm|Definition|Claim|Proposition|Corollary)s?\s+[A-Z]?\.?\d")
#: a numpydoc section header: a title line underlined by dashes of at least its length
SECTION = re.compile(r"^[ \t]*(\w[\w ]*)\n[ \t]*(-{3,})[ \t]*$", re.MULTILINE)
#: a work named in References: a title in *italics* or in quotes
TITLE = re.compile(r"\*[^*\n]{4,}[^*]*\*|\"[^\"]{4,}\"|“[^”]{4,}”")


def _sections(doc: str) -> dict[str, str]:
    heads = list(SECTION.finditer(doc))
    out: dict[str, str] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        out[head.group(1).strip()] = doc[head.end() : end]
    return out


def public_docstrings(source: str, module: str) -> Iterator[tuple[str, str]]:
    """``(qualified name, docstring)`` of every public object defined in ``module`` (text ``source``)."""
    if any(_private(part) for part in module.split(".")):
        return
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=True)
    if doc:
        yield module, doc

    def walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, str]]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not _private(node.name):
                doc = ast.get_docstring(node, clean=True)
                if doc:
                    yield f"{prefix}.{node.name}", doc
                if isinstance(node, ast.ClassDef):
                    yield from walk(node.body, f"{prefix}.{node.name}")

    yield from walk(tree.body, module)


def missing_references(source: str, module: str) -> list[str]:
    """Public docstrings of ``module`` citing a numbered result without a References section naming a work."""
    bad = []
    for name, doc in public_docstrings(source, module):
        cited = CITATION.search(doc)
        if not cited:
            continue
        refs = _sections(doc).get("References")
        if refs is None:
            bad.append(f"{name}: cites {cited.group(0)!r} but has no References section")
        elif not TITLE.search(refs):
            bad.append(f"{name}: its References section names no work (a title in *italics* or quotes)")
    return bad


@pytest.mark.parametrize("path", MODULES, ids=_ids(MODULES))
def test_cited_results_name_their_paper(path: Path) -> None:
    bad = missing_references(path.read_text(encoding="utf-8"), _module_name(path))
    assert not bad, f"{path.relative_to(PACKAGE.parent)}:\n" + "\n".join(bad)


def test_the_references_check_reads_numpydoc() -> None:
    source = (
        '"""Module text, no citation."""\n'
        "def cites():\n"
        '    """By Theorem 2, delta is an upper bound."""\n'
        "def names_it():\n"
        '    """By Theorem 2.\n\n    References\n    ----------\n'
        '    Liu, Wang, Xia. *Smoothed Differential Privacy*.\n    """\n'
        "def empty_section():\n"
        '    """By Lemmas 7 and 10.\n\n    References\n    ----------\n    See the paper.\n    """\n'
        "def _private():\n"
        '    """By Theorem 2."""\n'
    )
    bad = missing_references(source, "smoothdp_nb.core.structure_probe")
    assert [b.split(":")[0] for b in bad] == [
        "smoothdp_nb.core.structure_probe.cites",
        "smoothdp_nb.core.structure_probe.empty_section",
    ]


# ---------------------------------------------------------------- 4. no Any in the top-level API

ANY = re.compile(r"\bAny\b")
#: (member, parameter) pairs where no alias exists, each with its reason
NO_ALIAS = {
    # an Altair chart: the core may not import Altair, even for its types, and the chart's many
    # methods (properties, save, to_dict, layering operators) have no protocol to stand for them
    ("chart", "return"),
}


def _signatures(name: str, obj: object) -> Iterator[tuple[str, object]]:
    if inspect.isclass(obj):
        for member, value in vars(obj).items():
            if _private(member) or (member.startswith("__") and member != "__init__"):
                continue
            if isinstance(value, property):
                value = value.fget
            elif isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if inspect.isfunction(value):
                yield f"{name}.{member}", value
    elif callable(obj):
        yield name, obj


def _api() -> list[str]:
    import smoothdp_nb

    return list(smoothdp_nb.__all__)


@pytest.mark.parametrize("name", _api())
def test_top_level_api_is_typed_without_any(name: str) -> None:
    import smoothdp_nb

    bad = []
    for qualified, func in _signatures(name, getattr(smoothdp_nb, name)):
        for param, annotation in getattr(func, "__annotations__", {}).items():
            if (qualified.rsplit(".", 1)[-1], param) in NO_ALIAS:
                continue
            if ANY.search(annotation if isinstance(annotation, str) else repr(annotation)):
                bad.append(f"{qualified}({param}: {annotation})")
    assert not bad, "Any in a public signature (use an alias or `object`):\n" + "\n".join(bad)
