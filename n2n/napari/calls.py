"""The front-door calls the widgets make, as functions of plain values: each
runs in a child process (running.py says why) and returns what pickles back.

No napari or Qt here: the child imports this module, n2n and TensorFlow only.
"""

import dataclasses

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


def denoise(path, tile_size, array, axes, tta, cancel, progress):
  """n2n.Denoiser.load(path, tile_size=...)(array, axes=..., tta=..., ...)."""
  denoiser = n2n.Denoiser.load(path, tile_size=tile_size)
  return denoiser(array, axes=axes, tta=tta, progress=progress, cancel=cancel)
