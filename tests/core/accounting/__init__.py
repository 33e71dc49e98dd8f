"""Tests of the core's privacy accounting (smoothdp_nb.core.accounting) and cross-checks with dp_accounting."""
