"""Tests of the documentation's generators (docs/_ext)."""
