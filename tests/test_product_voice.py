"""The product speaks of itself: no text in the repository tells how it was built.

README, docs, benchmarks, notebooks, package comments and docstrings, and tests say what the
software does and why.  Who built a part, in which working session, on which branch, under which
tracker number, or in which scratch directory is history: it lives in git, and it means nothing to
a reader of the product.  This test reads every git-tracked text file and fails with ``file:line``
for each of:

- a working-session number ("session 6", "sessions 5-7"),
- "the lead" (the person who merges branches),
- a development branch name: the coined ones anywhere as a word, the ones that are also English
  words (``million``, ``integrate``, ``docs``, ...) only where the text calls them a branch,
- a tracker reference ("issue 22", "issues 14 and 15", "#31"),
- a temporary path (``/tmp/...``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The text files a reader meets: sources, docs, notebooks, configuration, CI scripts.
SUFFIXES = frozenset(
    {
        ".py",
        ".md",
        ".rst",
        ".ipynb",
        ".toml",
        ".txt",
        ".cfg",
        ".yml",
        ".yaml",
        ".js",
        ".css",
        ".sh",
        ".html",
        ".lock",
    }
)

# Branch names that are not English words: wrong anywhere, as whole words.
COINED_BRANCHES = (
    "intexp",
    "certcost",
    "avgtable",
    "finite200",
    "audit21",
    "perf6",
    "compose2",
    "engine2",
    "noisereg",
    "specpkg",
    "mainjob",
    "fixa",
    "fixb",
    "nb08",
)
# Branch names that are also words ("a million trials", "integrate the density"): wrong only
# where the text calls them a branch ("branch million", "the `integrate` branch").
WORD_BRANCHES = (
    "million",
    "integrate",
    "int",
    "docs",
    "rel",
    "display",
    "input",
    "tut",
    "speed",
    "panel",
    "mech",
    "head",
    "engine",
    "types",
    "threads",
    "sampler",
    "protocol",
    "outputs",
    "names",
    "lecturer",
    "dark",
    "compose",
    "certify",
)
_WORDS = "|".join(WORD_BRANCHES)

PATTERNS: dict[str, re.Pattern[str]] = {
    "session number": re.compile(r"\bsessions?\s+\d+", re.IGNORECASE),
    "'the lead'": re.compile(r"\bthe\s+lead\b(?!ing)", re.IGNORECASE),
    "branch name": re.compile(
        r"\b(?:" + "|".join(COINED_BRANCHES) + r")\b"
        rf"|\bbranch(?:es)?\s+[`'\"]?(?:{_WORDS})\b"
        rf"|\b(?:{_WORDS})[`'\"]?\s+branch\b",
        re.IGNORECASE,
    ),
    "issue reference": re.compile(
        r"\bissues?\s+#?\d+"  # "issue 22", "Issues 14", "issue #3"
        # "#31", but not "&#39;", "##", a URL fragment, nor a colour ("#333", "#000000"):
        # 3-, 6- and 8-digit numbers are read as colours
        r"|(?<![\w&/#])#(?![0-9a-f]{3}\b|[0-9a-f]{6}\b|[0-9a-f]{8}\b)\d+\b",
        re.IGNORECASE,
    ),
    "temporary path": re.compile(r"(?<![\w.])/tmp/|/tmp\b"),
}

# (path, substring) pairs that may stay, each with its reason.  Keep this tiny.
ALLOWED: tuple[tuple[str, str], ...] = (
    # This file states the rules, so it spells out what they match.
    ("tests/test_product_voice.py", ""),
)


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    files = []
    for name in out.split("\0"):
        if not name:
            continue
        path = Path(name)
        if path.suffix in SUFFIXES or path.parts[0] == ".ci" or path.name in {".gitignore", "requirements.txt"}:
            files.append(path)
    return sorted(files)


def _allowed(path: str, line: str) -> bool:
    return any(path == p and s in line for p, s in ALLOWED)


def _findings(path: Path) -> list[str]:
    text = (ROOT / path).read_text(encoding="utf-8", errors="replace")
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if _allowed(path.as_posix(), line):
            continue
        for what, pattern in PATTERNS.items():
            match = pattern.search(line)
            if match:
                found.append(f"{path}:{number}: {what}: {match.group(0)!r}")
    return found


FILES = _tracked_text_files()


def test_the_scan_covers_the_product() -> None:
    names = {p.as_posix() for p in FILES}
    assert "README.md" in names
    assert "benchmarks/README.md" in names
    assert any(n.endswith(".ipynb") for n in names)
    assert any(n.startswith(".ci/") for n in names)
    assert any(n.startswith("smoothdp_nb/") for n in names)


@pytest.mark.parametrize(
    "text",
    [
        "# session 7: the loop is vectorised",
        "as the lead asked",
        "measured on branch million",
        "the `integrate` branch",
        "merged from intexp",
        "see issue 22",
        "(Issue 24, item 7)",
        "issues 14 and 15",
        "fixes #31",
        "written to /tmp/out.csv",
    ],
)
def test_the_patterns_catch_history(text: str) -> None:
    assert any(p.search(text) for p in PATTERNS.values()), text


@pytest.mark.parametrize(
    "text",
    [
        "a million trials",
        "integrate the density over the interval",
        "the leading term",
        "the Laplace branch of the registry",
        "colour: &#39;red&#39;",
        "a session-scoped fixture",
        "color: #333333; fill: #000",
        "https://example.org/page#section2",
    ],
)
def test_the_patterns_leave_prose_alone(text: str) -> None:
    assert not any(p.search(text) for p in PATTERNS.values()), text


def test_no_development_history_in_the_product() -> None:
    findings = [f for path in FILES for f in _findings(path)]
    assert not findings, (
        f"{len(findings)} lines tell how the product was built; say what it does instead:\n" + "\n".join(findings)
    )
