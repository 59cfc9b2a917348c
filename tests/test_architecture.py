"""Imports point one way: entry points -> training -> evaluation -> inference
(serving) -> data, model, corruptions. A module that imported upwards would
tie serving to training code, which an export or a denoising job never needs."""

import ast
import os

from tests.conftest import REPO_ROOT

# Packages of n2n, and the ones each may not import.
FORBIDDEN = {
    'inference': ('training', 'evaluation'),
    'evaluation': ('training',),
    'training': ('inference',),  # it reaches the network through evaluation
    'data': ('training', 'evaluation', 'inference', 'model'),
    'model': ('training', 'evaluation', 'inference', 'data'),
    'corruptions': ('training', 'evaluation', 'inference', 'data', 'model'),
}


def _n2n_imports(path):
  tree = ast.parse(open(path).read())
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith('n2n.'):
      yield node.module.split('.')[1]
    elif isinstance(node, ast.Import):
      for alias in node.names:
        if alias.name.startswith('n2n.'):
          yield alias.name.split('.')[1]


def test_packages_import_downwards_only():
  wrong = []
  for package, forbidden in FORBIDDEN.items():
    folder = os.path.join(REPO_ROOT, 'n2n', package)
    for name in sorted(os.listdir(folder)):
      if name.endswith('.py'):
        for imported in _n2n_imports(os.path.join(folder, name)):
          if imported in forbidden:
            wrong.append(f'n2n/{package}/{name} imports n2n.{imported}')
  assert not wrong, wrong
