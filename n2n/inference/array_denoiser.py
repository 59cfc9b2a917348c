"""n2n.Denoiser: a trained run or an export as a function on numpy arrays, for
notebooks and napari. Each array goes through denoise.py's own per-page code
(noisy_files.denoise_page), or, for a 3D run, its per-stack code
(noisy_volumes.denoise_pixels): the same white level, channel, alpha and
percentile rules, tiles and volumes as a file of the same pixels.
"""

import dataclasses
import os

import numpy as np

from n2n import config as config_lib
from n2n import hardware
from n2n.data import volumes
from n2n.inference import exported_model
from n2n.inference import loading
from n2n.inference import noisy_files
from n2n.inference import noisy_volumes

# Defaults of the settings Denoiser.load shares with denoise.py, declared once in DenoiseConfig.
_DEFAULTS = config_lib.DenoiseConfig()
# Channel counts an array may have: grayscale, RGB, RGB + alpha. A bare array says nothing
# about its channels, so 2 (grey + alpha in a file) is refused rather than guessed.
ARRAY_CHANNELS = (1, 3, 4)
# Pixel kinds: bool, unsigned and signed integers, floats.
_DTYPE_KINDS = 'buif'


class DenoisingCancelled(Exception):
  """Denoising stopped between tiles because its cancel event was set."""


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
                     '[H, W] slice at a time, or give axes')
  return _check_dtype(pixels)


def _check_dtype(pixels):
  if pixels.dtype.kind not in _DTYPE_KINDS:
    raise ValueError(f'cannot denoise an array of dtype {pixels.dtype} (shape {pixels.shape}): '
                     'expected integer, float or bool pixels')
  return pixels


def check_stack(array, axes):
  """(array as numpy, [T, Z, Y, X, C] view of it) for an array laid out in axes.

  Raises:
    ValueError: axes that do not fit the array, or C other than 1, 3 or 4.
  """
  pixels = _check_dtype(np.asarray(array))
  where = f'the array of shape {pixels.shape}'
  volumes.check_axes(axes, pixels.ndim, where)
  canonical = volumes.to_canonical(pixels, axes)
  if min(pixels.shape or (0,)) < 1 or canonical.shape[-1] not in ARRAY_CHANNELS:
    raise ValueError(f'cannot denoise {where} (axes {axes!r}): expected 1, 3 or 4 (RGB + '
                     'alpha) channels and no empty axis')
  return pixels, canonical


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
  through untouched. NaN and inf in float 2D arrays are kept where they are.
  A 3D run denoises stacks given with their axes (denoiser(volume, axes='ZYX')),
  volume by volume in overlapping 3D tiles, as denoise.py denoises TIFF stacks.
  One call at a time per Denoiser; it may run in a worker thread.
  """

  def __init__(self, network, settings):
    """Use Denoiser.load. network: loading.Network; settings: config.DenoiseConfig."""
    self._network = network
    self._settings = settings
    self._functions = {}

  @classmethod
  def load(cls, path, precision=_DEFAULTS.precision, tile_size=_DEFAULTS.tile_size,
           tile_overlap=_DEFAULTS.tile_overlap, batch_tiles=_DEFAULTS.batch_tiles,
           volume_tile=_DEFAULTS.volume_tile, volume_overlap=_DEFAULTS.volume_overlap):
    """Loads a run's model_dir (newest checkpoint), a checkpoint prefix
    (model_dir/ckpt-N), a folder written by export.py (of a 2D or a 3D run) or
    the BioImage Model Zoo package (.zip) that export.py --bioimageio writes.

    Args:
      precision, tile_size, tile_overlap, batch_tiles, volume_tile,
        volume_overlap: as denoise.py's flags of those names
        (n2n/config/denoise.py DenoiseConfig; the last two for 3D runs). An
        export runs in float32.

    Raises:
      ValueError: a bad setting (naming it) or a path that holds no run or
        export (errors name it as --model, denoise.py's flag for it).
    """
    path = os.fspath(path)
    settings = dataclasses.replace(_DEFAULTS, model=path, precision=precision,
                                   tile_size=tile_size, tile_overlap=tile_overlap,
                                   batch_tiles=batch_tiles, volume_tile=volume_tile,
                                   volume_overlap=volume_overlap)
    if exported_model.is_export(path):
      network = loading.from_export(path)
    elif exported_model.is_package(path):
      network = loading.from_package(path)
    else:
      network = loading.from_checkpoint(path, hardware.resolve_precision(precision))
    return cls(network, settings)

  @property
  def channels(self):
    """The network's channels: 1 (grayscale) or 3 (RGB)."""
    return self._network.serving.channels

  @property
  def run_config(self):
    """The run's TrainConfig (white level, data dtype, normalisation...)."""
    return self._network.serving.run_config

  @property
  def source(self):
    """The checkpoint prefix or export that was loaded."""
    return self._network.source

  def __call__(self, array, tta=False, white_level=0.0, *, axes='', progress=None, cancel=None):
    """Denoises one image, or a stack laid out in axes.

    Args:
      array: [H, W] or [H, W, C] (C 1, 3, or 4 with alpha) of any size; bool,
        integer or float pixels in the units the class docstring gives. With
        axes, any layout they name.
      tta: average the outputs of the 8 flips and rotations (in y and x; 8
        times the time).
      white_level: as denoise.py's --white_level: the value that maps to 1.0
        (0: the run's rule).
      axes: the array's axes in its own order, as denoise.py's --axes (YX,
        YXC, CYX, ZYX, TYX, TZCYX...). A 3D run needs them (Z, or T for a
        movie whose time is the depth it sees) and denoises each volume in
        tiles as denoise.py does; a 2D run denoises each plane. '': [H, W] or
        [H, W, C] for a 2D run.
      progress: None, or fn(done, total) called after each batch of tiles
        through the network, in the calling thread (counts of tiles over all
        planes, channels and tta passes; done reaches total).
      cancel: None, or a threading.Event (anything with is_set()), checked
        before each batch of tiles: once set, DenoisingCancelled is raised.

    Returns:
      The denoised array, of array's shape and dtype.

    Raises:
      ValueError: an array of another shape or dtype, axes that do not fit it
        or the run (naming them), or a white_level the run cannot use.
      DenoisingCancelled: cancel was set.
    """
    if not isinstance(axes, str):
      raise ValueError(f'axes={axes!r}: a string of the array\'s axes, e.g. \'ZYX\' ('' for '
                       '[H, W] or [H, W, C] images)')
    settings = dataclasses.replace(self._settings, white_level=white_level, tta=bool(tta))
    serving = self._network.serving
    noisy_files.check_white_level_override(serving, settings.white_level)
    if not axes and not serving.is_volume:
      pixels = check_array(array)
      noisy_files.warn_above_white(f'the array of shape {pixels.shape}', [pixels], [None],
                                   serving, settings.white_level)
      denoise = self._function(settings, [pixels], progress, cancel)
      return noisy_files.denoise_page(pixels, denoise, serving, None, settings.white_level)
    axes = axes.strip().upper()
    if not axes:
      raise ValueError(f'{self.source} is a 3D run: give the array\'s axes, e.g. '
                       "denoiser(volume, axes='ZYX') (or 'TYX' for a movie)")
    pixels, canonical = check_stack(array, axes)
    if serving.is_volume:
      if canonical.shape[0] == canonical.shape[1] == 1:
        raise ValueError(f'axes {axes!r}: a 3D run denoises stacks; give axes with Z (or T, a '
                         "movie's time as depth), e.g. axes='ZYX'")
      units = volumes.volumes_of(canonical)
      denoise = self._function(settings, units, progress, cancel)
      denoised = noisy_volumes.denoise_pixels(canonical, denoise, serving, settings.white_level)
    else:
      planes = canonical.reshape((-1,) + canonical.shape[2:])
      noisy_files.warn_above_white(f'the array of shape {pixels.shape}', list(planes),
                                   [None] * len(planes), serving, settings.white_level)
      denoise = self._function(settings, planes, progress, cancel)
      denoised = np.stack([noisy_files.denoise_page(plane, denoise, serving, None,
                                                    settings.white_level)
                           for plane in planes]).reshape(canonical.shape)
    return volumes.from_canonical(denoised, axes)

  def _function(self, settings, units, progress, cancel):
    """loading.denoise_function of settings; with progress or cancel, its
    network counts the tiles of units (the pages or volumes to denoise)."""
    if progress is None and cancel is None:
      if settings.tta not in self._functions:
        self._functions[settings.tta] = loading.denoise_function(self._network, settings)
      return self._functions[settings.tta]
    total = sum(noisy_files.network_passes(_colour_channels(unit), self.channels)
                * loading.network_tiles(self._network, settings, unit.shape[:-1])
                for unit in (unit if unit.ndim > 2 else unit[..., np.newaxis] for unit in units))
    network = dataclasses.replace(self._network, run_batch=_counted(
        self._network.run_batch, total, progress, cancel))
    return loading.denoise_function(network, settings)


def _colour_channels(unit):
  """The colour channels of [..., C] pixels, C 1, 3 or 4 (RGB + alpha, alpha passed by)."""
  return min(unit.shape[-1], 3)


def _counted(run_batch, total, progress, cancel):
  """run_batch that checks cancel before each batch and reports progress after it."""
  done = 0

  def run(tiles):
    nonlocal done
    if cancel is not None and cancel.is_set():
      raise DenoisingCancelled(f'denoising cancelled after {done} of {total} tiles')
    output = run_batch(tiles)
    done += len(tiles)
    if progress is not None:
      progress(done, total)
    return output

  return run
