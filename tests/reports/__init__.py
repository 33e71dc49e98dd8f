"""Tests of the HTML reports of the tutorials (smoothdp_nb.reports)."""
