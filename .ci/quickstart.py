"""Print one of the README's two Quickstart commands, exactly as written.

``python3 .ci/quickstart.py main`` prints the first (install, then run the main job),
``python3 .ci/quickstart.py test`` the second (install, then run the whole test suite).
.ci/run executes what this prints, so CI runs the very commands a reader copies: if the
Quickstart's first code block does not hold exactly two commands, this exits non-zero
and CI fails instead of drifting apart from the README.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def quickstart_commands(text: str) -> list[str]:
    """The commands of the first ```bash block after the ``## Quickstart`` heading."""
    section = re.search(r"^## Quickstart\s*$(.*?)(?=^## )", text, flags=re.M | re.S)
    if section is None:
        raise SystemExit("README.md has no '## Quickstart' section")
    block = re.search(r"^```bash\n(.*?)^```", section.group(1), flags=re.M | re.S)
    if block is None:
        raise SystemExit("README.md's Quickstart has no ```bash code block")
    lines = [line.strip() for line in block.group(1).splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    if len(commands) != 2:
        raise SystemExit(f"README.md's Quickstart must hold exactly two commands, found {len(commands)}")
    return commands


def main(argv: list[str]) -> int:
    which = {"main": 0, "test": 1}
    if len(argv) != 1 or argv[0] not in which:
        print("usage: python3 .ci/quickstart.py main|test", file=sys.stderr)
        return 2
    print(quickstart_commands(README.read_text(encoding="utf-8"))[which[argv[0]]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
