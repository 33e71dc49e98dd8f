"""The numerical core of smoothdp_nb.

Imports only numpy, scipy and pandas (never IPython, ipywidgets or Altair), so
it can be used from scripts, tests and other libraries.
"""
