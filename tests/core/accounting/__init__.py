"""Tests of the core's privacy accounting (smoothdp_nb.core.smoothed.accounting) and cross-checks with dp_accounting."""
