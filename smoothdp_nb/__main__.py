"""Command line: ``python -m smoothdp_nb [report]``.

``report`` (the default) prints the privacy of the US presidential elections
1920-2020 (Figure 1 of *Smoothed Differential Privacy*): the database-dependent
delta and the adversary's adjusted utility when 0.2 % (and 0.01 %) of the
top-2 votes are lost at random.
"""

from __future__ import annotations

import argparse
import math
import sys


def election_report(lost: float = 0.002, t: float = 0.51) -> str:
    """Text table of Figure 1: per election, log10 delta(x) and log10 utility."""
    # imported here, after the arguments are parsed: --help must not wait for numpy and scipy
    import numpy as np

    from . import core as sdp

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m smoothdp_nb",
        # plain text: the module docstring is reST and would print its markup
        description="Smoothed differential privacy from the command line. Without a subcommand: the "
        "election privacy report (Figure 1 of Smoothed Differential Privacy).",
    )
    sub = parser.add_subparsers(dest="command")
    sub.add_parser(
        "tutorials",
        help="execute the tutorial notebooks into HTML reports (--out DIR, --ci, --jobs N) or open JupyterLab (--lab)",
        add_help=False,
    )
    sub.add_parser(
        "run",
        help="run a TOML spec (like a %%%%smoothdp cell): run spec.toml [--out report.html] [--json out.json]",
        add_help=False,
    )
    sub.add_parser(
        "gallery",
        help="render every chart builder to SVG and PNG with an index page: gallery --out DIR",
        add_help=False,
    )
    rep = sub.add_parser("report", help="print the election privacy report (default)")
    rep.add_argument("--lost", type=float, default=None, help="fraction of votes lost (default: 0.002 and 0.0001)")
    rep.add_argument("--threshold", type=float, default=0.51, help="accuracy threshold t (default 0.51)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "tutorials":
        from .tutorials import main as tutorials_main

        return tutorials_main(argv[1:])
    if argv and argv[0] == "gallery":
        from .gallery import main as gallery_main

        return gallery_main(argv[1:])
    if argv and argv[0] == "run":
        # the run command has its own parser (smoothdp_nb.cli)
        from .cli import main_run

        return main_run(argv[1:])
    args = parser.parse_args(argv)
    lost = getattr(args, "lost", None)
    if lost is not None and not 0 < lost < 1:
        parser.error(f"--lost must be a fraction in (0, 1), got {lost}")
    if not 0.5 <= getattr(args, "threshold", 0.51) < 1:
        parser.error(f"--threshold must be in [0.5, 1) (epsilon = ln(t / (1 - t)) >= 0), got {args.threshold}")
    if args.command in (None, "report"):
        losts = [args.lost] if getattr(args, "lost", None) else [0.002, 0.0001]
        t = getattr(args, "threshold", 0.51)
        print("\n\n".join(election_report(lost, t) for lost in losts))
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
