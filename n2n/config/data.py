"""What a run trains and validates on, and how its pixels become network values."""

import dataclasses

from n2n.settings import check_settings
from n2n.settings import derived
from n2n.settings import section
from n2n.settings import setting

CACHE_MODES = ('auto', 'true', 'false')
# How raw pixels become network values (n2n/data/normalization.py).
NORMALIZATIONS = ('white_level', 'percentile')
# Clean-image datasets hold 8-bit RGB; scene datasets say in their manifest.
CLEAN_IMAGE_CHANNELS = 3


@dataclasses.dataclass(frozen=True)
class AugmentConfig:
  """Augmentations of the clean crop, applied before it is corrupted.

  They keep Noise2Noise valid because input and target are corrupted after
  the same augmented clean crop is drawn.
  """
  flips: bool = setting(True, 'Random horizontal and vertical flips.')
  rotations: bool = setting(True, 'Random 90-degree rotations.')
  channel_permutations: bool = setting(
      True, 'Random RGB channel permutations, the same for input and target (also for scenes '
      'of real captures): the model learns colours its training images lack. Turn off for '
      'sensors whose channels have different noise, which permutations would blur together.')


@dataclasses.dataclass(frozen=True)
class DataConfig:
  """What the run trains and validates on, and how pixels become network values."""
  train_data: str = setting(
      '', 'Training data: a dataset folder written by datasets/make_tfrecords.py, or TFRecord '
      'globs, comma-separated.', required=True)
  val_data: str = setting('', 'Validation images: a folder of images or a TFRecord glob. Empty: '
                          'no evaluation during training.')
  train_images_dir: str = setting(
      '', 'Optional image folder: when --train_data holds no records yet, TFRecords are first '
      'built from this folder into the folder --train_data names (or its glob\'s folder).')
  crop_size: int = setting(256, 'Square training crop in pixels (the U-Net pools five times).',
                           multiple_of=32)
  crop_depth: int = setting(16, '3D only: the training crop\'s depth in planes (a multiple of '
                            '2**--z_pools).', minimum=1)
  crops_per_image: int = setting(4, 'Random crops taken per decoded training image.', minimum=1)
  cache: str = setting('auto', 'Keep decoded training images in memory. auto: when the dataset '
                       'manifest says they fit in --cache_budget_mb.', choices=CACHE_MODES)
  cache_budget_mb: int = setting(2048, 'Memory budget for --cache=auto, MiB.', minimum=0)
  skip_corrupt_records: bool = setting(False, 'Skip unreadable training records with a warning '
                                       'instead of stopping with an error naming the shard.')
  normalization: str = setting(
      'white_level', 'How pixels become network values. white_level: divided by the white level '
      'of the data. percentile: each image maps its --percentile_low and --percentile_high '
      'percentiles to 0 and 1, and the output is mapped back to its own scale (for data that '
      'fill a small part of their range, e.g. 16-bit microscopy using a few hundred levels); '
      'real noisy captures (--noise=none) only. Denoising, validation and exports apply the '
      'same rule.', choices=NORMALIZATIONS)
  percentile_low: float = setting(1.0, '--normalization=percentile: the percentile mapped to 0 '
                                  "(CSBDeep's default).", minimum=0.0, maximum=100.0)
  percentile_high: float = setting(99.8, '--normalization=percentile: the percentile mapped to 1 '
                                   "(CSBDeep's default).", minimum=0.0, maximum=100.0)
  augment: AugmentConfig = section(AugmentConfig, 'augment_')
  # Resolved from the training data's manifest when the run starts (not flags):
  # the pixel type, the channels and the value that maps to 1.0, so
  # validate.py, denoise.py and export.py hand results back in the data's own units.
  dtype: str = derived('uint8')
  channels: int = derived(CLEAN_IMAGE_CHANNELS)
  white_level: float = derived(255.0)
  # 3 for datasets of TIFF stacks (the manifest's spatial_dims).
  spatial_dims: int = derived(2)
  # The training noise's correlation between neighbouring pixels (lag 1, the
  # larger of x and y): 0 for pixel-independent synthetic noise, the
  # diagnosis of real captures (n2n/diagnosis), -1 where not known (text, runs
  # from before it was recorded). denoise.py warns on files far from it.
  noise_correlation: float = derived(-1.0)
  # Set where n2n.train wrote the training data from numpy arrays into
  # model_dir/arrays: the argument they came as ('noisy', 'captures' or
  # 'clean') and their axes as given ('' for [H, W] or [H, W, C]); '' for files.
  arrays: str = derived('')
  array_axes: str = derived('')

  def __post_init__(self):
    check_settings(self)
    if self.normalization == 'percentile' and self.percentile_low >= self.percentile_high:
      raise ValueError(f'--percentile_low={self.percentile_low:g} must be below '
                       f'--percentile_high={self.percentile_high:g}')
