"""The README's Quickstart and what CI runs cannot drift apart.

.ci/run reads the two commands from README.md through .ci/quickstart.py and runs them verbatim
in fresh clones; these tests pin that contract from the test suite's side.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def quickstart():
    spec = importlib.util.spec_from_file_location("ci_quickstart", ROOT / ".ci" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_starts_with_two_commands_install_then_run(quickstart):
    main, test = quickstart.quickstart_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    for command in (main, test):
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install ")
    assert "-m smoothdp_nb tutorials" in main
    assert test.endswith("-m pytest -n 2")


def test_ci_runs_the_readme_commands_it_reads(quickstart):
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 .ci/quickstart.py main" in script
    assert "python3 .ci/quickstart.py test" in script
    # nothing else in CI runs the default suite: the README's command is the one that does
    default_runs = [
        line
        for line in script.splitlines()
        if "-m pytest" in line and "--browser" not in line and "-m slow" not in line
    ]
    assert default_runs == []


@pytest.mark.parametrize(
    "text",
    [
        "# x\n## Quickstart\n```bash\npython3 -m venv .venv\n```\n## Next\n",
        "# x\n## Quickstart\n```bash\na\nb\nc\n```\n## Next\n",
        "# x\n## Other\n```bash\na\nb\n```\n## Next\n",
    ],
)
def test_a_quickstart_without_exactly_two_commands_stops_ci(quickstart, text):
    with pytest.raises(SystemExit):
        quickstart.quickstart_commands(text)
