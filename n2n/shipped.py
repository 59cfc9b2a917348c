"""The trained models n2n ships in its package, by name.

denoise.py --model=NAME, n2n.Denoiser.load(NAME), export.py --model=NAME and
validate.py --checkpoint=NAME take a name of MODELS where they take a run's
folder: each is a run folder (config.json and one checkpoint of the network's
weights) inside the package, n2n/shipped_models/NAME, written by the evidence
package's training script (bench/camera_model.py), with a README naming what it
was trained on. A run or export of that name in the working folder comes first
(a folder of that name holding neither does not hide the shipped model).
Nothing is downloaded.
"""

import json
import os

CAMERA_SRGB = 'camera_srgb'
# Name -> what it denoises, for denoise.py --help and the documentation.
MODELS = {
    CAMERA_SRGB: ('8-bit sRGB photographs (JPEG, PNG) from digital cameras, with their '
                  'correlated noise, as they are: no training. Trained on noise simulated '
                  'through a camera\'s processing (bench/camera_model.py)'),
}
FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'shipped_models')


def folder(name):
  """The package folder of the shipped model `name` (a key of MODELS)."""
  return os.path.join(FOLDER, name)


def pixel_type(name):
  """The pixel type (numpy's name, e.g. 'uint8') the shipped model `name` was trained on,
  from its config.json: other data is refused where a user picks it from a list (napari)."""
  with open(os.path.join(folder(name), 'config.json')) as config_file:
    return json.load(config_file)['data']['dtype']


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
  return '; '.join(f'{name} ({what})' for name, what in MODELS.items())
