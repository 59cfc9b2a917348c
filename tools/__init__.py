"""The generator of docs/results.md, run from the repository root: python tools/results_grid.py.

A regular package so tools.NAME is this folder even where another installed
distribution ships a top-level tools/ folder (tf2onnx does).
"""
