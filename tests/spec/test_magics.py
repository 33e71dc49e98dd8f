"""%%smoothdp and %smoothdp through an in-process IPython shell (no kernel)."""

import numpy as np
import pandas as pd
import pytest
from IPython.core.error import UsageError  # IPython is a runtime dependency: a missing one is a failure

from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
from smoothdp_nb.core.smoothed.reports import ProfileResult
from smoothdp_nb.magics import SmoothDPMagics, line_to_toml

NOISE = 'compute = "noise"\nepsilon = 1\ngamma = [0.1, 0.2]\nfamilies = ["polyplace", "cauchy"]\n'


@pytest.fixture(scope="module")
def ip(ipython_shell):
    shell = ipython_shell
    shell.run_line_magic("load_ext", "smoothdp_nb.magics")
    return shell


def test_registered(ip):
    assert "smoothdp" in ip.magics_manager.magics["cell"]
    assert "smoothdp" in ip.magics_manager.magics["line"]


def test_cell_form_stores_output(ip):
    ip.run_cell_magic("smoothdp", "-o nc --no-chart", NOISE)
    assert isinstance(ip.user_ns["nc"], NoiseComparison)
    assert set(ip.user_ns["nc"].to_frame()["family"]) == {"polyplace", "cauchy"}


def test_line_form(ip):
    ip.run_line_magic(
        "smoothdp",
        '-o prof --no-chart compute = "profile"; histogram = [[6, 4], [9, 1]]; '
        "epsilon = [0.5, 1]; mechanism = {eta = 0.5}",
    )
    r = ip.user_ns["prof"]
    assert isinstance(r, ProfileResult) and r.log_delta.shape == (2, 2)


def test_line_form_inline_table(ip):
    ip.run_line_magic(
        "smoothdp", '-o q --no-chart {compute = "noise", epsilon = 2, gamma = 0.1, families = ["cauchy"]}'
    )
    assert ip.user_ns["q"].epsilon == 2


def test_line_to_toml_keeps_semicolons_in_strings():
    assert line_to_toml('title = "a; b"; epsilon = [1, 2]') == 'title = "a; b"\nepsilon = [1, 2]'


def test_release_from_user_namespace(ip):
    ip.user_ns["incomes"] = pd.DataFrame({"income": np.linspace(0, 100, 101)})
    ip.run_cell_magic(
        "smoothdp",
        "-o rel --no-chart",
        'compute = "release"\ndata = "incomes"\ncolumn = "income"\nbounds = [0, 100]\nepsilon = 1\nrng = 1\n',
    )
    assert isinstance(ip.user_ns["rel"], ReleaseReport)
    # the headline prints a sensible number of digits (not 0.4900083541870117): at most 10 significant
    rel = ip.user_ns["rel"]
    printed = str(rel).splitlines()[0].rsplit(": ", 1)[1]
    digits = printed.lstrip("-0.").replace(".", "").split("e")[0]
    assert len(digits) <= 10, printed
    assert abs(float(printed) - rel.value) <= rel.release.lattice / 2  # to the precision of its lattice


def test_executor_option(ip):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        ip.user_ns["pool"] = pool
        ip.run_cell_magic(
            "smoothdp",
            "--executor pool -o mc --no-chart",
            'compute = "smoothed"\nmethod = "monte-carlo"\ntrials = 100\nrng = 2\nn = 40\n'
            "pi = [[0.4, 0.6], [0.6, 0.4]]\nepsilon = 0.5\nmechanism = {eta = 0.5}\n",
        )
    assert ip.user_ns["mc"].method == "monte-carlo"
    with pytest.raises(UsageError, match="no_such_pool"):
        ip.run_cell_magic("smoothdp", "--executor no_such_pool", NOISE)


def test_bad_key_is_usage_error_naming_key_and_line(ip):
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("smoothdp", "", 'compute = "noise"\nepsilon = 1\ngama = 0.1\n')
    msg = str(info.value)
    assert "gama" in msg and "line 3" in msg and "did you mean 'gamma'" in msg


def test_bad_key_through_run_cell_shows_no_traceback(ip, capsys):
    res = ip.run_cell('%%smoothdp\ncompute = "noise"\nepsilon = 1\ngamma = 0.1\ncolor = "red"\n')
    assert isinstance(res.error_in_exec, UsageError)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "color" in text and "Traceback" not in text


def test_line_form_without_spec_is_usage_error(ip):
    with pytest.raises(UsageError, match="needs a spec"):
        ip.run_line_magic("smoothdp", "-o x")


def test_display_and_table(ip, capsys):
    ip.run_cell_magic("smoothdp", "--no-chart --table", NOISE)
    out = capsys.readouterr().out
    assert "family" in out and "polyplace" in out


def test_docstring_is_a_reference():
    doc = SmoothDPMagics.smoothdp.__doc__
    for word in (
        "profile",
        "smoothed",
        "sweep",
        "release",
        "noise",
        "--output",
        "--no-chart",
        "--table",
        "--executor",
        "us-elections",
        "us-2020-districts",
        "%%smoothdp",
    ):
        assert word in doc, word


def test_package_level_load_ext(ip):
    import smoothdp_nb

    # `%load_ext smoothdp_nb` (the README's spelling) needs the package-level hook; a missing
    # hook must fail here, not skip.
    assert callable(getattr(smoothdp_nb, "load_ipython_extension", None))
    ip.run_line_magic("unload_ext", "smoothdp_nb.magics")
    assert "smoothdp" not in ip.magics_manager.magics["cell"]  # so that the load below is what registers
    ip.run_line_magic("load_ext", "smoothdp_nb")
    assert "smoothdp" in ip.magics_manager.magics["cell"]
    assert "smoothdp" in ip.magics_manager.magics["line"]
