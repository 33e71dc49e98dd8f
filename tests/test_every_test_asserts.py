"""Every test asserts something itself: a test that only runs code passes whatever the code returns.

Read from the source with ``ast``.  A ``test_*`` function asserts when its body holds an ``assert``
statement, a ``pytest.raises`` / ``pytest.warns`` / ``pytest.fail``, or a call to a helper named
``assert_*`` / ``check_*`` (leading underscores allowed) that asserts in turn: a helper of the test
suite is read the same way, recursively; one from a library (``np.testing.assert_allclose``,
``pd.testing.assert_frame_equal``) asserts by its contract.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: a helper that asserts by its name (the test suite's own are checked, see the module docstring)
HELPER = re.compile(r"_*(assert|check)(_|$)")
#: pytest's asserting calls, as pytest.raises(...) or raises(...)
PYTEST_ASSERTS = {"raises", "warns", "deprecated_call", "fail"}

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _functions(tree: ast.AST) -> Iterator[Function]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def asserts(fn: Function, local: dict[str, list[Function]], suite: dict[str, list[Function]]) -> bool:
    """Whether ``fn`` asserts, with ``local`` the helpers of its module and ``suite`` those of the test suite."""
    seen: set[str] = set()

    def visit(node: Function) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assert):
                return True
            if not isinstance(sub, ast.Call) or (name := _called_name(sub)) is None:
                continue
            if name in PYTEST_ASSERTS:
                return True
            if HELPER.match(name):
                helpers = local.get(name) or suite.get(name)
                if helpers is None:
                    return True  # a library's assertion helper
                if name not in seen:
                    seen.add(name)
                    if any(visit(h) for h in helpers):
                        return True
        return False

    return visit(fn)


def silent_tests(sources: dict[str, str]) -> list[str]:
    """``file:line name`` of every ``test_*`` function of ``sources`` (file -> text) that asserts nothing."""
    trees = {name: ast.parse(text, name) for name, text in sources.items()}
    suite: dict[str, list[Function]] = {}
    for tree in trees.values():
        for fn in _functions(tree):
            if not fn.name.startswith("test_"):
                suite.setdefault(fn.name, []).append(fn)
    bad = []
    for name, tree in trees.items():
        local: dict[str, list[Function]] = {}
        for fn in _functions(tree):
            local.setdefault(fn.name, []).append(fn)
        bad += [
            f"{name}:{fn.lineno} {fn.name}"
            for fn in _functions(tree)
            if fn.name.startswith("test_") and not asserts(fn, local, suite)
        ]
    return bad


def test_every_test_asserts():
    sources = {str(p.relative_to(TESTS.parent)): p.read_text(encoding="utf-8") for p in sorted(TESTS.rglob("*.py"))}
    assert len(sources) > 50  # the whole suite is read
    bad = silent_tests(sources)
    assert not bad, "tests that assert nothing themselves:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("body", "silent"),
    [
        ("    f()\n", True),  # runs code only
        ("    assert f() == 1\n", False),
        ("    with pytest.raises(ValueError):\n        f()\n", False),
        ("    np.testing.assert_allclose(f(), 1)\n", False),  # a library's helper
        ("    _check(f())\n", False),  # the module's helper asserts
        ("    check_quietly(f())\n", True),  # the module's helper does not
        ("    assert_shared(f())\n", False),  # a helper of another test module that asserts
        ("    check_loop(f())\n", True),  # helpers calling each other, none asserting
        ("    [g() for g in (f,)]\n", True),
    ],
)
def test_the_check_sees_planted_tests(body, silent):
    module = (
        "import numpy as np, pytest\n"
        "def _check(x):\n    assert x\n"
        "def check_quietly(x):\n    print(x)\n"
        "def check_loop(x):\n    check_other(x)\n"
        "def check_other(x):\n    check_loop(x)\n"
        f"def test_planted():\n{body}"
    )
    helpers = "def assert_shared(x):\n    assert x == 1\n"
    bad = silent_tests({"planted.py": module, "helpers.py": helpers})
    assert bad == (["planted.py:10 test_planted"] if silent else [])
