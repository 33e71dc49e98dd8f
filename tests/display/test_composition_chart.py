"""The chart of a composition against Proposition 5 (notebook 08's first figure) is readable:
every database its own colour, exact zeros said rather than drawn on the log axis, the paper's
symbols on the axes, and a legend that draws the dashes of the bound."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from smoothdp_nb import display

ROOT = Path(__file__).resolve().parents[2]


def _table(k: int = 16) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(0)
    for i in range(k):
        for e in (0.5, 1.0, 2.0, 4.0):
            exact = 0.0 if (i == 0 and e == 4.0) else float(10.0 ** rng.uniform(-6, -1))
            rows.append(
                {"database": str([i, k - i]), "epsilon": e, "exact": exact, "proposition5": min(1.0, 3 * exact)}
            )
    return pd.DataFrame(rows)


def _walk(spec):
    if isinstance(spec, dict):
        yield spec
        for v in spec.values():
            yield from _walk(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from _walk(v)


@pytest.fixture(scope="module")
def chart():
    return display.composition_chart(_table(), title="3 steps: exact composition vs Proposition 5")


def test_exact_zeros_are_said_not_plotted(chart):
    spec = chart.to_dict()
    assert not any(d.get("type") == "log" for d in _walk(spec))  # no Vega log scale, where 0 cannot go
    values = [r["log10_delta"] for d in _walk(spec) for r in d.get("values", []) if "log10_delta" in r]
    assert values and all(v is not None and np.isfinite(v) for v in values)
    assert any("2 values exactly 0" in s for s in spec["title"]["subtitle"])


def test_every_database_its_own_colour_and_the_symbols_on_the_axes(chart):
    svg = display.render_svg(chart)
    lines = re.findall(r'class="mark-line role-mark layer_\d+_marks"[^>]*>\s*<path[^>]*stroke="([^"]+)"', svg)
    assert len(set(lines)) == 16  # 16 databases, 16 colours (never a palette reused)
    titles = re.findall(r'class="mark-text role-axis-title".*?<text[^>]*>([^<]*)</text>', svg, flags=re.S)
    assert sorted(titles) == ["δ(x)", "ε"]


def test_the_bound_legend_draws_dashes_not_dots(chart):
    spec = chart.to_dict()
    dashes = [d for d in _walk(spec) if d.get("field") == "series" and "legend" in d]
    assert dashes and dashes[0]["legend"]["symbolType"] == "stroke"
    assert dashes[0]["scale"]["range"][1] == display.style.DASHES["dashed"]
    marks = [layer["mark"] for layer in spec["layer"] if isinstance(layer.get("mark"), dict)]
    assert not any(m.get("point") for m in marks)  # a point overlay turns the legend's dashes into dots


def test_notebook_08_draws_its_composition_with_the_builder():
    nb = json.loads((ROOT / "notebooks" / "08_composition_accounting.ipynb").read_text(encoding="utf-8"))
    source = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "charts.composition_chart(table" in source
    assert 'scale=alt.Scale(type="log")' not in source


def test_bad_table_names_the_missing_columns():
    with pytest.raises(ValueError, match="proposition5"):
        display.composition_chart(pd.DataFrame({"database": ["a"], "epsilon": [1.0], "exact": [0.1]}))
