"""``python -m smoothdp_nb [report]``: the privacy of the US presidential elections 1920-2020.

The default subcommand prints Figure 1 of *Smoothed Differential Privacy* as a
table: per election the database-dependent delta and the adversary's adjusted
utility when 0.2 % (and 0.01 %) of the top-2 votes are lost at random.

References
----------
Ao Liu, Yu-Xiang Wang, Lirong Xia, "Smoothed Differential Privacy", Figure 1 and Appendix A.1.
"""

from __future__ import annotations

import argparse
import math

import smoothdp_nb as sdp
from smoothdp_nb.cli.command import Command

__all__ = ["COMMAND", "election_report", "main"]


def election_report(lost: float = 0.002, t: float = 0.51) -> str:
    """Text table of Figure 1: per election, log10 delta(x) and log10 utility.

    Parameters
    ----------
    lost : float
        Fraction of the votes lost at random, in (0, 1) (the sampling mechanism keeps ``1 - lost``).
    t : float
        The adversary's accuracy threshold, in [0.5, 1); epsilon = ln(t / (1 - t)).

    Returns
    -------
    str

    References
    ----------
    Ao Liu, Yu-Xiang Wang, Lirong Xia, "Smoothed Differential Privacy", Figure 1; Appendix A.1
    (t = e^epsilon / (e^epsilon + 1)).
    """
    import numpy as np  # deferred: after the arguments are parsed, --help does not wait for numpy

    df = sdp.datasets.us_presidential_elections()
    hist = df[["winner_votes", "runner_up_votes"]].to_numpy()
    eta = f"{1 - lost:.10g}"
    mech = sdp.SamplingHistogram(eta=eta)
    epsilon = math.log(t / (1 - t))  # Appendix A.1: t = e^epsilon / (e^epsilon + 1)
    logd = np.asarray(sdp.privacy_profile(mech, hist, epsilon, log=True)) / math.log(10)
    # the adversary knows every vote but one: the worse of the two possibilities
    util = np.maximum(
        sdp.adjusted_utility(mech, hist - [1, 0], t, log=True),
        sdp.adjusted_utility(mech, hist - [0, 1], t, log=True),
    ) / math.log(10)
    lines = [
        f"US presidential elections, top-2 popular vote, {lost:.2%} of votes lost (eta = {eta}),",
        f"epsilon = ln({t}/{1 - t:.2f}) = {epsilon:.5f}, threshold t = {t}.  DP delta = T/n = {1 - lost:.4g}.",
        "",
        f"{'year':>4}  {'winner':<24}{'runner-up':<24}{'n':>12}  {'log10 delta':>11}  {'log10 utility':>13}",
    ]
    for row, d, u in zip(df.itertuples(), logd, util):
        n = row.winner_votes + row.runner_up_votes
        lines.append(f"{row.year:>4}  {row.winner:<24}{row.runner_up:<24}{n:>12,}  {d:>11.2f}  {u:>13.2f}")
    return "\n".join(lines)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lost", type=float, default=None, help="fraction of votes lost (default: 0.002 and 0.0001)")
    parser.add_argument("--threshold", type=float, default=0.51, help="accuracy threshold t (default 0.51)")


def handle(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the report for ``args.lost`` (default: 0.2 % and 0.01 %) and ``args.threshold``."""
    lost = getattr(args, "lost", None)
    threshold = getattr(args, "threshold", 0.51)
    if lost is not None and not 0 < lost < 1:
        parser.error(f"--lost must be a fraction in (0, 1), got {lost}")
    if not 0.5 <= threshold < 1:
        parser.error(f"--threshold must be in [0.5, 1) (epsilon = ln(t / (1 - t)) >= 0), got {threshold}")
    losts = [lost] if lost else [0.002, 0.0001]
    print("\n\n".join(election_report(one, threshold) for one in losts))
    return 0


COMMAND = Command(
    name="report",
    help="print the election privacy report (default)",
    description="The privacy of the US presidential elections 1920-2020 (Figure 1 of Smoothed Differential "
    "Privacy): per election the delta of the sampling mechanism and the adversary's adjusted utility.",
    configure=_configure,
    handle=handle,
)
main = COMMAND.main
