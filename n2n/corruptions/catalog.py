"""What each corruption is called, how its level is measured, and its paper defaults.

Plain data, no TensorFlow: configuration and flag help read it without
loading TF; n2n/corruptions/noise.py attaches the functions that apply them.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class CorruptionSpec:
  """One corruption's parameters.

  Attributes:
    name: the --noise value.
    level_name: what a level means, for messages and summaries.
    bounds: (lowest, highest) valid level.
    default_range: default --noise_range for training.
    default_eval_levels: default --eval_noise_levels.
    default_loss: the paper's loss for this corruption.
    drops_pixels: the corruption returns a kept-pixel mask for a masked loss.
    pixel_independent: each pixel is corrupted independently of its
      neighbours (text is not: its glyphs cover neighbouring pixels together).
  """
  name: str
  level_name: str
  bounds: tuple
  default_range: tuple
  default_eval_levels: tuple
  default_loss: str
  drops_pixels: bool = False
  pixel_independent: bool = True


SPECS = {spec.name: spec for spec in (
    CorruptionSpec('gaussian', 'sigma (0-255 units)', (0.0, 255.0), (0.0, 50.0), (25.0,), 'l2'),
    CorruptionSpec('poisson', 'lambda (photons per unit intensity)', (0.0, 1e6), (0.0, 50.0),
                   (30.0,), 'l2'),
    CorruptionSpec('text', 'fraction of pixels covered by text', (0.0, 0.9), (0.0, 0.5), (0.25,),
                   'l1', pixel_independent=False),
    CorruptionSpec('impulse', 'fraction of pixels replaced', (0.0, 1.0), (0.0, 0.95), (0.5, 0.7),
                   'annealed_l0'),
    CorruptionSpec('bernoulli', 'fraction of pixels dropped', (0.0, 1.0), (0.0, 0.95), (0.5,),
                   'masked_l2', drops_pixels=True),
)}
NAMES = tuple(SPECS)
# The corruptions volumes take: those drawn on each voxel alone (text is drawn
# as glyphs on 2D images).
VOLUME_NAMES = tuple(name for name in NAMES if SPECS[name].pixel_independent)
# --noise=none: real noisy captures (scene datasets), no synthetic corruption.
NO_NOISE = 'none'


def get_spec(name):
  """The CorruptionSpec called name; ValueError naming the choices otherwise."""
  if name not in SPECS:
    raise ValueError(f'unknown corruption {name!r}; choose one of {", ".join(sorted(SPECS))}')
  return SPECS[name]
