"""Neighbouring frames' pipeline (n2n/methods/neighbouring_frames.py): the even
frames of a crop of consecutive frames against the odd ones."""

from n2n.data import volume_pipeline
from n2n.methods import neighbouring_frames
from n2n.pipelines import base


class NeighbouringFramesPipeline(base.Pipeline):
  method = neighbouring_frames.METHOD

  def build_dataset(self, config, per_replica_batch, cache, start_step, input_context):
    return volume_pipeline.build_frames_dataset(config, per_replica_batch, cache, start_step,
                                                input_context)


PIPELINE = NeighbouringFramesPipeline()
