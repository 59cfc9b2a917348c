"""n2n.train on numpy arrays: which argument holds the data and whether it fits
the run, the arrays written once into model_dir/arrays (train/ and val/,
through the dataset writers: n2n/data/training_arrays.py), and the config
that trains on them. A rerun with the same arrays reuses what was written;
other arrays for a run that has started are refused."""

import dataclasses
import os

from absl import logging
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.data import array_records
from n2n.data import training_arrays
from n2n.methods import registry as methods_registry
from n2n.training import distribute

# Below model_dir: where the arrays' records are written.
ARRAYS_DIR = 'arrays'


@dataclasses.dataclass(frozen=True)
class TrainingArrays:
  """n2n.train's data arguments (docs/python_api.md).

  Attributes:
    noisy: list of arrays, one noisy capture per scene; or None.
    captures: list of tuples of two or more captures per scene; or None.
    clean: list of clean arrays (the config's synthetic noise); or None.
    val: validation arrays of the same kind as the one given; or None.
    axes: the arrays' axes, as denoise.py's --axes ('': [H, W] or [H, W, C]).
    white_level: the value that maps to 1.0; 0: for integer arrays their
      brightest value rounded up to a whole number of bits
      (training_arrays.default_white_level: 16-bit data that use a few
      hundred levels then fill the network's range, as a white level of 65535
      would not), for float arrays 1.0.
  """
  noisy: object = None
  captures: object = None
  clean: object = None
  val: object = None
  axes: str = ''
  white_level: float = 0.0

  def given(self):
    """The names of the data arguments given (not None)."""
    return [name for name in training_arrays.ARGUMENTS if getattr(self, name) is not None]


def folders(model_dir):
  """(training, validation) record folders of a run's arrays."""
  return (os.path.join(model_dir, ARRAYS_DIR, 'train'),
          os.path.join(model_dir, ARRAYS_DIR, 'val'))


def with_array_data(config, arrays, strategy):
  """config training on arrays: the arrays checked against it, written into
  model_dir/arrays (or found there from an earlier call), and data.train_data,
  val_data, arrays and array_axes set to them. Without arrays, config as it is
  if it names training data.

  Raises:
    ValueError: one line naming the argument (and the array's index) at fault.
  """
  arrays = arrays or TrainingArrays()
  if not isinstance(arrays.axes, str):
    raise ValueError(f'axes={arrays.axes!r}: a string of the arrays\' axes, e.g. \'ZYX\' or '
                     "'YXC' ('' for [H, W] or [H, W, C] images)")
  arrays = dataclasses.replace(arrays, axes=arrays.axes.strip().upper())
  given = arrays.given()
  if len(given) > 1:
    raise ValueError(f'{"=, ".join(given)}= all give training data; pass one of them')
  if not given:
    if arrays.val is not None:
      raise ValueError('val= needs training arrays (noisy=, captures= or clean=)')
    if not config.data.train_data:
      raise ValueError(_no_data_message(config.run.model_dir))
    return config
  kind = given[0]
  train_folder, val_folder = folders(config.run.model_dir)
  _check_settings(config, kind, arrays, train_folder, val_folder, strategy)
  method = methods_registry.get(config.method.name)
  arrays = dataclasses.replace(arrays, white_level=arrays.white_level or (
      training_arrays.default_white_level(kind, getattr(arrays, kind))))
  shapes = dict(axes=arrays.axes, white_level=arrays.white_level,
                min_size=config.data.crop_size,
                min_depth=config.data.crop_depth * method.frames_per_crop_plane,
                network_dims=config.model.spatial_dims)
  data = training_arrays.check_arrays(kind, kind, getattr(arrays, kind), **shapes)
  val = None
  if arrays.val is not None:
    val = training_arrays.check_arrays('val', kind, arrays.val, **shapes)
    _check_val(kind, data, val, config)
  started = _run_started(config.run.model_dir)
  _write_once(data, train_folder, config, started)
  if val is not None:
    _write_once(val, val_folder, config, started)
  return dataclasses.replace(config, data=dataclasses.replace(
      config.data, train_data=train_folder, val_data=val_folder if val is not None else '',
      train_images_dir='', arrays=kind, array_axes=arrays.axes))


def _no_data_message(model_dir):
  saved = run_dir.read_config(model_dir) if model_dir else None
  trained_on = (saved or {}).get('data', {}).get('arrays', '')
  hint = (f'; {model_dir} was trained on {trained_on}= arrays: pass the same ones to resume'
          if trained_on else '')
  return ('n2n.train needs training data: noisy=, captures= or clean= arrays, or train_data= '
          f'in the config{hint}')


def _check_settings(config, kind, arrays, train_folder, val_folder, strategy):
  """Refuses arrays the run's settings cannot train on, before any is read."""
  if config.data.train_data and config.data.train_data != train_folder:
    raise ValueError(f'{kind}= and train_data={config.data.train_data!r} both give training '
                     'data; pass one (n2n.replace_settings(config, train_data=""))')
  if arrays.val is not None and config.data.val_data and config.data.val_data != val_folder:
    raise ValueError(f'val= and val_data={config.data.val_data!r} both give validation data; '
                     'pass one')
  if distribute.is_multi_worker(strategy):
    raise ValueError(f'{kind}=: arrays train in one process; a multi-worker run trains from '
                     'files (datasets/make_tfrecords.py, then train_data=)')
  noise = config.corruption.noise
  if kind == 'clean' and noise == config_lib.NO_NOISE:
    raise ValueError("clean= holds clean images: give the config a synthetic noise (noise="
                     "'gaussian', 'poisson', ...); with noise='none' there is nothing to learn")
  if kind != 'clean' and noise != config_lib.NO_NOISE:
    raise ValueError(f"{kind}= holds real noisy captures: train them with noise='none' (the "
                     f'config has noise={noise!r}; clean= takes clean images for it)')
  if kind == 'noisy':
    try:
      methods_registry.get(config.method.name).check_data_kinds({'noisy_images'})
    except ValueError:
      single = ' or '.join(repr(name) for name in methods_registry.SINGLE_IMAGE_NAMES)
      raise ValueError(f'noisy= gives one capture of each scene, which method='
                       f'{config.method.name!r} cannot train on: give captures=[(a1, a2), ...] '
                       f'of two or more per scene, or method={single}') from None


def _check_val(kind, data, val, config):
  """Refuses validation arrays unlike the training arrays, or that the run cannot score."""
  first, val_first = data.scenes[0], val.scenes[0]
  ours, theirs = first.captures[0], val_first.captures[0]
  if (ours.dtype, ours.shape[-1], data.spatial_dims) != (theirs.dtype, theirs.shape[-1],
                                                          val.spatial_dims):
    raise ValueError(f'{val_first.labels[0]} is {theirs.dtype} with {theirs.shape[-1]} '
                     f'channel(s) in {val.spatial_dims}D but {first.labels[0]} is {ours.dtype} '
                     f'with {ours.shape[-1]} in {data.spatial_dims}D; val= takes arrays like the '
                     'training arrays')
  if data.spatial_dims == 3 and kind != 'captures':
    raise ValueError(f'val= with {kind}= stacks: a 3D run is scored on scenes of two or more '
                     'captures of one stack only (captures=); leave val= out')
  if not config.evaluation.eval_every:
    logging.warning('val= given but eval_every=0: the run does not evaluate on it.')


def _run_started(model_dir):
  """True once a run has written its config.json or a checkpoint."""
  return (run_dir.read_config(model_dir) is not None
          or tf.train.latest_checkpoint(model_dir) is not None)


def _write_once(data, folder, config, started):
  """Writes data into folder unless the same arrays are there already.

  Raises:
    ValueError: folder holds other arrays (or none) and the run has started.
  """
  saved = array_records.read_fingerprint(folder)
  if saved is not None and saved['fingerprint'] == data.fingerprint:
    logging.info('%s= arrays already written to %s (fingerprint %s): reusing them.',
                 data.argument, folder, data.fingerprint[:12])
    return
  model_dir = config.run.model_dir
  if started and (saved is not None or data.argument != 'val'):
    if saved is not None:
      was = f'was trained on other arrays ({array_records.describe(saved)})'
    elif (run_dir.read_config(model_dir) or {}).get('data', {}).get('arrays'):
      was = f'was trained on arrays whose records are missing from {folder}'
    else:
      was = 'was trained from files, not arrays'
    raise ValueError(f'{data.argument}=: {model_dir} {was}; these give fingerprint '
                     f'{data.fingerprint[:12]}. Pass the same arrays, axes and white_level to '
                     'resume it, or give a new model_dir to train on these')
  logging.info('Writing %d scene(s) of %s= arrays to %s.', len(data.scenes), data.argument,
               folder)
  array_records.write_records(data, folder, seed=config.run.seed,
                              min_size=config.data.crop_size)
