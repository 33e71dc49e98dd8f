"""Tests of the smoothed delta (smoothdp_nb.core.smoothed.delta): Algorithm 1, Monte Carlo, estimates."""
