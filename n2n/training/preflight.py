"""Checks a training run's inputs before any step runs, so that bad flags and
bad data fail in seconds with a one-line message, not hours later."""

import dataclasses
import os

from absl import logging
import tensorflow as tf

from n2n import config as config_lib
from n2n import errors
from n2n import hardware
from n2n import run_dir
from n2n.corruptions import catalog
from n2n.data import file_lists
from n2n.data import input_pipeline
from n2n.data import tfrecord
from n2n.diagnosis import report as diagnosis_report
from n2n.diagnosis import training_data
from n2n.evaluation import eval_data
from n2n.methods import registry as methods_registry
from n2n.model import unet
from n2n.training import distribute
from n2n.training import init_from


@dataclasses.dataclass(frozen=True)
class CheckedInputs:
  """What the checks resolved, for the training loop.

  Attributes:
    config: the run's config with the data's channels, pixel type and white
      level resolved (what config.json records).
    eval_images: list of (name, [H, W, C] uint8) clean images for synthetic
      noise; list of eval_data.EvalScene for --noise=none.
    noise_profile: (NoiseProfile, records read) of real captures' noise
      (--noise=none), or None.
    chosen_settings: {flag: value} of the method's settings the user left to
      the diagnosis (0 or auto) and the run chose for its noise
      (config.with_settings_for_noise).
    init_from_prefix: the checkpoint a new run starts its weights from
      (--init_from, checked against the run's network), or None.
  """
  config: object
  precision: str
  per_replica_batch: int
  train_files: list
  cache: bool
  eval_images: list
  noise_profile: tuple = None
  chosen_settings: dict = dataclasses.field(default_factory=dict)
  init_from_prefix: str = None


def _decide_cache(config, manifests):
  if config.data.cache != 'auto':
    return config.data.cache == 'true'
  megabytes = input_pipeline.decoded_megabytes(manifests)
  if megabytes is None:
    logging.info('No manifest.json beside the shards: not caching decoded images '
                 '(use --cache=true to force).')
    return False
  fits = megabytes <= config.data.cache_budget_mb
  logging.info('Decoded training images take %.0f MiB: %s (budget %d MiB).', megabytes,
               'caching them in memory' if fits else 'not caching', config.data.cache_budget_mb)
  return fits


def _check_crop_fits(config, manifests):
  frames = methods_registry.get(config.method.name).frames_per_crop_plane
  for manifest in manifests:
    deepest = manifest.get('depth', {}).get('max')
    if deepest is not None and deepest < config.data.crop_depth * frames:
      needs = f' ({frames} frames per plane: {config.data.crop_depth * frames})' if frames > 1 \
          else ''
      raise ValueError(f'--crop_depth={config.data.crop_depth}{needs} is deeper than every '
                       f'stack in --train_data (the deepest has {deepest} planes)')
    largest = manifest.get('shortest_side', {}).get('max')
    if largest is not None and largest < config.data.crop_size:
      raise ValueError(f'--crop_size={config.data.crop_size} is larger than every image in '
                       f'--train_data (the largest shortest side is {largest} px)')


def check_record_schema(path, scenes=False):
  """Parses the first record of one shard; ValueError naming the file otherwise."""
  try:
    for record in tf.data.TFRecordDataset(path).take(1):
      (tfrecord.parse_scene if scenes else tfrecord.parse_image)(record)
      return
  except tf.errors.DataLossError:
    raise ValueError(f'{path} is corrupt or not a TFRecord file') from None
  except tf.errors.InvalidArgumentError as error:
    reason = errors.first_line(error)
    raise ValueError(f'{path} does not hold n2n image records ({reason}); build shards with '
                     'datasets/make_tfrecords.py') from None
  raise ValueError(f'{path} holds no records')


def find_corrupt_shard(files):
  """Reads every shard through once; returns (path, reason) of the first corrupt one."""
  for path in files:
    try:
      for _ in tf.data.TFRecordDataset(path):
        pass
    except tf.errors.DataLossError as error:
      return path, errors.first_line(error)
  return None


def check_data_kind(config, manifests):
  """Checks that --noise and --target fit the kind of training data (clean
  images or scenes) and that the datasets agree on it; resolves nothing.

  Raises:
    ValueError: naming the flag and the data at fault.
  """
  kinds = {manifest.get('kind', 'images') for manifest in manifests} or {'images'}
  if len(kinds) > 1:
    raise ValueError(f'--train_data mixes datasets of kinds {", ".join(sorted(kinds))}; train '
                     'on one kind')
  if kinds == {'clean_stacks'}:
    _check_clean_stacks(config)
    return
  methods_registry.get(config.method.name).check_data_kinds(kinds)
  scenes = kinds <= {'scenes', 'noisy_images'}
  if config.corruption.noise == config_lib.NO_NOISE and not scenes:
    raise ValueError('--noise=none needs scenes of real noisy captures (datasets/'
                     'make_tfrecords.py --scenes), but --train_data holds clean images: with no '
                     'noise there is nothing to learn')
  if not scenes:
    return
  if config.corruption.noise != config_lib.NO_NOISE:
    raise ValueError(
        f'--noise={config.corruption.noise}: --train_data holds real noisy captures; train '
        'them with --noise=none')
  formats = {_scene_format(manifest) for manifest in manifests}
  if len(formats) > 1:
    raise ValueError('--train_data mixes scene datasets of different pixel types, channels or '
                     f'white levels: {sorted(formats)}')
  if config.method.target == 'clean':
    missing = [name for manifest in manifests
               for name in manifest.get('scenes_without_reference', [])]
    if missing:
      raise ValueError(f'--target=clean needs a reference.* in every scene; {len(missing)} have '
                       f'none: {", ".join(missing[:5])}' + (' ...' if len(missing) > 5 else ''))


def _check_clean_stacks(config):
  """Clean stacks (make_tfrecords.py --clean_stacks) train --method=pairs on
  synthetic noise drawn per voxel, without fixed captures or validation yet."""
  noise = config.corruption.noise
  if noise == config_lib.NO_NOISE:
    raise ValueError('--noise=none: --train_data holds clean stacks (make_tfrecords.py '
                     '--clean_stacks); give them a synthetic noise: --noise='
                     f'{"|".join(catalog.VOLUME_NAMES)}')
  if noise not in catalog.VOLUME_NAMES:
    raise ValueError(f'--noise={noise} is drawn on 2D images; clean stacks take --noise='
                     f'{"|".join(catalog.VOLUME_NAMES)}')
  _refuse_first([(not methods_registry.get(config.method.name).clean_stacks,
                  f'--method={config.method.name}'),
                 (bool(config.corruption.noise_captures),
                  f'--noise_captures={config.corruption.noise_captures}'),
                 (bool(config.data.val_data and config.evaluation.eval_every), '--val_data')],
                'does not work with clean stacks and synthetic noise yet; leave it out '
                '(docs/volumes.md)')


def _refuse_first(refused, reason):
  """ValueError('FLAG reason') for the first (applies, FLAG) of refused that applies."""
  for applies, flag in refused:
    if applies:
      raise ValueError(f'{flag} {reason}')


def _scene_format(manifest):
  return manifest['dtype'], manifest['channels'], manifest['white_level']


def data_format(manifests):
  """(channels, dtype name, white level, spatial dims) of checked training
  data: a scene dataset's from its manifest, 8-bit RGB images for clean images."""
  scenes = [manifest for manifest in manifests
            if manifest.get('kind') in ('scenes', 'noisy_images', 'clean_stacks')]
  if scenes:
    dtype, channels, white_level = _scene_format(scenes[0])
    return channels, dtype, white_level, scenes[0].get('spatial_dims', 2)
  return config_lib.CLEAN_IMAGE_CHANNELS, 'uint8', 255.0, 2


def check_spatial_dims(config, manifests):
  """Checks that the network's spatial dimensions fit the data and the run's
  other settings (config resolved with resolve_data).

  Raises:
    ValueError: naming the flag and the data at fault.
  """
  dims = {manifest.get('spatial_dims', 2) for manifest in manifests} or {2}
  if len(dims) > 1:
    raise ValueError('--train_data mixes datasets of images and of stacks; train on one kind')
  data_dims = dims.pop()
  model_dims = config_lib.model_spatial_dims(config)
  if model_dims != data_dims:
    held = 'TIFF stacks (volumes or movies)' if data_dims == 3 else 'images'
    planes = (' or write its planes as images with datasets/make_tfrecords.py --planes'
              if data_dims == 3 else '')
    raise ValueError(f'--spatial_dims={model_dims}: --train_data holds {held}; train it with '
                     f'--spatial_dims={data_dims} (or 0: as the data){planes}')
  method = methods_registry.get(config.method.name)
  if model_dims == 2:
    if not method.images:
      raise ValueError(f'--method={config.method.name} trains the 3D network on stacks, but '
                       '--train_data holds images')
    unet.check_xy_conv_levels(config.model.xy_conv_levels, model_dims)
    return
  if not method.volumes:
    ready = [name for name in methods_registry.NAMES if methods_registry.get(name).volumes]
    raise ValueError(f'--method={config.method.name} has no 3D form yet; volumes train with '
                     f'--method={" or ".join(ready)}')
  multiple = unet.depth_multiple(config.model.z_pools)
  factor = method.depth_factor(config)
  if config.data.crop_depth % (multiple * factor):
    halved = (f' times {factor}: --neighbor2neighbor_cells=xyz halves the depth'
              if factor > 1 else '')
    raise ValueError(f'--crop_depth={config.data.crop_depth} must be a multiple of '
                     f'{multiple * factor} (2**--z_pools, --z_pools={config.model.z_pools}'
                     f'{halved})')
  _refuse_first([(config.model.downsampling != 'max_pool',
                  f'--downsampling={config.model.downsampling}')],
                'does not work with --spatial_dims=3 yet; leave it out')


def check_training_inputs(config, strategy):
  """Validates flags against the hardware, the data and the model_dir.

  Returns:
    CheckedInputs.

  Raises:
    ValueError: with a one-line message naming the flag, file or value.
  """
  # Checks first: nothing below changes config or reads more than a manifest
  # and one record.
  per_replica_batch = distribute.check_global_batch(config.optimisation.batch_size, strategy)
  files = file_lists.record_files(config.data.train_data)
  manifests = input_pipeline.read_manifests(files)
  # Scene records: real captures, and clean stacks (which only come with a manifest).
  scenes = (config.corruption.noise == config_lib.NO_NOISE
            or any(manifest.get('kind') == 'clean_stacks' for manifest in manifests))
  if scenes and len(manifests) < len({os.path.dirname(path) for path in files}):
    what = ('--noise=none' if config.corruption.noise == config_lib.NO_NOISE
            else '--train_data of clean stacks')
    raise ValueError(f'{what}: every --train_data folder needs the manifest.json '
                     'datasets/make_tfrecords.py --scenes (or --clean_stacks) writes (it records '
                     'the pixel type)')
  check_data_kind(config, manifests)
  _check_crop_fits(config, manifests)
  check_record_schema(files[0], scenes)
  # Then what the run resolves from the hardware and the data.
  precision = hardware.resolve_precision(config.run.precision, strategy)
  config = config_lib.resolve_data(config.resolved(), *data_format(manifests))
  check_spatial_dims(config, manifests)
  config, noise_profile = _with_noise_correlation(config, files)
  config, chosen = _with_settings_for_noise(config, noise_profile)
  methods_registry.get(config.method.name).check_resolved(config)
  run_dir.check_compatible(config.run.model_dir, config)
  init_prefix = init_from.checked_source(config)
  eval_images = []
  if config.data.val_data and config.evaluation.eval_every:
    eval_images = eval_data.load_eval_data(config.data.val_data, config, config.corruption.noise,
                                           config.evaluation.max_eval_images)
  return CheckedInputs(config, precision, per_replica_batch, files,
                       _decide_cache(config, manifests), eval_images, noise_profile, chosen,
                       init_prefix)


def _with_settings_for_noise(config, noise_profile):
  """(config with the method's settings left to the diagnosis chosen, {flag:
  value} chosen): for pixel-independent synthetic noise or real captures as
  diagnosed; none for real captures the diagnosis could not read (the
  method's plain settings then apply, and nothing is recorded as chosen). A
  resumed run keeps what it trained with (a run from before the choice, its
  plain settings), whatever the diagnosis says now."""
  if noise_profile is None and config.corruption.noise == config_lib.NO_NOISE:
    return config, {}
  kind = diagnosis_report.kind_of(noise_profile[0]) if noise_profile else 'independent'
  config, chosen = config_lib.with_settings_for_noise(
      config, kind, noise_profile[0] if noise_profile else None)
  saved = run_dir.read_config(config.run.model_dir)
  if chosen and saved is not None:
    trained, _ = config_lib.with_settings_for_noise(config_lib.read_train_config(saved),
                                                    'independent')
    chosen = {flag: config_lib.flag_value(trained, flag) for flag in chosen}
    config = config_lib.replace_settings(config, **chosen)
  return config, chosen


def _with_noise_correlation(config, files):
  """config with data.noise_correlation: 0 for pixel-independent synthetic
  noise, the diagnosis of the first records for real captures (and that
  diagnosis, else None)."""
  if config.corruption.noise != config_lib.NO_NOISE:
    return config_lib.with_noise_correlation(
        config, config_lib.training_noise_correlation(config)), None
  profile, count = training_data.diagnose_records(files, config.data.dtype, config.data.channels,
                                                  config.data.white_level)
  if profile is None:
    return config, None
  return config_lib.with_noise_correlation(config, profile.correlation_lag1), (profile, count)
