"""US presidential election data used by the paper *Smoothed Differential Privacy*.

The figures ship inside the package (``smoothdp_nb/core/data/*.csv``) so that they are
available wherever the package is installed (for instance on Binder). Their public
sources are described in ``smoothdp_nb/core/data/SOURCES.md``:

* national top-2 popular votes 1920-2020: the Encyclopaedia Britannica table
  "United States Presidential Election Results"; totals over all candidates for
  1976-2020 from the MIT Election Data and Science Lab;
* 2020 results by state and by the congressional districts of Maine and Nebraska:
  the official state results as compiled by FiveThirtyEight.

Every function returns a fresh object, so callers may modify the result freely.
"""

from __future__ import annotations

import csv
import functools
import io
import numbers
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from smoothdp_nb.core.numerics.array_types import IntArray

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "us_presidential_elections",
    "us_2020_districts",
    "election_histogram",
    "us_2020_district_shares",
]

_ELECTIONS_FILE = "us_president_popular_vote_1920_2020.csv"
_DISTRICTS_FILE = "us_president_2020_by_district.csv"


def _read_csv(name: str, dtypes: dict[str, str]) -> pd.DataFrame:
    """Read one of the package's data files with explicit column types."""
    import pandas as pd  # deferred: one election's histogram is read without pandas (a first result stays light)

    resource = resources.files("smoothdp_nb.core").joinpath("data", name)
    with resource.open("rb") as handle:  # bytes: the csv parser sees the file's own line ends
        frame = pd.read_csv(handle, encoding="utf-8", dtype=dtypes, keep_default_na=False, na_values=[""])
    return frame


@functools.cache
def _elections() -> pd.DataFrame:
    frame = _read_csv(
        _ELECTIONS_FILE,
        {
            "year": "int64",
            "winner": "str",
            "winner_party": "str",
            "winner_votes": "int64",
            "runner_up": "str",
            "runner_up_party": "str",
            "runner_up_votes": "int64",
            "total_votes_all_candidates": "Int64",
        },
    )
    frame["top2_total"] = frame["winner_votes"] + frame["runner_up_votes"]
    frame["winner_share"] = frame["winner_votes"] / frame["top2_total"]
    return frame


@functools.cache
def _top2_votes() -> dict[int, tuple[int, int]]:
    """Year -> (winner votes, runner-up votes), read by the csv module (no pandas)."""
    text = resources.files("smoothdp_nb.core").joinpath("data", _ELECTIONS_FILE).read_text(encoding="utf-8")
    return {
        int(row["year"]): (int(row["winner_votes"]), int(row["runner_up_votes"]))
        for row in csv.DictReader(io.StringIO(text, newline=""))
    }


@functools.cache
def _districts() -> pd.DataFrame:
    return _read_csv(
        _DISTRICTS_FILE,
        {
            "district": "str",
            "biden_votes": "int64",
            "trump_votes": "int64",
            "total_votes": "int64",
            "biden_top2_share": "float64",
        },
    )


def us_presidential_elections() -> pd.DataFrame:
    """Top-2 national popular votes of the US presidential elections 1920-2020.

    One row per election year (26 rows, 1920, 1924, ..., 2020). "Winner" means the
    leader of the national popular vote (Gore in 2000, Clinton in 2016), "runner-up"
    the candidate in second place.

    Returns
    -------
    pandas.DataFrame
        Columns:

        ``year`` (int64)
            Election year.
        ``winner``, ``winner_party`` (str)
            Popular-vote leader and party.
        ``winner_votes`` (int64)
            National popular votes of the leader.
        ``runner_up``, ``runner_up_party`` (str), ``runner_up_votes`` (int64)
            The same for the second-placed candidate.
        ``total_votes_all_candidates`` (nullable Int64)
            Votes for all candidates, 1976-2020 only (``<NA>`` before 1976).
        ``top2_total`` (int64)
            ``winner_votes + runner_up_votes``.
        ``winner_share`` (float64)
            ``winner_votes / top2_total``, the leader's share of the top-2 vote.

    Notes
    -----
    Candidate votes follow the Encyclopaedia Britannica table "United States
    Presidential Election Results" (which relies on the Clerk of the House, the Office
    of the Federal Register, the FEC and Congressional Quarterly); totals over all
    candidates come from the MIT Election Data and Science Lab returns 1976-2020. See
    ``smoothdp_nb/core/data/SOURCES.md`` for the known differences between sources.

    Examples
    --------
    >>> df = us_presidential_elections()
    >>> int(df.loc[df.year == 2020, "winner_votes"].iloc[0])
    81283501
    """
    return _elections().copy(deep=True)


def us_2020_districts() -> pd.DataFrame:
    """Biden and Trump votes in the 2020 presidential election by electoral unit.

    56 rows: the 50 states and DC (two-letter codes), and the congressional districts
    ``ME-1``, ``ME-2``, ``NE-1``, ``NE-2``, ``NE-3`` of the two states that split their
    electoral votes. The statewide rows ``ME`` and ``NE`` are kept, since they award
    two at-large electors each (the paper's "57 districts" is a counting slip: there
    are 56 units).

    Returns
    -------
    pandas.DataFrame
        Columns ``district`` (str), ``biden_votes``, ``trump_votes``, ``total_votes``
        (int64; all valid presidential votes) and ``biden_top2_share`` (float64,
        ``biden / (biden + trump)`` rounded to 6 decimals; use
        :func:`us_2020_district_shares` for unrounded shares).

    Notes
    -----
    Official state results as compiled by FiveThirtyEight (Maine: first-choice counts
    of its ranked-choice tally). The extremes of the Biden top-2 share are DC
    (0.944670, maximum) and NE-3 (0.228634, minimum); NE-2 is not an extreme.
    """
    return _districts().copy(deep=True)


def election_histogram(year: int) -> IntArray:
    """Top-2 popular-vote histogram ``[winner_votes, runner_up_votes]`` of one election.

    Parameters
    ----------
    year : int
        An election year between 1920 and 2020 (a multiple of 4).

    Returns
    -------
    numpy.ndarray
        An int64 array of shape ``(2,)``: votes of the popular-vote leader, then of the
        runner-up (Encyclopaedia Britannica figures, see
        :func:`us_presidential_elections`).

    Raises
    ------
    TypeError
        If ``year`` is not an integer.
    ValueError
        If there was no presidential election in ``year`` within 1920-2020.

    Examples
    --------
    >>> election_histogram(2020)
    array([81283501, 74223975])
    """
    if isinstance(year, bool) or not isinstance(year, numbers.Integral):
        raise TypeError(f"year must be an integer election year, got {year!r}")
    votes = _top2_votes().get(int(year))
    if votes is None:
        raise ValueError(
            f"year must be a US presidential election year between 1920 and 2020 (1920, 1924, ..., 2020), got {year!r}"
        )
    return np.array(votes, dtype=np.int64)


def us_2020_district_shares() -> pd.DataFrame:
    """Top-2 share vectors ``[biden, trump]`` of the 56 units of the 2020 election.

    Returns
    -------
    pandas.DataFrame
        Shape ``(56, 2)``, indexed by ``district`` (same order as
        :func:`us_2020_districts`), float64 columns ``biden`` and ``trump``. Each row is a
        probability vector computed exactly from the vote counts
        (``biden_votes / (biden_votes + trump_votes)`` and likewise for Trump), so rows
        sum to 1 up to float64 rounding; ``.to_numpy()`` gives the plain ``(56, 2)``
        array.

    Notes
    -----
    Vote counts: official state results as compiled by FiveThirtyEight (see
    :func:`us_2020_districts`).
    """
    import pandas as pd  # deferred: the frame is the result; one election's histogram is read without pandas

    frame = _districts()
    biden = frame["biden_votes"].to_numpy(dtype=np.int64)
    trump = frame["trump_votes"].to_numpy(dtype=np.int64)
    top2 = biden + trump
    result = pd.DataFrame(
        {"biden": biden / top2, "trump": trump / top2},
        index=pd.Index(frame["district"].to_numpy(), name="district"),
    )
    return result
