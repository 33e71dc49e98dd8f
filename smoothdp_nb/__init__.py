"""smoothdp_nb: smoothed differential privacy and smooth-sensitivity releases, for notebooks."""

__version__ = "0.1.0"
