"""A table of hand-written specs, valid and hostile, through ``%%smoothdp`` and ``python -m smoothdp_nb run``.

Every hostile spec must give, in the magic, a ``UsageError`` naming the key and its
line (no traceback) and, in the CLI, exit status 2 with one line on standard error.
The offending line of each spec is marked with the TOML comment ``# <-``; specs
without a marker are valid and must run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("IPython")

from IPython.core.error import UsageError

from smoothdp_nb.cli import main_run
from smoothdp_nb.spec import running as spec_running

M = "mechanism = {eta = 0.5}"
PROFILE = 'compute = "profile"\nepsilon = 1\n' + M + "\n"
SMOOTHED = 'compute = "smoothed"\nepsilon = 1\n' + M + "\npi = [[0.4, 0.6], [0.6, 0.4]]\n"
MC = SMOOTHED + 'method = "monte-carlo"\nrng = 1\n'
RELEASE = 'compute = "release"\nvalues = [1, 2, 3, 4, 5, 6]\nepsilon = 1\nbounds = [0, 10]\nrng = 1\n'
NOISE = 'compute = "noise"\nepsilon = 1\ngamma = [0.05, 0.1]\ndelta = 1e-5\n'
# a Latin-1 CSV the fixture writes, in the system's temporary folder (one name per process)
NONUTF8 = (Path(tempfile.gettempdir()) / f"smoothdp_hostile_latin1_{os.getpid()}.csv").as_posix()

# (id, TOML text, key the error must name, or None for a valid spec, magic-only)
SPECS: list[tuple[str, str, str | None, bool]] = [
    # ---------------------------------------------------------------- valid
    ("ok-profile", PROFILE + "histogram = [[60, 40], [55, 45]]", None, False),
    (
        "ok-profile-exact-eta",
        'compute = "profile"\nepsilon = [0.1, 1]\nhistogram = [60, 40]\nmechanism = {eta = "0.998"}',
        None,
        False,
    ),
    (
        "ok-profile-dataset",
        'compute = "profile"\nepsilon = 0.04\ndataset = "us-elections"\nyears = [2016, 2020]\n' + M,
        None,
        False,
    ),
    (
        "ok-profile-range",
        'compute = "profile"\nepsilon = {start = 0.1, stop = 1, num = 4, log = true}\nhistogram = [6, 4]\n' + M,
        None,
        False,
    ),
    ("ok-smoothed", SMOOTHED + "n = 50", None, False),
    ("ok-smoothed-T", 'compute = "smoothed"\nepsilon = 1\nmechanism = {T = 5}\npi = [[0.4, 0.6]]\nn = 40', None, False),
    ("ok-monte-carlo", MC + "n = 50\ntrials = 200\ncandidates = 3", None, False),
    (
        "ok-sweep",
        'compute = "sweep"\nepsilon = 1\n' + M + "\npi = [[0.4, 0.6], [0.6, 0.4]]\nn = [10, 20, 40]",
        None,
        False,
    ),
    ("ok-release", RELEASE, None, False),
    ("ok-release-trim", RELEASE + 'query = "trimmed_mean"\ntrim = 1', None, False),
    ("ok-noise", NOISE, None, False),
    (
        "ok-data-ns",
        'compute = "release"\ndata = "df"\ncolumn = "x"\nbounds = [0, 10]\nepsilon = 1\nrng = 1',
        None,
        True,
    ),
    ("ok-pi-ns", 'compute = "smoothed"\nepsilon = 1\n' + M + '\npi = "P"\nn = 20', None, True),
    # ---------------------------------------------------------------- numbers are numbers
    ("epsilon-inf", 'compute = "profile"\nepsilon = inf  # <-\nhistogram = [6, 4]\n' + M, "epsilon", False),
    ("epsilon-nan", 'compute = "profile"\nepsilon = nan  # <-\nhistogram = [6, 4]\n' + M, "epsilon", False),
    ("epsilon-negative", 'compute = "profile"\nepsilon = -1  # <-\nhistogram = [6, 4]\n' + M, "epsilon", False),
    ("epsilon-string", 'compute = "profile"\nepsilon = "0.5"  # <-\nhistogram = [6, 4]\n' + M, "epsilon", False),
    ("epsilon-bool", 'compute = "profile"\nepsilon = true  # <-\nhistogram = [6, 4]\n' + M, "epsilon", False),
    ("epsilon-empty", 'compute = "profile"\nepsilon = []  # <-\nhistogram = [6, 4]\n' + M, "epsilon", False),
    (
        "epsilon-list-string",
        'compute = "profile"\nepsilon = [0.5, "1"]  # <-\nhistogram = [6, 4]\n' + M,
        "epsilon[1]",
        False,
    ),
    (
        "epsilon-range-no-num",
        'compute = "profile"\nepsilon = {start = 0.1, stop = 1}  # <-\nhistogram = [6, 4]\n' + M,
        "epsilon",
        False,
    ),
    (
        "epsilon-range-huge",
        'compute = "profile"\nepsilon = {start = 0.1, stop = 1, num = 100000}  # <-\nhistogram = [6, 4]\n' + M,
        "epsilon.num",
        False,
    ),
    (
        "epsilon-range-log-zero",
        'compute = "profile"\nepsilon = {start = 0, stop = 1, num = 3, log = true}  # <-\nhistogram = [6, 4]\n' + M,
        "epsilon.start",
        False,
    ),
    ("release-epsilon-inf", RELEASE.replace("epsilon = 1", "epsilon = inf  # <-"), "epsilon", False),
    ("release-epsilon-zero", RELEASE.replace("epsilon = 1", "epsilon = 0  # <-"), "epsilon", False),
    (
        "eta-underscore",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = "0.5_0"}  # <-',
        "mechanism.eta",
        False,
    ),
    (
        "eta-arabic-indic",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = "\u0660.\u0665"}  # <-',
        "mechanism.eta",
        False,
    ),
    (
        "eta-spaces",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = " 0.5 "}  # <-',
        "mechanism.eta",
        False,
    ),
    (
        "eta-above-one",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = "1.5"}  # <-',
        "mechanism.eta",
        False,
    ),
    (
        "eta-zero",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = 0}  # <-',
        "mechanism.eta",
        False,
    ),
    (
        "eta-bool",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = true}  # <-',
        "mechanism.eta",
        False,
    ),
    (
        "eta-and-T",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = 0.5, T = 2}  # <-',
        "mechanism",
        False,
    ),
    (
        "mechanism-number",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = 5  # <-',
        "mechanism",
        False,
    ),
    (
        "mechanism-kind",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = 0.5, kind = "bogus"}  # <-',
        "mechanism.kind",
        False,
    ),
    (
        "noise-epsilon-zero",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = 0.5, noise_epsilon = 0}  # <-',
        "mechanism.noise_epsilon",
        False,
    ),
    (
        "replace-string",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = 0.5, replace = "yes"}  # <-',
        "mechanism.replace",
        False,
    ),
    ("T-zero", 'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {T = 0}  # <-', "mechanism.T", False),
    (
        "T-fraction",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {T = 2.5}  # <-',
        "mechanism.T",
        False,
    ),
    (
        "T-above-n-profile",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]  # <-\nmechanism = {T = 50}',
        "histogram",
        False,
    ),
    (
        "T-above-n-smoothed",
        'compute = "smoothed"\nepsilon = 1\nmechanism = {T = 50}\npi = [[0.4, 0.6]]\nn = 20  # <-',
        "n",
        False,
    ),
    # ---------------------------------------------------------------- histograms
    ("hist-zero", PROFILE + "histogram = [0, 0]  # <-", "histogram", False),
    ("hist-huge", PROFILE + "histogram = [1152921504606846976, 1]  # <-", "histogram", False),
    ("hist-negative", PROFILE + "histogram = [5, -1]  # <-", "histogram", False),
    ("hist-fraction", PROFILE + "histogram = [5.5, 1]  # <-", "histogram", False),
    ("hist-ragged", PROFILE + "histogram = [[1, 2], [3]]  # <-", "histogram", False),
    ("hist-bool", PROFILE + "histogram = [true, 1]  # <-", "histogram", False),
    ("hist-string", PROFILE + 'histogram = ["5", 1]  # <-', "histogram", False),
    ("hist-one-category", PROFILE + "histogram = [5]  # <-", "histogram", False),
    ("hist-empty", PROFILE + "histogram = []  # <-", "histogram", False),
    ("hist-and-dataset", PROFILE + 'histogram = [5, 5]  # <-\ndataset = "us-elections"', "histogram", False),
    ("dataset-bogus", PROFILE + 'dataset = "bogus"  # <-', "dataset", False),
    ("years-no-election", PROFILE + 'dataset = "us-elections"\nyears = [1921]  # <-', "years", False),
    ("labels-length", PROFILE + 'histogram = [[6, 4], [5, 5]]\nlabels = ["a"]  # <-', "labels", False),
    # ---------------------------------------------------------------- smoothed / sweep
    ("n-string", SMOOTHED + 'n = "100"  # <-', "n", False),
    ("n-bool", SMOOTHED + "n = true  # <-", "n", False),
    ("n-zero", SMOOTHED + "n = 0  # <-", "n", False),
    ("n-inf", SMOOTHED + "n = inf  # <-", "n", False),
    ("n-list-for-smoothed", SMOOTHED + "n = [10, 20]  # <-", "n", False),
    ("pi-sum", 'compute = "smoothed"\nepsilon = 1\n' + M + "\nn = 10\npi = [[0.5, 0.6]]  # <-", "pi[0]", False),
    (
        "pi-string-number",
        'compute = "smoothed"\nepsilon = 1\n' + M + '\nn = 10\npi = [[0.5, "0.5"]]  # <-',
        "pi[0]",
        False,
    ),
    (
        "pi-ragged",
        'compute = "smoothed"\nepsilon = 1\n' + M + "\nn = 10\npi = [[0.5, 0.5], [0.3, 0.3, 0.4]]  # <-",
        "pi",
        False,
    ),
    ("pi-negative", 'compute = "smoothed"\nepsilon = 1\n' + M + "\nn = 10\npi = [[1.5, -0.5]]  # <-", "pi[0]", False),
    ("pi-module", 'compute = "smoothed"\nepsilon = 1\n' + M + '\nn = 10\npi = "np"  # <-', "pi", False),
    ("pi-unknown", 'compute = "smoothed"\nepsilon = 1\n' + M + '\nn = 10\npi = "nothing"  # <-', "pi", False),
    ("budget-inf", SMOOTHED + "n = 10\nbudget = inf  # <-", "budget", False),
    ("budget-zero", SMOOTHED + "n = 10\nbudget = 0  # <-", "budget", False),
    ("budget-with-mc", MC + "n = 10\nbudget = 5  # <-", "budget", False),
    ("trials-with-exact", SMOOTHED + "n = 10\ntrials = 5  # <-", "trials", False),
    ("trials-zero", MC + "n = 10\ntrials = 0  # <-", "trials", False),
    ("confidence-one", MC + "n = 10\nconfidence = 1  # <-", "confidence", False),
    ("rng-negative", MC.replace("rng = 1", "rng = -1  # <-") + "n = 10", "rng", False),
    ("rng-string", MC.replace("rng = 1", 'rng = "1"  # <-') + "n = 10", "rng", False),
    ("workers-huge", MC + 'n = 10\nexecutor = "threads"\nworkers = 1000000  # <-', "workers", False),
    ("workers-without-executor", MC + "n = 10\nworkers = 2  # <-", "workers", False),
    ("executor-bogus", MC + 'n = 10\nexecutor = "gpu"  # <-', "executor", False),
    ("scheduler-with-threads", MC + 'n = 10\nexecutor = "threads"\nscheduler = "tcp://x:1"  # <-', "scheduler", False),
    ("method-bogus", SMOOTHED + 'n = 10\nmethod = "magic"  # <-', "method", False),
    # ---------------------------------------------------------------- runaway jobs, refused before they start
    ("mc-trials-1e9", MC + "n = 100\ntrials = 1000000000  # <-", "trials", False),
    ("mc-trials-1e12", MC + "n = 100\ntrials = 1000000000000  # <-", "trials", False),
    (
        "mc-candidates-1e9",
        'compute = "smoothed"\nepsilon = 1\n' + M + '\nmethod = "monte-carlo"\ntrials = 10\n'
        "pi = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2], [0.3, 0.5, 0.2]]\nn = 10000\ncandidates = 1000000000  # <-",
        "candidates",
        False,
    ),
    ("exact-n-1e7", SMOOTHED + "n = 10000000  # <-", "n", False),
    (
        "exact-m3-memory",
        'compute = "smoothed"\nepsilon = 1\n'
        + M
        + "\npi = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]\nbudget = 1e9\nn = 20000  # <-",
        "n",
        False,
    ),
    (
        "sweep-runaway",
        'compute = "sweep"\nepsilon = 1\n' + M + "\npi = [[0.4, 0.6], [0.6, 0.4]]\nn = [1000, 100000, 10000000]  # <-",
        "n",
        False,
    ),
    # ---------------------------------------------------------------- releases
    ("gamma-above-range", RELEASE + "gamma = 2  # <-", "gamma", False),
    ("gamma-cauchy-range", RELEASE + 'noise = "cauchy"\ngamma = 0.3  # <-', "gamma", False),
    ("trim-fraction-big", RELEASE + 'query = "trimmed_mean"\ntrim = 0.7  # <-', "trim", False),
    ("trim-with-median", RELEASE + "trim = 0.2  # <-", "trim", False),
    ("trim-count-too-big", RELEASE + 'query = "trimmed_mean"\ntrim = 100  # <-', "trim", False),
    ("trim-bool", RELEASE + 'query = "trimmed_mean"\ntrim = true  # <-', "trim", False),
    ("shape-inf", RELEASE + 'noise = "cauchy"\nshape = inf  # <-', "shape", False),
    ("shape-cauchy-low", RELEASE + 'noise = "cauchy"\nshape = 0.5  # <-', "shape", False),
    ("shape-polyplace", RELEASE + "shape = 3  # <-", "shape", False),
    ("values-string", RELEASE.replace("values = [1, 2, 3, 4, 5, 6]", 'values = ["1", 2]  # <-'), "values[0]", False),
    ("values-empty", RELEASE.replace("values = [1, 2, 3, 4, 5, 6]", "values = []  # <-"), "values", False),
    ("values-nan", RELEASE.replace("values = [1, 2, 3, 4, 5, 6]", "values = [1, nan]  # <-"), "values[1]", False),
    ("values-bool", RELEASE.replace("values = [1, 2, 3, 4, 5, 6]", "values = [true, 1]  # <-"), "values[0]", False),
    ("bounds-reversed", RELEASE.replace("bounds = [0, 10]", "bounds = [1, 0]  # <-"), "bounds", False),
    ("bounds-inf", RELEASE.replace("bounds = [0, 10]", "bounds = [0, inf]  # <-"), "bounds", False),
    ("bounds-max-double", RELEASE.replace("bounds = [0, 10]", "bounds = [-1.7e308, 1.7e308]  # <-"), "bounds", False),
    ("bounds-one", RELEASE.replace("bounds = [0, 10]", "bounds = [0]  # <-"), "bounds", False),
    ("bounds-string", RELEASE.replace("bounds = [0, 10]", 'bounds = ["0", 1]  # <-'), "bounds", False),
    ("laplace-no-delta", RELEASE + 'noise = "laplace"  # <-', "delta", False),
    (
        "noisy-without-noise-epsilon",
        'compute = "profile"\nepsilon = 1\nhistogram = [6, 4]\nmechanism = {eta = 0.5, kind = "noisy"}  # <-',
        "mechanism.noise_epsilon",
        False,
    ),
    ("release-no-bounds", 'compute = "release"  # <-\nvalues = [1, 2]\nepsilon = 1', "bounds", False),
    ("delta-one", RELEASE + 'noise = "laplace"\ndelta = 1  # <-', "delta", False),
    ("query-bogus", RELEASE + 'query = "mode"  # <-', "query", False),
    ("noise-bogus", RELEASE + 'noise = "gauss"  # <-', "noise", False),
    ("data-module", 'compute = "release"\ndata = "np"  # <-\nepsilon = 1\nbounds = [0, 10]', "data", False),
    ("data-unknown", 'compute = "release"\ndata = "nothing"  # <-\nepsilon = 1\nbounds = [0, 10]', "data", False),
    ("data-strings", 'compute = "release"\ndata = "words"  # <-\nepsilon = 1\nbounds = [0, 10]', "data", True),
    (
        "csv-missing",
        'compute = "release"\ncsv = "/nonexistent/x.csv"  # <-\ncolumn = "a"\nepsilon = 1\nbounds = [0, 10]',
        "csv",
        False,
    ),
    (
        "csv-not-utf8",
        f'compute = "release"\ncsv = "{NONUTF8}"  # <-\ncolumn = "a"\nepsilon = 1\nbounds = [0, 10]',
        "csv",
        False,
    ),
    ("column-with-values", RELEASE + 'column = "a"  # <-', "column", False),
    # ---------------------------------------------------------------- noise comparison, keys, TOML
    ("noise-gamma-zero", NOISE.replace("gamma = [0.05, 0.1]", "gamma = 0  # <-"), "gamma", False),
    ("families-empty", NOISE + "families = []  # <-", "families", False),
    ("families-bogus", NOISE + 'families = ["bogus"]  # <-', "families", False),
    ("reference-string", NOISE + 'reference = "yes"  # <-', "reference", False),
    ("unknown-key", NOISE + "epsilom = 1  # <-", "epsilom", False),
    ("compute-bogus", 'compute = "bogus"  # <-\nepsilon = 1', "compute", False),
    ("title-number", NOISE + "title = 5  # <-", "title", False),
    ("toml-syntax", NOISE + "gamma = [0.1,  # <-", None, False),
    ("toml-duplicate", NOISE + "epsilon = 2  # <-", None, False),
]

HOSTILE = [s for s in SPECS if "# <-" in s[1]]
VALID = [s for s in SPECS if "# <-" not in s[1]]


def _marked_line(text: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if "# <-" in line)


@pytest.fixture(scope="module")
def ip(ipython_shell):
    with open(NONUTF8, "wb") as fh:
        fh.write("a\n1\n\xe9t\xe9\n".encode("latin-1"))
    shell = ipython_shell
    shell.run_line_magic("load_ext", "smoothdp_nb.magics")
    shell.user_ns.update(
        df=pd.DataFrame({"x": np.linspace(0, 10, 21)}),
        np=np,
        P=np.array([[0.3, 0.7], [0.6, 0.4]]),
        words=np.array(["a", "b"]),
    )
    return shell


def test_table_size():
    assert len(SPECS) >= 90 and len(VALID) >= 10


@pytest.mark.parametrize("name,text,key,magic_only", HOSTILE, ids=[s[0] for s in HOSTILE])
def test_hostile_spec_in_magic(ip, name, text, key, magic_only):
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("smoothdp", "--no-chart", text)
    msg = str(info.value)
    assert f"line {_marked_line(text)}" in msg, msg
    if key is not None:
        assert msg.startswith(f"%smoothdp: {key} (line"), msg


@pytest.mark.parametrize(
    "name,text,key,magic_only", [s for s in HOSTILE if not s[3]], ids=[s[0] for s in HOSTILE if not s[3]]
)
def test_hostile_spec_in_cli(ip, tmp_path, capsys, name, text, key, magic_only):
    path = tmp_path / "spec.toml"
    path.write_text(text, encoding="utf-8")
    assert main_run([str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert f"line {_marked_line(text)}" in err, err
    if key is not None:
        assert f": {key} (line" in err, err


@pytest.mark.parametrize("name,text,key,magic_only", VALID, ids=[s[0] for s in VALID])
def test_valid_spec_runs(ip, tmp_path, capsys, name, text, key, magic_only):
    ip.run_cell_magic("smoothdp", "-o out --no-chart", text)
    assert ip.user_ns["out"] is not None
    if not magic_only:
        path = tmp_path / "spec.toml"
        path.write_text(text, encoding="utf-8")
        assert main_run([str(path), "--quiet"]) == 0, capsys.readouterr().err


# ---------------------------------------------------------------- the line form


LINES_OK = [
    'compute = "noise"; epsilon = 1; gamma = 0.1; delta = 1e-5; title = "a\\"; b"',
    "compute = 'noise'; epsilon = 1; gamma = [0.1, 0.2]; families = ['cauchy']; title = 'x; y'",
    '{compute = "noise", epsilon = 2, gamma = 0.1, families = ["cauchy"]}',
    'compute = "profile"; histogram = [6, 4]; epsilon = 1; mechanism = {eta = "0.5"}',
]

LINES_BAD = [  # (line, key the error names)
    ('compute = "noise"; epsilon = "1"; gamma = 0.1; families = ["cauchy"]', "epsilon"),
    ('compute = "noise"; epsilon = 1; gamma = true; families = ["cauchy"]', "gamma"),
    ('compute = "profile"; histogram = [0, 0]; epsilon = 1; mechanism = {eta = 0.5}', "histogram"),
    ('compute = "profile"; histogram = [6, 4]; epsilon = 1; mechanism = {eta = "0.5_0"}', "mechanism.eta"),
    ('{compute = "noise", epsilon = inf, gamma = 0.1, families = ["cauchy"]}', "epsilon"),
    ('compute = "noise"; epsilon = 1; gamma = [0.1,', None),
    ('"; compute = "noise"', None),  # an unbalanced quote before the spec (found by the fuzz)
    ('compute = "release"; values = [1, 2]; epsilon = 1; bounds = [0, 1]; gamma = 2', "gamma"),
]


@pytest.mark.parametrize("line", LINES_OK)
def test_line_form_valid(ip, line):
    ip.run_line_magic("smoothdp", "-o lo --no-chart " + line)
    assert ip.user_ns["lo"] is not None


@pytest.mark.parametrize("line,key", LINES_BAD)
def test_line_form_hostile(ip, line, key):
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("smoothdp", "--no-chart " + line)
    if key is not None:
        assert str(info.value).startswith(f"%smoothdp: {key}"), str(info.value)


def test_escaped_quote_kept(ip):
    ip.run_line_magic(
        "smoothdp",
        '-o t --no-chart compute = "noise"; epsilon = 1; gamma = 0.1; '
        'families = ["cauchy"]; title = "say \\"hi\\"; bye"',
    )
    assert ip.user_ns["t"] is not None


def test_genuine_bugs_keep_their_traceback(ip, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setitem(spec_running.RUNNERS, "noise", broken)
    with pytest.raises(ZeroDivisionError):
        ip.run_cell_magic("smoothdp", "--no-chart", NOISE)
