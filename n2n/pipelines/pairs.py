"""Noise2Noise pairs' pipelines (n2n/methods/pairs.py): clean images corrupted
afresh at every step, fixed synthetic captures, two real captures of a scene,
or two acquisitions (or corruptions) of a stack."""

from n2n.corruptions import catalog
from n2n.data import fixed_captures
from n2n.data import input_pipeline
from n2n.data import scene_pipeline
from n2n.data import volume_pipeline
from n2n.methods import pairs
from n2n.pipelines import base


class PairsPipeline(base.Pipeline):
  method = pairs.METHOD

  def build_dataset(self, config, per_replica_batch, cache, start_step, input_context):
    if config.model.spatial_dims == 3 and config.corruption.noise != catalog.NO_NOISE:
      build = volume_pipeline.build_synthetic_volume_dataset
    elif config.model.spatial_dims == 3:
      build = volume_pipeline.build_volume_dataset
    elif config.corruption.noise == catalog.NO_NOISE:
      build = scene_pipeline.build_scene_dataset
    elif config.corruption.noise_captures:
      build = fixed_captures.build_capture_pairs_dataset
    else:
      build = input_pipeline.build_train_dataset
    return build(config, per_replica_batch, cache, start_step, input_context)


PIPELINE = PairsPipeline()
