"""numpydoc validation, scoped to the checks the package passes.

The checks and exclusions are pyproject.toml's ``[tool.numpydoc_validation]`` (the same table
numpydoc's own ``numpydoc lint`` hook reads), run here over every module of the package by
numpydoc's AST validator (no import).  Every module passes: a finding fails the test.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

numpydoc_hooks = pytest.importorskip("numpydoc.hooks.validate_docstrings")

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted((ROOT / "smoothdp_nb").rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _params() -> list[object]:
    return [pytest.param(path, id=_rel(path)) for path in MODULES]


@pytest.fixture(scope="module")
def config() -> dict[str, object]:
    cfg: dict[str, object] = numpydoc_hooks.parse_config(ROOT)
    assert cfg["checks"], "pyproject.toml has no [tool.numpydoc_validation] checks"
    return cfg


@pytest.mark.parametrize("path", _params())
def test_docstrings_pass_numpydoc_checks(path: Path, config: dict[str, object]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # docscrape warns on the modules' prose headings
        findings = numpydoc_hooks.process_file(str(path), config)
    assert not findings, "\n".join(f"{where} {name}: {check} {text}" for where, name, check, text in findings)


def test_the_configured_checks_are_the_structural_ones(config: dict[str, object]) -> None:
    # a config that silently checks nothing would make the test above vacuous
    assert {"GL06", "GL07", "PR02", "PR03"} <= set(config["checks"])  # type: ignore[call-overload]
