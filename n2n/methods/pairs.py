"""Noise2Noise pairs (Lehtinen et al., ICML 2018): the input and the target are
two independently corrupted copies of one image, or the clean image itself
(--target=clean, the Noise2Clean baseline).

The pairs come from whole pipelines: clean images corrupted afresh at every
step (n2n/data/input_pipeline.py), fixed synthetic captures
(n2n/data/fixed_captures.py), two real captures of a scene
(n2n/data/scene_pipeline.py), or two acquisitions of a stack or two
corruptions of a clean stack (n2n/data/volume_pipeline.py).
"""

from n2n.corruptions import catalog
from n2n.methods import base


class Pairs(base.Method):
  name = 'pairs'
  volumes = True
  clean_stacks = True

  def describe(self, config):
    return 'Noise2Noise (noisy targets)' if config.method.target == 'noisy' else 'Noise2Clean'

  def check(self, config):
    captures = config.corruption.noise_captures
    if config.corruption.noise == catalog.NO_NOISE:
      return
    if captures == 1 and config.method.target == 'noisy':
      raise ValueError('--noise_captures=1 leaves one capture of each image: --method=pairs with '
                       '--target=noisy needs 2 or more (or train it with '
                       '--method=neighbor2neighbor or --method=blind_spot)')
    if captures and catalog.get_spec(config.corruption.noise).name == 'bernoulli':
      raise ValueError(f'--noise_captures={captures} is not supported with --noise=bernoulli '
                       '(its loss needs each target\'s kept-pixel mask)')

  def check_data_kinds(self, kinds):
    if kinds == {'noisy_images'}:
      raise ValueError('--method=pairs needs two captures of each scene, but --train_data holds '
                       'single noisy images (datasets/make_tfrecords.py --noisy_images); train '
                       'them with --method=neighbor2neighbor or --method=blind_spot')

  def build_dataset(self, config, per_replica_batch, cache, start_step, input_context):
    # pylint: disable=g-import-not-at-top  (tensor code; see n2n/methods/base.py)
    from n2n.data import fixed_captures
    from n2n.data import input_pipeline
    from n2n.data import scene_pipeline
    from n2n.data import volume_pipeline
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


METHOD = Pairs()
