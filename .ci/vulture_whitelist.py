"""Names that vulture (the dead-code check of .ci/lint) cannot see used: each is called by name
by a library, a protocol or a test runner, or is public data of a result.  Read by vulture only."""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# scipy.stats.rv_continuous calls a distribution's hooks by name (core/release/noise/*)
_._argcheck
_._pdf
_._sf
_._isf
_._stats
_._rvs
# python-flint's acb.integral passes the integrand an `analytic` flag (laplace_log_normal)
_.analytic
# module-level __getattr__ and __dir__ (PEP 562): the lazy loaders of smoothdp_nb and smoothdp_nb.spec
_.__getattr__
_.__dir__
# IPython's display protocol; traitlets observers are registered by their decorator (panels/base.py)
_._ipython_display_
_._remember_code_set
# an ipywidgets button style attribute, read by the front end
_.button_width
# a keyword of argparse's add_parser, spelled out by the Subparsers protocol (cli/command.py)
_.formatter_class
# public data of results, read by users (LogEnclosure.delta_upper, SmoothedRenyi.all_values)
_.delta_upper
_.all_values
# pytest hooks (tests/conftest.py); http.server and html.parser overrides in the tests
_.pytest_addoption
_.pytest_ignore_collect
# fixtures requested by name through pytest.mark.usefixtures (tests/conftest.py, test_remote_profiles.py)
_.unpadded_clock
_.small_chunks
_.log_message
_.handle_starttag
_.handle_endtag
_.handle_data
# classes defined only for the TypeError their definition raises (test_mechanism_protocol.py)
_.OldName
_.Template
_.log_profile_batch
# the keyword a fake threadpoolctl controller accepts as the real one does (test_parallel.py)
_.user_api
# a class defined only to check that defining it is refused (tests/core/mechanisms/test_mechanism_protocol.py)
_.Unstated
# IPython shows a CheckResult of the exercises as Markdown
_._repr_markdown_
