"""The README's test command runs the default suite with 0 skips: ``pip install -e ".[test,dask]"``.

Every module a test skips without (``pytest.importorskip("x")``, and the docs toolchain the
``docs`` subcommand looks for) must come with the package's dependencies and those two extras.
Read from pyproject.toml (this tree's, not an installed copy's) and, for what the listed packages
pull in themselves, from the installed distributions' metadata.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from smoothdp_nb.cli.docs import DOCS_EXTRA

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
EXTRAS = ("test", "dask")  # the README's test command
#: collected only with --browser (tests/conftest.py): not part of the default suite
NOT_DEFAULT = ("browser",)


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def distributions(extras: tuple[str, ...]) -> set[str]:
    """Normalised names of every distribution ``pip install -e ".[extras]"`` installs (the closure)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo: list[tuple[Requirement, frozenset[str]]] = []
    for line in project["dependencies"]:
        todo.append((Requirement(line), frozenset()))
    for extra in extras:
        todo += [(Requirement(line), frozenset({extra})) for line in project["optional-dependencies"][extra]]
    seen: set[str] = set()
    self_name = _name(project["name"])
    while todo:
        req, active = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (active or {""})):
            continue
        name = _name(req.name)
        if name == self_name:  # smoothdp_nb[docs]: the package's own extra
            todo += [
                (Requirement(line), frozenset({e})) for e in req.extras for line in project["optional-dependencies"][e]
            ]
            continue
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = md.requires(req.name) or []
        except md.PackageNotFoundError:
            continue  # not installed here: its own requirements are unknown, the name itself counts
        todo += [(Requirement(line), frozenset(req.extras)) for line in requires]
    return {key.split("[")[0] for key in seen}


def skipped_modules() -> dict[str, list[str]]:
    """Module -> where a test of the default suite skips without it."""
    out: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS)
        if rel.parts[0] in NOT_DEFAULT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "importorskip"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                out.setdefault(node.args[0].value, []).append(f"tests/{rel}:{node.lineno}")
    for module in DOCS_EXTRA:  # test_docs_builds_a_site_with_sphinx skips without any of them
        out.setdefault(module, []).append("smoothdp_nb/cli/docs.py DOCS_EXTRA")
    return out


def test_every_module_a_test_skips_without_comes_with_the_test_and_dask_extras():
    installed = distributions(EXTRAS)
    assert {"numpy", "pytest", "hypothesis", "dask", "distributed", "sphinx"} <= installed
    owners = md.packages_distributions()
    skipped = skipped_modules()
    assert {"dask.distributed", "sphinx", "nbclient", "vl_convert"} <= set(skipped)  # the sites are read
    missing = {}
    for module, where in sorted(skipped.items()):
        top = module.split(".")[0]
        names = {_name(d) for d in owners.get(top, [])}
        assert names, f"{module} is not installed in this environment, so its tests skip here too ({where})"
        if not names & installed:
            missing[module] = (sorted(names), where)
    assert not missing, "tests skip without these, which the test and dask extras do not install:\n" + "\n".join(
        f"{m}: pip name {n}, skipped at {w}" for m, (n, w) in missing.items()
    )


def test_the_closure_reads_extras_and_markers():
    assert "mdit-py-plugins" in distributions(("test",))  # an extra's direct requirement
    assert "numpydoc" in distributions(("test",))  # through smoothdp_nb[docs]
    assert "distributed" in distributions(("dask",))  # through dask[distributed]
    assert "dask" not in distributions(()) and "hypothesis" not in distributions(())  # only with the extras
    with pytest.raises(KeyError):
        distributions(("no-such-extra",))


def test_the_docs_extra_runs_every_tutorial_the_site_executes():
    """``pip install ".[docs]"`` builds the site, which executes every tutorial: each module a tutorial
    imports (notebook 08 imports dp_accounting through ``to_dp_accounting``) comes with that extra."""
    import json
    import sys

    installed = distributions(("docs",))
    owners = md.packages_distributions()
    imported: dict[str, str] = {}
    for path in sorted((ROOT / "smoothdp_nb" / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                imported.setdefault(name.split(".")[0], path.name)
        if "to_dp_accounting(" in source:  # the export imports dp_accounting inside the package
            imported.setdefault("dp_accounting", path.name)
    missing = {}
    for top, where in sorted(imported.items()):
        if top in sys.stdlib_module_names or top == "smoothdp_nb":
            continue
        names = {_name(d) for d in owners.get(top, [])}
        if not names & installed:
            missing[top] = where
    assert not missing, f"tutorials import these, which the docs extra does not install: {missing}"
