"""Tests of the tutorial notebooks, their runner and the Binder environment."""
