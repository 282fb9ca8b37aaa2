"""Builders of the committed data sets under ``data/`` (run from the project root: ``python -m
tools.datasets.<name>``).

Outside the library: nothing under ``spcl/`` imports this package; the library reads only the
committed files.
"""
