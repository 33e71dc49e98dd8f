"""Tests of the spec layer (smoothdp_nb.spec) and the %%smoothdp magic that runs specs."""
