"""Tests of the election datasets shipped in smoothdp_nb/core/data."""

from __future__ import annotations

import hashlib
import numbers
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from smoothdp_nb.core.data import datasets

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

ELECTION_COLUMNS = [
    "year",
    "winner",
    "winner_party",
    "winner_votes",
    "runner_up",
    "runner_up_party",
    "runner_up_votes",
    "total_votes_all_candidates",
]
DISTRICT_COLUMNS = ["district", "biden_votes", "trump_votes", "total_votes", "biden_top2_share"]

STATES = (
    "AK AL AR AZ CA CO CT DE FL GA HI IA ID IL IN KS KY LA MA MD ME MI MN MO MS MT NC ND "
    "NE NH NJ NM NV NY OH OK OR PA RI SC SD TN TX UT VA VT WA WI WV WY"
).split()


# ----------------------------------------------------------------------------- elections


def test_elections_shape_columns_dtypes():
    df = datasets.us_presidential_elections()
    assert df.shape == (26, 10)
    assert list(df.columns) == ELECTION_COLUMNS + ["top2_total", "winner_share"]
    assert df["year"].tolist() == list(range(1920, 2021, 4))
    for col in ["year", "winner_votes", "runner_up_votes", "top2_total"]:
        assert df[col].dtype == np.int64, col
    assert df["winner_share"].dtype == np.float64
    assert str(df["total_votes_all_candidates"].dtype) == "Int64"


def test_elections_known_facts():
    df = datasets.us_presidential_elections().set_index("year")
    assert df.loc[2020, "winner"] == "Joe Biden"
    assert df.loc[2020, "winner_votes"] == 81_283_501
    assert df.loc[2020, "runner_up"] == "Donald Trump"
    assert df.loc[2020, "runner_up_votes"] == 74_223_975
    assert df.loc[2020, "total_votes_all_candidates"] == 158_528_503
    assert df.loc[1920, "winner_votes"] == 16_147_249
    assert df.loc[1920, "runner_up_votes"] == 9_140_864
    # popular-vote leaders who lost the electoral college
    assert df.loc[2000, "winner"] == "Al Gore"
    assert df.loc[2016, "winner"] == "Hillary Clinton"
    # totals exist from 1976 only
    assert df.loc[:1972, "total_votes_all_candidates"].isna().all()
    assert df.loc[1976:, "total_votes_all_candidates"].notna().all()


def test_elections_convenience_columns():
    df = datasets.us_presidential_elections()
    assert (df["top2_total"] == df["winner_votes"] + df["runner_up_votes"]).all()
    assert np.array_equal(df["winner_share"], df["winner_votes"] / df["top2_total"])
    assert (df["winner_share"] > 0.5).all()
    assert (df["winner_votes"] > df["runner_up_votes"]).all()
    later = df.dropna(subset=["total_votes_all_candidates"])
    assert (later["total_votes_all_candidates"] >= later["top2_total"]).all()


def test_election_histogram():
    h = datasets.election_histogram(2020)
    assert h.dtype == np.int64 and h.shape == (2,)
    assert h.tolist() == [81_283_501, 74_223_975]
    assert datasets.election_histogram(np.int64(1920)).tolist() == [16_147_249, 9_140_864]
    df = datasets.us_presidential_elections()
    for year, w, r in zip(df["year"], df["winner_votes"], df["runner_up_votes"]):
        assert datasets.election_histogram(int(year)).tolist() == [w, r]


@pytest.mark.parametrize("year", [1916, 2022, 2021, 2024, -4])
def test_election_histogram_bad_year_value(year):
    with pytest.raises(ValueError, match="year"):
        datasets.election_histogram(year)


@pytest.mark.parametrize("year", ["2020", 2020.0, True, None])
def test_election_histogram_bad_year_type(year):
    with pytest.raises(TypeError, match="year"):
        datasets.election_histogram(year)


# ----------------------------------------------------------------------------- districts


def test_districts_shape_columns_dtypes():
    df = datasets.us_2020_districts()
    assert df.shape == (56, 5)
    assert list(df.columns) == DISTRICT_COLUMNS
    for col in ["biden_votes", "trump_votes", "total_votes"]:
        assert df[col].dtype == np.int64, col
    assert df["biden_top2_share"].dtype == np.float64
    expected = set(STATES) | {"DC", "ME-1", "ME-2", "NE-1", "NE-2", "NE-3"}
    assert len(STATES) == 50
    assert set(df["district"]) == expected
    assert df["district"].is_unique


def test_districts_known_facts():
    df = datasets.us_2020_districts().set_index("district")
    assert df.loc["DC", "biden_votes"] == 317_323
    assert df.loc["DC", "trump_votes"] == 18_586
    assert df.loc["NE-3", "biden_votes"] == 65_854
    assert df.loc["NE-3", "trump_votes"] == 222_179
    assert df["biden_top2_share"].idxmax() == "DC"
    assert df["biden_top2_share"].max() == pytest.approx(0.944670, abs=5e-7)
    assert df["biden_top2_share"].idxmin() == "NE-3"
    assert df["biden_top2_share"].min() == pytest.approx(0.228634, abs=5e-7)
    # NE-2 is not an extreme: Biden won it
    assert df.loc["NE-2", "biden_top2_share"] > 0.5
    # districts add up to their state rows
    for col in ["biden_votes", "trump_votes"]:
        assert df.loc["ME-1", col] + df.loc["ME-2", col] == df.loc["ME", col]
        assert df.loc[["NE-1", "NE-2", "NE-3"], col].sum() == df.loc["NE", col]
    assert (df["total_votes"] >= df["biden_votes"] + df["trump_votes"]).all()
    # sum of the 51 state-certified results (quoted in SOURCES.md)
    states = df.loc[STATES + ["DC"]]
    assert states["biden_votes"].sum() == 81_268_924
    assert states["trump_votes"].sum() == 74_216_154


def test_rounded_share_column_matches_counts():
    df = datasets.us_2020_districts()
    exact = df["biden_votes"] / (df["biden_votes"] + df["trump_votes"])
    assert np.all(np.abs(exact - df["biden_top2_share"]) <= 5e-7 + 1e-12)


def test_district_shares():
    shares = datasets.us_2020_district_shares()
    districts = datasets.us_2020_districts()
    assert shares.shape == (56, 2)
    assert list(shares.columns) == ["biden", "trump"]
    assert shares.index.name == "district"
    assert shares.index.tolist() == districts["district"].tolist()
    arr = shares.to_numpy()
    assert arr.dtype == np.float64 and arr.shape == (56, 2)
    assert np.all(arr > 0) and np.all(arr < 1)
    np.testing.assert_allclose(arr.sum(axis=1), 1.0, rtol=0, atol=2e-16)
    # computed from the counts, not from the rounded column
    b = districts["biden_votes"].to_numpy()
    t = districts["trump_votes"].to_numpy()
    np.testing.assert_array_equal(arr[:, 0], b / (b + t))
    np.testing.assert_array_equal(arr[:, 1], t / (b + t))
    assert shares["biden"].idxmax() == "DC"
    assert shares["biden"].idxmin() == "NE-3"
    assert shares.loc["DC", "biden"] == 317_323 / 335_909


def test_results_are_copies():
    df = datasets.us_presidential_elections()
    df.loc[:, "winner_votes"] = 0
    df["extra"] = 1
    assert datasets.us_presidential_elections()["winner_votes"].iloc[-1] == 81_283_501
    assert "extra" not in datasets.us_presidential_elections().columns
    dist = datasets.us_2020_districts()
    dist.loc[:, "biden_votes"] = -1
    assert (datasets.us_2020_districts()["biden_votes"] > 0).all()
    shares = datasets.us_2020_district_shares()
    shares.iloc[:, :] = 0.0
    assert datasets.us_2020_district_shares().to_numpy().sum() == pytest.approx(56)
    h = datasets.election_histogram(2020)
    h[:] = 0
    assert datasets.election_histogram(2020).tolist() == [81_283_501, 74_223_975]


def test_package_data_present():
    data = resources.files("smoothdp_nb.core").joinpath("data")
    for name in [
        "us_president_popular_vote_1920_2020.csv",
        "us_president_2020_by_district.csv",
        "SOURCES.md",
    ]:
        assert data.joinpath(name).is_file(), name
    sources = data.joinpath("SOURCES.md").read_text(encoding="utf-8")
    for phrase in ["Britannica", "FiveThirtyEight", "MIT Election Data", "NE-3", "56"]:
        assert phrase in sources, phrase


# ----------------------------------------------------------------------------- reference


#: SHA-256 of the reference tables' columns (../shared/data, read once with pandas and written
#: cell by cell by ``_table_digest``): the published tables, not this package's output. The
#: digest lets a fresh clone without the reference folder still check every cell.
REFERENCE_DIGESTS = {
    "us_president_popular_vote_1920_2020.csv": "57a29cb4514662facead8aa0dcb9897954a90730ac349d1853e45bebe1634f70",
    "us_president_2020_by_district.csv": "086ad81b7aec412f20c702f6a89cbd6d2f0728110f3c2cfdbe7cb8ead538a77f",
}


def _table_digest(frame: pd.DataFrame, columns: list[str]) -> str:
    """One line per row, cells joined by '|': missing as '', numbers as repr(float), text as is."""
    rows = (
        "|".join("" if pd.isna(v) else repr(float(v)) if isinstance(v, numbers.Number) else str(v) for v in record)
        for record in frame[columns].itertuples(index=False)
    )
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def test_package_figures_equal_reference_tables():
    elections = datasets.us_presidential_elections()
    districts = datasets.us_2020_districts()
    assert _table_digest(elections, ELECTION_COLUMNS) == REFERENCE_DIGESTS["us_president_popular_vote_1920_2020.csv"]
    assert _table_digest(districts, DISTRICT_COLUMNS) == REFERENCE_DIGESTS["us_president_2020_by_district.csv"]


def test_reference_digests_are_the_reference_tables():
    """Where the reference folder is beside the checkout, the recorded digests are its tables'."""
    if not SHARED_DATA.is_dir():  # a fresh clone: the digests above stand for the tables
        assert all(len(d) == 64 for d in REFERENCE_DIGESTS.values())
        return
    columns = {
        "us_president_popular_vote_1920_2020.csv": ELECTION_COLUMNS,
        "us_president_2020_by_district.csv": DISTRICT_COLUMNS,
    }
    for name, digest in REFERENCE_DIGESTS.items():
        assert _table_digest(pd.read_csv(SHARED_DATA / name), columns[name]) == digest, name
