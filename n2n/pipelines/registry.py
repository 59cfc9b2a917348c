"""The methods' pipelines by method name: each method's pipeline is the PIPELINE
of the module of this package named as the method (pairs.py for pairs), so
the methods' registry (n2n/methods/registry.py) is the one list of names."""

import importlib

from n2n.methods import registry as methods_registry

_PIPELINES = {method.name: importlib.import_module(f'{__package__}.{method.name}').PIPELINE
              for method in methods_registry.METHODS}


def get(name):
  """The pipeline of the method called name; ValueError naming --method for an
  unknown one (methods_registry.get's)."""
  return _PIPELINES[methods_registry.get(name).name]
