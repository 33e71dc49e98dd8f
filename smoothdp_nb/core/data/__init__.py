"""The shipped election tables and their readers (:mod:`.datasets`), with provenance in SOURCES.md.

May import: pandas and :mod:`smoothdp_nb.core.numerics`.
"""
