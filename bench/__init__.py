"""Measuring tools, run from the repository root: python bench/NAME.py (docs/performance.md).

A package so the tools and tests import them as bench.NAME.
"""
