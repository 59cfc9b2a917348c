"""Neighbor2Neighbor (Huang et al., CVPR 2021): Noise2Noise on two
half-resolution sub-images of one noisy image.

In every 2x2 cell a random neighbour sub-sampler picks two different, adjacent
pixels, one for each sub-image (n2n/data/single_image_pairs.py); the network
maps the first sub-image to the second. The paper's regulariser compares that
difference with the same sub-sampling of the network's output on the whole
noisy image, computed without gradient, its weight ramped from 0 to gamma
(n2n/pipelines/neighbor2neighbor.py).
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


class Neighbor2Neighbor(single_image.SingleImageMethod):
  name = 'neighbor2neighbor'
  summary = ('from single noisy images: the network maps one neighbour sub-image of a '
             'capture to the other (each clean image corrupted once with a fixed per-image '
             'seed, or every capture of a scene dataset).')
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

  def check(self, config):
    super().check(config)
    if self.settings(config).cells == 'xyz' and config.model.spatial_dims == 2:
      raise ValueError('--neighbor2neighbor_cells=xyz samples 2x2x2 cells of stacks; '
                       'leave it out for --spatial_dims=2')

  def depth_factor(self, config):
    # 2x2x2 cells halve the depth: the half-depth sub-volumes must pass the z pools.
    return 2 if self.settings(config).cells == 'xyz' else 1


METHOD = Neighbor2Neighbor()
