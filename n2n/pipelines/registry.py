"""The methods' pipelines by method name (the methods themselves:
n2n/methods/registry.py, which lists the same names)."""

from n2n.methods import registry as methods_registry
from n2n.pipelines import blind_spot
from n2n.pipelines import neighbor2neighbor
from n2n.pipelines import neighbouring_frames
from n2n.pipelines import pairs
from n2n.pipelines import recorrupted

_PIPELINES = {pipeline.method.name: pipeline
              for pipeline in (pairs.PIPELINE, neighbor2neighbor.PIPELINE, blind_spot.PIPELINE,
                               recorrupted.PIPELINE, neighbouring_frames.PIPELINE)}


def get(name):
  """The pipeline of the method called name; ValueError naming --method for an
  unknown one (methods_registry.get's)."""
  return _PIPELINES[methods_registry.get(name).name]
