"""The front-door calls the widgets make, as functions of plain values: each
runs in a child process (child.py says why) and returns what pickles back.

No napari or Qt here: the child imports this module, n2n and TensorFlow only.
"""

import dataclasses
import functools

import n2n


@dataclasses.dataclass(frozen=True)
class TrainedSteps:
  """What n2n.train returned, less the Keras model (which stays in the child).

  Attributes:
    step: the step the run stands at.
    stopped: True where the stop event ended it before train_steps.
  """
  step: int
  stopped: bool


def diagnose(images, captures, white_level, stop, progress):
  """n2n.diagnose of single noisy images, or of captures (tuples of two or more);
  stop and progress are not used (it takes seconds)."""
  del stop, progress
  if captures is not None:
    return n2n.diagnose(captures=captures, white_level=white_level)
  return n2n.diagnose(images, white_level)


def train(flags, data, val, axes, stop, progress):
  """n2n.train(n2n.train_config(**flags), **data, ...): data is {'noisy': [...]},
  {'captures': [(a1, a2, ...)]} or {'clean': [...]}."""
  config = n2n.train_config(**flags)
  result = n2n.train(config, **data, val=val, axes=axes, stop=stop, progress=progress,
                     progress_bar=False)
  return TrainedSteps(int(result.step), bool(result.stopped))


@dataclasses.dataclass(frozen=True)
class Denoised:
  """What a Denoise call returns.

  Attributes:
    pixels: the denoised array, the input's shape and dtype.
    model_loads: how many models this process has loaded: 1 while every call
      has gone through the model loaded for the first.
  """
  pixels: object
  model_loads: int


@functools.lru_cache(maxsize=1)
def _loaded(path, precision, tile_size):
  """The model the process keeps between Denoise calls (the Denoise widget
  keeps its child process while the model does not change): one at a time."""
  return n2n.Denoiser.load(path, precision=precision, tile_size=tile_size)


def denoise(path, precision, tile_size, array, axes, tta, cancel, progress):
  """n2n.Denoiser.load(path, precision=..., tile_size=...)(array, axes=..., tta=..., ...),
  loaded once per process for calls with the same path, precision and tile size."""
  denoiser = _loaded(path, precision, tile_size)
  pixels = denoiser(array, axes=axes, tta=tta, progress=progress, cancel=cancel)
  return Denoised(pixels, _loaded.cache_info().misses)


def export(model, output, onnx, bioimageio, overwrite, stop, progress):
  """n2n.export(model, output, onnx=..., bioimageio=..., overwrite=...): the paths written;
  stop and progress are not used (it takes seconds)."""
  del stop, progress
  return n2n.export(model, output, onnx=onnx, bioimageio=bioimageio, overwrite=overwrite)
