"""The generators of docs/results.md: `python -m bench.results.grid` trains configs/cpu/
and writes the page (page.py renders it, svg_plot.py draws its curves); the volume
sections' tools (volumes*.py) write the JSON the page's "Volumes and movies" shows.
"""
