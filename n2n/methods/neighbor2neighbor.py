"""Neighbor2Neighbor (Huang et al., CVPR 2021): Noise2Noise on two
half-resolution sub-images of one noisy image.

In every 2x2 cell a random neighbour sub-sampler picks two different, adjacent
pixels, one for each sub-image (n2n/data/single_image_pairs.py); the network
maps the first sub-image to the second. The paper's regulariser compares that
difference with the same sub-sampling of the network's output on the whole
noisy image, computed without gradient, its weight ramped from 0 to gamma.
"""

import dataclasses

from n2n.methods import single_image
from n2n.settings import setting


@dataclasses.dataclass(frozen=True)
class Settings(single_image.ShuffleSettings):
  """--neighbor2neighbor_* flags."""
  gamma: float = setting(
      2.0, "Neighbor2Neighbor's regulariser weight at the end of training, ramped linearly from "
      '0 (the official schedule reaches 2).', minimum=0.0)
  cells: str = setting(
      'xy', '3D only: the sub-sampler\'s cells. xy: 2x2 cells in every plane, all planes kept '
      '(a z neighbour on anisotropic stacks lies several xy pixels away); xyz: 2x2x2 cells, '
      'the two voxels adjacent along z, y or x, so the sub-volumes have half the planes and '
      '--crop_depth must be a multiple of 2 * 2**--z_pools (docs/volumes.md measures both).',
      choices=('xy', 'xyz'))


def regulariser_weight(gamma, step_fraction):
  """The regulariser's weight at a point of training, scalar float32: ramped
  linearly from 0 to gamma, as the official schedule (1 then 2 * epoch / epochs)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (see n2n/methods/base.py)
  return gamma * tf.clip_by_value(tf.cast(step_fraction, tf.float32), 0.0, 1.0)


def regulariser_term(prediction, target, full_prediction, positions, cells='xy'):
  """The paper's regulariser per example, [B] float32.

  || f(g1(y)) - g2(y) - (g1(f(y)) - g2(f(y))) ||^2, averaged over pixels and
  channels, where f(y) (full_prediction) carries no gradient.

  Args:
    prediction: f(g1(y)), [B, S/2, S/2, C] (volumes: [B, D, S/2, S/2, C]).
    target: g2(y), same shape.
    full_prediction: f(y), [B, S, S, C] ([B, D, S, S, C]); its gradient is
      stopped here.
    positions: the sampler's [B, S/2, S/2, 2] ([B, D, S/2, S/2, 2]) choice that
      made the pair ([B, D/2, S/2, S/2, 2] in 0..7 with cells='xyz').
    cells: the sampler's cells (single_image_pairs.subsample).
  """
  # pylint: disable=g-import-not-at-top  (see n2n/methods/base.py)
  import tensorflow as tf
  from n2n.data import single_image_pairs
  full_prediction = tf.stop_gradient(tf.cast(full_prediction, tf.float32))
  expected = (single_image_pairs.subsample(full_prediction, positions[..., 0], cells)
              - single_image_pairs.subsample(full_prediction, positions[..., 1], cells))
  return tf.reduce_mean(tf.square(prediction - target - expected),
                        axis=list(range(1, prediction.shape.rank)))


class Neighbor2Neighbor(single_image.SingleImageMethod):
  name = 'neighbor2neighbor'
  settings_class = Settings
  flag_prefix = 'neighbor2neighbor_'
  # Half-size sub-images must still pass the U-Net's five poolings.
  crop_multiple = 64
  crop_note = 'its half-size sub-images must pass the U-Net\'s five poolings'
  title = 'Neighbor2Neighbor (single noisy images)'
  citations = (('Huang et al. Neighbor2Neighbor: Self-Supervised Denoising from Single Noisy '
                'Images. CVPR 2021.', '10.48550/arXiv.2101.02824'),)

  # Pixel-shuffle before the neighbour sampler: its two pixels are then
  # `stride` apart in the image. 2/2 measured best on the camera simulator
  # (bench/correlated_schemes.py): 3/3 and inference at stride 1 gained less.
  correlated_strides = (2, 2)

  def elements(self, noisy, seed, config):
    from n2n.data import single_image_pairs  # pylint: disable=g-import-not-at-top
    return single_image_pairs.neighbor2neighbor_pair(noisy, seed, self.settings(config).cells)

  def check(self, config):
    super().check(config)
    if self.settings(config).cells == 'xyz' and config.model.spatial_dims == 2:
      raise ValueError('--neighbor2neighbor_cells=xyz samples 2x2x2 cells of stacks; '
                       'leave it out for --spatial_dims=2')

  def depth_factor(self, config):
    # 2x2x2 cells halve the depth: the half-depth sub-volumes must pass the z pools.
    return 2 if self.settings(config).cells == 'xyz' else 1

  def regulariser(self, config):
    gamma = self.settings(config).gamma
    cells = self.settings(config).cells

    def term(prediction, batch, predict_without_gradient, step_fraction):
      import tensorflow as tf  # pylint: disable=g-import-not-at-top
      # The whole noisy image through the network: the regulariser's f(y).
      full_prediction = predict_without_gradient(batch['full'])
      return regulariser_weight(gamma, step_fraction) * regulariser_term(
          tf.cast(prediction, tf.float32), batch['target'], full_prediction, batch['positions'],
          cells)

    return term

  def held_out_view_loss(self, denoise, noisy, seed, config=None):
    """The reconstruction term on the whole image: mean squared error of
    f(g1(y)) against g2(y) (the regulariser compares the network with itself,
    not with the data, and is left out). An odd last row or column is dropped."""
    # pylint: disable=g-import-not-at-top  (see n2n/methods/base.py)
    import numpy as np
    import tensorflow as tf
    from n2n.data import single_image_pairs
    even = single_image_pairs.even_crop(tf.constant(noisy[np.newaxis], tf.float32))
    positions = single_image_pairs.neighbour_positions(1, even.shape[1], even.shape[2], seed)
    first = single_image_pairs.subsample(even, positions[..., 0])[0].numpy()
    second = single_image_pairs.subsample(even, positions[..., 1])[0].numpy()
    return float(np.mean(np.square(denoise(first) - second)))


METHOD = Neighbor2Neighbor()
