"""The evidence package: measurements, the learning tests' recipes and the results page.

Run from the repository root as modules, with n2n installed (`pip install -e .`):
`python -m bench.throughput`, `python -m bench.results.grid` (bench/README.md). It
imports n2n as a user's code does, and nothing from tests/ (the tests import its recipes);
nothing in n2n, the programs or datasets/ imports it.
"""

import os

# The checkout this package lies in: its programs (train.py, denoise.py), datasets/demo,
# configs/ and docs/ are what the measurements run and write.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
