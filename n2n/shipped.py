"""The trained models n2n ships in its package, by name.

denoise.py --model=NAME, n2n.Denoiser.load(NAME), export.py --model=NAME and
validate.py --checkpoint=NAME take a name of MODELS where they take a run's
folder: each is a run folder (config.json and one checkpoint of the network's
weights) inside the package, n2n/shipped_models/NAME, written by the evidence
package's training scripts (bench/camera_model.py, ...), with a README naming what it
was trained on. A run or export of that name in the working folder comes first
(a folder of that name holding neither does not hide the shipped model).
Nothing is downloaded.
"""

import dataclasses
import os


@dataclasses.dataclass(frozen=True)
class ShippedModel:
  """What a shipped model is for, and the data it takes.

  Attributes:
    what: what it denoises, for denoise.py --help and the documentation.
    pixel_types: numpy dtype names of the images it takes; others are refused.
    channels: channel counts of the images it takes; others are refused.
    takes: the same in words, for the refusal's message.
    record: the file in its folder that records how it was trained (commit, host,
      precision, steps, time).
  """
  what: str
  pixel_types: tuple
  channels: tuple
  takes: str
  record: str


CAMERA_SRGB = 'camera_srgb'
CAMERA_SRGB_HIGH_ISO = 'camera_srgb_high_iso'
FLUORESCENCE = 'fluorescence'
# Name -> the model.
MODELS = {
    CAMERA_SRGB: ShippedModel(
        '8-bit sRGB photographs (JPEG, PNG) from digital cameras, with their correlated noise, '
        'as they are: no training. Trained on noise simulated through a camera\'s processing '
        '(bench/camera_model.py)', ('uint8',), (3,), '8-bit RGB (uint8, 3 channels)',
        'camera_model.json'),
    CAMERA_SRGB_HIGH_ISO: ShippedModel(
        'noisier 8-bit sRGB photographs (JPEG, PNG), as they are: no training. The same '
        'network, trained on cameras whose shot-noise variance reaches four times '
        'camera_srgb\'s; on real smartphone photographs ahead of camera_srgb on 22 of 24, '
        'behind on the 2 least noisy (bench/camera_model.py)', ('uint8',),
        (3,), '8-bit RGB (uint8, 3 channels)', 'camera_model.json'),
    FLUORESCENCE: ShippedModel(
        'one-channel fluorescence micrographs (widefield, confocal), 8- or 16-bit, as they '
        'are (offsets, 12-bit cameras, contrast-stretched exports; stacks plane by plane): no '
        'training. Trained on simulated Poisson-Gaussian camera noise over simulated '
        'filaments, puncta, membranes and nuclei (bench/fluorescence_model.py)',
        ('uint8', 'uint16'), (1,), 'one-channel 8- or 16-bit (uint8 or uint16, 1 channel)',
        'fluorescence_model.json'),
}
FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'shipped_models')


def folder(name):
  """The package folder of the shipped model `name` (a key of MODELS)."""
  return os.path.join(FOLDER, name)


# What a shipped model's config.json holds as its model_dir: this prefix and its name
# (bench/shipping.py writes it; its exports keep it). A run a user trains keeps the
# model_dir it was given, so a run of theirs named like a shipped model is not taken for it.
RUN_NAME_PREFIX = 'shipped:'


def run_name(name):
  """'shipped:camera_srgb': the model_dir the shipped model `name`'s config.json holds."""
  return RUN_NAME_PREFIX + name


def of_run(model_dir):
  """(name, ShippedModel) of a run whose config.json model_dir names a shipped model
  (run_name), else None."""
  name = model_dir[len(RUN_NAME_PREFIX):] if model_dir.startswith(RUN_NAME_PREFIX) else None
  return (name, MODELS[name]) if name in MODELS else None


def refusal(name, model, pixel_type, channels):
  """The one-line reason the shipped model `name` (ShippedModel) refuses images of
  pixel_type (a numpy dtype name) with `channels` channels, or None where it takes them."""
  if pixel_type in model.pixel_types and channels in model.channels:
    return None
  return (f'the model {name} denoises {model.takes} images, not {pixel_type} with {channels} '
          'channel(s): train one on such images (diagnose.py says how) or choose another '
          'model')


def resolve(path):
  """The run folder `path` names: the shipped model's folder where path is a name of
  MODELS and nothing of that name here is a run (a 'checkpoint' file in it), a
  checkpoint prefix or an export (saved_model.pb), else path unchanged."""
  if path not in MODELS:
    return path
  local_model = (os.path.isfile(os.path.join(path, 'checkpoint')) or
                 os.path.isfile(path + '.index') or
                 os.path.isfile(os.path.join(path, 'saved_model.pb')))
  return path if local_model else folder(path)


def help_text():
  """'camera_srgb (8-bit sRGB photographs ...)' for every shipped model, joined by '; '."""
  return '; '.join(f'{name} ({model.what})' for name, model in MODELS.items())
