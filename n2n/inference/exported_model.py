"""Reading a folder written by export.py: what serving needs of an export.

The writer (n2n/exports/saved_model.py) and this reader share the names below,
so the format cannot drift. The export's signature serving_default:
  images   [N, H, W, C] float32, any H and W: in [0, 1] (1.0 at the run's
           white level); with --normalization=percentile, raw pixels in the
           image's own units
  -> denoised [N, H, W, C] float32 on the input's scale (not clipped)
A --normalization=percentile export also holds the signature `network`: the
same without the percentile map (values in, values out), which denoise.py uses
after mapping a whole image once, so its tiles share one map.

A BioImage Model Zoo package written by export.py --bioimageio holds that
folder, zipped, as its TensorFlow weights (PACKAGE_SAVED_MODEL): n2n reads the
package through it.
"""

import dataclasses
import os
import tempfile
import zipfile

import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.inference import frozen_weights
from n2n.inference import serving as serving_lib

SIGNATURE = 'serving_default'
NETWORK_SIGNATURE = 'network'
INPUT_NAME = 'images'
OUTPUT_NAME = 'denoised'


# The package's TensorFlow weights: the export folder, zipped (bioimageio_package writes it).
PACKAGE_SAVED_MODEL = 'tensorflow_saved_model.zip'


def is_export(path):
  """True when path is a folder written by export_model."""
  return tf.io.gfile.exists(os.path.join(path, 'saved_model.pb'))


def load_export(path):
  """(fn([N, H, W, C] float32) -> same, serving.Serving of the run) of an
  export, the Serving resolved once from the config.json it holds, with the
  channels its signature takes. The function takes and returns network values
  (its `network` signature where it has one): the caller applies the run's
  normalisation (the Serving's rule and white level)."""
  loaded = tf.saved_model.load(path)
  signature = loaded.signatures.get(NETWORK_SIGNATURE) or loaded.signatures[SIGNATURE]
  channels = signature.structured_input_signature[1][INPUT_NAME].shape[-1]
  saved = config_lib.read_train_config(run_dir.read_config(path))
  served = dataclasses.replace(serving_lib.of_run(saved), channels=channels)

  # Its weights as constants, as a checkpoint's network runs (frozen_weights.py says
  # why). The frozen function returns a list: the signature's one output, OUTPUT_NAME.
  frozen = frozen_weights.freeze(signature)

  def run_batch(images):
    return frozen(**{INPUT_NAME: tf.constant(images, tf.float32)})[0]

  return run_batch, served


def is_package(path):
  """True when path is a zip file (a BioImage Model Zoo package, n2n's or not)."""
  return os.path.isfile(path) and zipfile.is_zipfile(path)


def load_package(path, argument='model'):
  """load_export of the export folder inside a BioImage Model Zoo package that
  export.py --bioimageio wrote.

  Raises:
    ValueError: naming --argument, for a package without n2n's SavedModel (one
      written by another tool).
  """
  with zipfile.ZipFile(path) as package, tempfile.TemporaryDirectory() as folder:
    if PACKAGE_SAVED_MODEL not in package.namelist():
      raise ValueError(f'--{argument}: {path!r} is a zip without {PACKAGE_SAVED_MODEL}: n2n '
                       'reads the BioImage Model Zoo packages that export.py --bioimageio '
                       'writes, not those of other tools nor zipped folders')
    package.extract(PACKAGE_SAVED_MODEL, folder)
    export = os.path.join(folder, 'export')
    try:
      with zipfile.ZipFile(os.path.join(folder, PACKAGE_SAVED_MODEL)) as weights:
        weights.extractall(export)
    except zipfile.BadZipFile as error:
      raise ValueError(f'--{argument}: {path!r}: its {PACKAGE_SAVED_MODEL} is not a readable '
                       f'zip ({error})') from None
    if not tf.io.gfile.exists(os.path.join(export, run_dir.CONFIG_NAME)):
      raise ValueError(f'--{argument}: {path!r} holds a SavedModel without n2n\'s '
                       f'{run_dir.CONFIG_NAME}: not a package that export.py wrote')
    # load_export restores every weight into memory: the unzipped files can go.
    return load_export(export)
