"""n2n.Denoiser: a trained run or an export as a function on numpy arrays, for
notebooks and napari. Each array goes through denoise.py's own per-page code
(noisy_files.denoise_page): the same white level, channel, alpha and percentile
rules as a file of the same pixels.
"""

import dataclasses
import os

import numpy as np

from n2n import config as config_lib
from n2n import hardware
from n2n.inference import noisy_files
from n2n.inference import exported_model
from n2n.inference import loading

# Defaults of the settings Denoiser.load shares with denoise.py, declared once in DenoiseConfig.
_DEFAULTS = config_lib.DenoiseConfig()
# Channel counts an array may have: grayscale, RGB, RGB + alpha. A bare array says nothing
# about its channels, so 2 (grey + alpha in a file) is refused rather than guessed.
ARRAY_CHANNELS = (1, 3, 4)
# Pixel kinds: bool, unsigned and signed integers, floats.
_DTYPE_KINDS = 'buif'


def check_array(array):
  """array as a numpy array [H, W] or [H, W, 1, 3 or 4] of pixels.

  Raises:
    ValueError: another shape or a non-numeric dtype, naming it.
  """
  pixels = np.asarray(array)
  shape_ok = pixels.ndim == 2 or (pixels.ndim == 3 and pixels.shape[2] in ARRAY_CHANNELS)
  if not shape_ok or min(pixels.shape or (0,)) < 1:
    raise ValueError(f'cannot denoise an array of shape {pixels.shape}: expected [H, W] or '
                     '[H, W, C] with C 1, 3 or 4 (RGB + alpha); denoise other channels one '
                     '[H, W] slice at a time')
  if pixels.dtype.kind not in _DTYPE_KINDS:
    raise ValueError(f'cannot denoise an array of dtype {pixels.dtype} (shape {pixels.shape}): '
                     'expected integer, float or bool pixels')
  return pixels


class Denoiser:
  """A trained network as fn(array) -> denoised array of the same shape and dtype.

  Pixel units, as denoise.py reads files (docs/python_api.md):
    integers: 0 to the dtype's maximum, or 0 to the run's white level when the
      array's dtype is the training data's (e.g. 4095 for 12-bit data in uint16);
    floats: [0, 1], or the run's units when it trained on float files of that dtype;
    a --normalization=percentile run: any units, each array mapped by its own
      percentiles and mapped back.
  An RGB model denoises a grayscale array as three equal channels; a grayscale
  model each colour channel on its own; a fourth channel (alpha) is passed
  through untouched. NaN and inf in float arrays are kept where they are.
  """

  def __init__(self, network, settings):
    """Use Denoiser.load. network: loading.Network; settings: config.DenoiseConfig."""
    self._network = network
    self._settings = settings
    self._functions = {}

  @classmethod
  def load(cls, path, precision=_DEFAULTS.precision, tile_size=_DEFAULTS.tile_size,
           tile_overlap=_DEFAULTS.tile_overlap, batch_tiles=_DEFAULTS.batch_tiles):
    """Loads a run's model_dir (newest checkpoint), a checkpoint prefix
    (model_dir/ckpt-N) or a folder written by export.py.

    Args:
      precision, tile_size, tile_overlap, batch_tiles: as denoise.py's flags of
        those names (n2n/config.py DenoiseConfig). An export runs in float32.

    Raises:
      ValueError: a bad setting (naming it) or a path that holds no run or
        export (errors name it as --model, denoise.py's flag for it).
    """
    path = os.fspath(path)
    settings = dataclasses.replace(_DEFAULTS, model=path, precision=precision,
                                   tile_size=tile_size, tile_overlap=tile_overlap,
                                   batch_tiles=batch_tiles)
    if exported_model.is_export(path):
      network = loading.from_export(path)
    else:
      network = loading.from_checkpoint(path, hardware.resolve_precision(precision))
    return cls(network, settings)

  @property
  def channels(self):
    """The network's channels: 1 (grayscale) or 3 (RGB)."""
    return self._network.channels

  @property
  def run_config(self):
    """The run's TrainConfig (white level, data dtype, normalisation...)."""
    return self._network.run_config

  @property
  def source(self):
    """The checkpoint prefix or export that was loaded."""
    return self._network.source

  def __call__(self, array, tta=False, white_level=0.0):
    """Denoises one image.

    Args:
      array: [H, W] or [H, W, C] (C 1, 3, or 4 with alpha) of any size; bool,
        integer or float pixels in the units the class docstring gives.
      tta: average the outputs of the 8 flips and rotations (8 times the time).
      white_level: as denoise.py's --white_level: the value that maps to 1.0
        (0: the run's rule).

    Returns:
      The denoised array, of array's shape and dtype.

    Raises:
      ValueError: an array of another shape or dtype (naming it), or a
        white_level the run cannot use.
    """
    pixels = check_array(array)
    settings = dataclasses.replace(self._settings, white_level=white_level)
    noisy_files.check_white_level_override(self.run_config, settings.white_level)
    noisy_files.warn_above_white(f'the array of shape {pixels.shape}', [pixels], [None],
                               self.run_config, settings.white_level)
    return noisy_files.denoise_page(pixels, self._image_function(bool(tta)), self.channels,
                                  self.run_config, None, settings.white_level)

  def _image_function(self, tta):
    if tta not in self._functions:
      self._functions[tta] = loading.image_function(
          self._network, self._settings.tile_size, self._settings.tile_overlap,
          self._settings.batch_tiles, tta)
    return self._functions[tta]
