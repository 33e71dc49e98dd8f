"""Tests of the command line: run, report, gallery, install."""
