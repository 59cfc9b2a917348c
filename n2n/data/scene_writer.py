"""Folders of scenes -> sharded TFRecords plus a manifest.

The library behind datasets/make_tfrecords.py --scenes. Every scene is read
and checked before the first record is written, so bad input stops the tool
with nothing written. A record holds a scene's captures (and its reference)
up to MAX_RECORD_BYTES: a protobuf message cannot pass 2 GiB, and a burst of
fifteen 24-MP 16-bit RGB captures would. Larger scenes are written as several
records of two or more captures each; any two captures of one scene make a
Noise2Noise pair, so training draws its pairs within a record and the format
(and every reader of it) stays as it was.
"""

import dataclasses
import math
import os

from absl import logging
import numpy as np
import tensorflow as tf

from n2n.data import dataset_writer
from n2n.data import scenes as scenes_lib
from n2n.data import tfrecord

# The most a scene record may hold. Protobuf refuses messages of 2 GiB; half of
# that leaves room for the encoding and keeps one record's parse cheap.
MAX_RECORD_BYTES = 1 << 30


@dataclasses.dataclass(frozen=True)
class CheckedScene:
  """What the first pass keeps of a scene: enough for the manifest, no pixels."""
  scene: scenes_lib.Scene
  dtype: str
  shape: tuple  # (captures, height, width, channels)
  has_reference: bool
  nbytes: int
  depth: int = 0  # planes of a volume (or frames of a movie); 0 for images
  brightest: float = 0.0  # the largest value of its captures


def check_scenes(found, read, skip_bad_scenes, max_record_bytes=MAX_RECORD_BYTES, planes=False):
  """Reads and checks every scene, one at a time, sizes included (with planes,
  the sizes of one plane of a stack: its records hold one plane each).

  Args:
    found: list of scenes.Scene (their captures' first entry names the scene
      in errors: a path, or a label such as 'noisy[3]').
    read: fn(scene) -> scenes.SceneArrays, checked (scenes.scene_arrays).

  Returns:
    (list of CheckedScene, list of {'scene', 'reason'} skipped).

  Raises:
    scenes.SceneError: a scene breaks the rules (or two of its captures and its
      reference would not fit in one record) and skip_bad_scenes is False.
    ValueError: no usable scene, or scenes of different dtypes or channels.
  """
  checked, skipped = [], []
  for scene in found:
    try:
      arrays = read(scene)
    except scenes_lib.SceneError as error:
      if not skip_bad_scenes:
        raise
      logging.warning('Skipping scene %s: %s', scene.name, error)
      skipped.append({'scene': scene.name, 'reason': str(error)})
      continue
    reference_bytes = arrays.reference.nbytes if arrays.reference is not None else 0
    # What one record must hold at least: two captures and the reference (of one plane).
    parts = arrays.captures.shape[1] if planes and arrays.captures.ndim == 5 else 1
    capture_bytes = arrays.captures[0].nbytes // parts
    least_record = 2 * capture_bytes + reference_bytes // parts
    if least_record > max_record_bytes:
      error = scenes_lib.SceneError(
          f'{scene.captures[0]} is {capture_bytes / 2**20:.0f} MiB'
          f'{" a plane" if parts > 1 else ""}: '
          f'two captures and the reference ({least_record / 2**20:.0f} MiB) pass the '
          f'{max_record_bytes / 2**20:.0f} MiB a record may hold; crop the captures into tiles')
      if not skip_bad_scenes:
        raise error
      logging.warning('Skipping scene %s: %s', scene.name, error)
      skipped.append({'scene': scene.name, 'reason': str(error)})
      continue
    shape = arrays.captures.shape
    checked.append(CheckedScene(scene, arrays.dtype, (shape[0],) + shape[-3:],
                                arrays.reference is not None,
                                arrays.captures.nbytes + reference_bytes,
                                shape[1] if len(shape) == 5 else 0, arrays.brightest))
  if not checked:
    raise ValueError('no usable scene')
  first = checked[0]
  for entry in checked[1:]:
    if bool(entry.depth) != bool(first.depth):
      kind = lambda item: 'a stack' if item.depth else 'an image'
      raise ValueError(f'{entry.scene.captures[0]} is {kind(entry)} but '
                       f'{first.scene.captures[0]} is {kind(first)}; a dataset holds images or '
                       'stacks, not both')
    if (entry.dtype, entry.shape[-1]) != (first.dtype, first.shape[-1]):
      raise ValueError(f'{entry.scene.captures[0]} is {entry.dtype} with {entry.shape[-1]} '
                       f'channel(s) but {first.scene.captures[0]} is {first.dtype} with '
                       f'{first.shape[-1]}; a dataset has one pixel type and channel count')
  return checked, skipped


def capture_groups(count, capture_bytes, reference_bytes, max_record_bytes=MAX_RECORD_BYTES):
  """How a scene's captures are split into records.

  Args:
    count: the scene's captures (two or more).
    capture_bytes, reference_bytes: one capture's size, the reference's (0: none).
    max_record_bytes: the most a record may hold; two captures and the
      reference must fit (check_scenes makes sure).

  Returns:
    list of lists of capture indices: every capture in at least one group,
    every group of two or more, as even as the budget allows.
  """
  if count == 1:
    return [[0]]  # a noisy-image dataset: one capture, trained on alone
  per_record = max(2, (max_record_bytes - reference_bytes) // max(capture_bytes, 1))
  records = math.ceil(count / per_record)
  groups = [list(part) for part in np.array_split(np.arange(count), records)]
  for index, group in enumerate(groups):
    if len(group) < 2:  # only when count is odd and per_record is 2: borrow a neighbour
      group.insert(0, groups[index - 1][-1])
  return [[int(capture) for capture in group] for group in groups]


def write_scene_dataset(input_dir, output_dir, white_level=0.0, num_shards=0, seed=0,
                        overwrite=False, skip_bad_scenes=False,
                        max_record_bytes=MAX_RECORD_BYTES, noisy_images=False, axes='',
                        clean_stacks=False, planes=False):
  """Converts every scene below input_dir into TFRecord shards.

  Args:
    input_dir: folder of scenes (see n2n/data/scenes.py).
    output_dir: folder for the shards and manifest.json.
    white_level: the value that maps to 1.0; 0: the data's dtype maximum
      (1.0 for float data). Values above it are an error.
    num_shards: 0 sizes shards at about 150 MB each.
    seed: shuffle seed of the scene order.
    overwrite: replace existing shards in output_dir.
    skip_bad_scenes: skip scenes that break the rules with one warning each
      instead of stopping.
    max_record_bytes: the most one record holds (larger scenes are split).
    noisy_images: every image file below input_dir is one noisy capture of a
      scene of its own, without reference (for the single-image methods); the
      manifest's kind is 'noisy_images'.
    axes: the axes of TIFF stacks that do not say them (--axes, e.g. 'ZYX').
      Captures that are stacks (volumes, or movies with time as depth) make a
      dataset of stacks: the manifest's spatial_dims is 3.
    clean_stacks: every TIFF stack below input_dir is one clean volume, for
      training on synthetic noise (as noisy_images, but the manifest's kind is
      'clean_stacks'); 2D images are refused (clean images are written by
      dataset_writer.write_dataset).
    planes: every stack is cut into its planes (a movie into its frames), each
      written as a 2D scene of its own named '<scene> z<index>' (the captures'
      plane z and the reference's): a dataset of images (spatial_dims 2) for
      the 2D network, from the same stacks. Images are refused, and so is
      clean_stacks.

  Returns:
    The manifest dict (also written to output_dir/manifest.json).

  Raises:
    ValueError: naming the file, folder or flag at fault.
  """
  if not tf.io.gfile.isdir(input_dir):
    raise ValueError(f'--input_dir={input_dir!r} is not a folder')
  if planes and clean_stacks:
    raise ValueError('--planes applies to --scenes and --noisy_images, not --clean_stacks')
  found = (scenes_lib.find_noisy_images(input_dir) if noisy_images or clean_stacks
           else scenes_lib.find_scenes(input_dir))
  kind = 'clean_stacks' if clean_stacks else 'noisy_images' if noisy_images else 'scenes'
  return write_scenes(found, lambda scene: scenes_lib.read_scene(scene, white_level, axes),
                      output_dir, kind, white_level, f'--input_dir={input_dir!r}', num_shards,
                      seed, overwrite, skip_bad_scenes, max_record_bytes, planes)


def write_scenes(found, read, output_dir, kind, white_level=0.0, where='', num_shards=0, seed=0,
                 overwrite=False, skip_bad_scenes=False, max_record_bytes=MAX_RECORD_BYTES,
                 planes=False):
  """Writes scenes, from files or a caller's arrays, as TFRecord shards.

  Args:
    found: list of scenes.Scene; read: fn(scene) -> scenes.SceneArrays
      (check_scenes). Each scene is read twice, one at a time: once to check
      it, once to write it.
    output_dir: folder for the shards and manifest.json.
    kind: the manifest's kind: 'scenes', 'noisy_images' (one capture each) or
      'clean_stacks' (one clean stack each).
    white_level: as write_scene_dataset's (0: the dtype's maximum).
    where: what errors about the whole set name first (the input folder).
    num_shards, seed, overwrite, skip_bad_scenes, max_record_bytes, planes:
      as write_scene_dataset's.

  Returns:
    The manifest dict (also written to output_dir/manifest.json).

  Raises:
    ValueError: naming the scene, file or flag at fault.
  """
  existing = dataset_writer.check_output(output_dir, overwrite)
  try:
    checked, skipped = check_scenes(found, read, skip_bad_scenes, max_record_bytes, planes)
  except ValueError as error:
    if isinstance(error, scenes_lib.SceneError):
      raise
    raise ValueError(f'{where}: {error}') from None
  first = checked[0]
  clean_stacks = kind == 'clean_stacks'
  if clean_stacks and not first.depth:
    raise ValueError(f'--clean_stacks: {first.scene.captures[0]} is an image, not a stack; '
                     'clean 2D images are written without --clean_stacks')
  if planes and not first.depth:
    raise ValueError(f'--planes: {first.scene.captures[0]} is an image, not a stack; leave '
                     '--planes out')
  # What the records hold: scenes, or with planes each plane of each stack.
  written = [plane for entry in checked for plane in plane_entries(entry)] if planes else checked
  resolved_white_level = white_level or scenes_lib.default_white_level(first.dtype)
  warn_if_dim(max(entry.brightest for entry in checked), resolved_white_level,
              bool(white_level), clean_stacks)
  total_bytes = sum(entry.nbytes for entry in checked)
  if num_shards <= 0:
    num_shards = math.ceil(total_bytes / dataset_writer.TARGET_SHARD_BYTES)
  num_shards = max(1, min(num_shards, len(written)))
  temporary = [os.path.join(output_dir, f'.incomplete-{index:05d}') for index in range(num_shards)]
  try:
    counts = _write_records(checked, read, temporary, seed, max_record_bytes, planes)
  except BaseException:
    # A scene that changed since the first pass, a full disk, Ctrl-C: no
    # .incomplete shard stays behind.
    for path in temporary:
      if tf.io.gfile.exists(path):
        tf.io.gfile.remove(path)
    raise
  shards = dataset_writer.commit_shards(output_dir, temporary, counts, existing)
  manifest = _manifest(written, skipped, shards, resolved_white_level, seed)
  manifest['num_records'] = sum(counts)
  if kind != 'scenes':
    manifest['kind'] = kind
    manifest['num_images'] = manifest['num_scenes']
  dataset_writer.write_manifest(output_dir, manifest)
  logging.info('Wrote %d %s (%d captures, %d references; %s, %d channel(s), white level '
               '%g) to %d shard(s) in %s; skipped %d.', len(written),
               {'scenes': 'scenes', 'noisy_images': 'noisy images',
                'clean_stacks': 'clean stacks'}[kind], manifest['num_captures'],
               manifest['num_references'], first.dtype, first.shape[-1], resolved_white_level,
               len(shards), output_dir, len(skipped))
  return manifest


# Below this fraction of the white level the data reach the network too dark to
# learn well. On the phantom at 5 and 10 photons (brightest counts 266 and 312,
# 44% and 52% of the white level 600), the 2D pairs network scored 26.13 and
# 30.86 dB (docs/results/volumes_z_context.json at 8dae7de); at white levels the
# counts fill to 89% (300, 350), 31.10 and 33.76 dB (the same file now).
DIM_FRACTION = 0.75


def dim_data_warning(brightest, white_level, white_level_given, clean):
  """One line on data whose brightest value is under DIM_FRACTION of the white
  level (what the network's 1.0 is), naming the value and the way out; None
  for data that fill at least that much of it. Clean stacks (clean=True) train
  on synthetic noise, which has no percentile normalisation: their only way
  out is the white level."""
  if brightest >= DIM_FRACTION * white_level:
    return None
  given = (f'--white_level={white_level:g}' if white_level_given
           else f'the default white level {white_level:g}')
  way_out = ('pass --white_level near it' if clean else
             'pass --white_level near it, or train with --normalization=percentile')
  return (f'the brightest value of the captures, {brightest:g}, is {brightest / white_level:.1%} '
          f'of {given}: the network sees the data dark and learns less from them; '
          f'{way_out}')


def warn_if_dim(brightest, white_level, white_level_given, clean):
  """Logs dim_data_warning's line, if any."""
  line = dim_data_warning(brightest, white_level, white_level_given, clean)
  if line:
    logging.warning('%s', line)


def plane_name(scene_name, plane):
  """The name of a stack's plane written as a 2D scene (write_scene_dataset's planes)."""
  return f'{scene_name} z{plane:04d}'


def plane_entries(entry):
  """CheckedScene of a stack -> one CheckedScene per plane, as a 2D scene of its own."""
  return [CheckedScene(dataclasses.replace(entry.scene, name=plane_name(entry.scene.name, plane)),
                       entry.dtype, entry.shape, entry.has_reference, entry.nbytes // entry.depth,
                       brightest=entry.brightest)
          for plane in range(entry.depth)]


def _scene_records(arrays, max_record_bytes, planes):
  """Serialized records of one scene: groups of its captures (with its reference)
  small enough for a record; with planes, those of each plane of the stack."""
  parts = [(arrays.name, arrays.captures, arrays.reference)]
  if planes:
    parts = [(plane_name(arrays.name, plane), arrays.captures[:, plane],
              None if arrays.reference is None else arrays.reference[plane])
             for plane in range(arrays.captures.shape[1])]
  for name, captures, reference in parts:
    reference_bytes = reference.nbytes if reference is not None else 0
    for group in capture_groups(len(captures), captures[0].nbytes, reference_bytes,
                                max_record_bytes):
      yield tfrecord.serialize_scene(captures[group], reference, name)


def _write_records(checked, read, temporary, seed, max_record_bytes, planes=False):
  """Second pass: reads each scene again (one in memory at a time) and deals its
  records round-robin into the temporary shards; returns the records per shard."""
  counts = [0] * len(temporary)
  writers = [tf.io.TFRecordWriter(path) for path in temporary]
  written = 0
  try:
    for index in np.random.default_rng(seed).permutation(len(checked)):
      arrays = read(checked[index].scene)
      for record in _scene_records(arrays, max_record_bytes, planes):
        shard = written % len(temporary)
        writers[shard].write(record)
        counts[shard] += 1
        written += 1
  finally:
    for writer in writers:
      writer.close()
  return counts


def _manifest(checked, skipped, shards, resolved_white_level, seed):
  stats = dataset_writer.summary_stats
  heights = [entry.shape[1] for entry in checked]
  widths = [entry.shape[2] for entry in checked]
  return {
      'kind': 'scenes',
      'num_scenes': len(checked),
      'captures_per_scene': stats([entry.shape[0] for entry in checked]),
      'num_captures': int(sum(entry.shape[0] for entry in checked)),
      'num_references': sum(entry.has_reference for entry in checked),
      'scenes_without_reference': [entry.scene.name for entry in checked
                                   if not entry.has_reference],
      'dtype': checked[0].dtype,
      'channels': int(checked[0].shape[-1]),
      'white_level': resolved_white_level,
      'shards': shards,
      'height': stats(heights),
      'width': stats(widths),
      'shortest_side': stats(np.minimum(heights, widths)),
      'decoded_bytes': int(sum(entry.nbytes for entry in checked)),
      'num_skipped': len(skipped),
      'skipped': skipped,
      'seed': seed,
      # 3: the captures are stacks (volumes, or movies with time as depth).
      'spatial_dims': 3 if checked[0].depth else 2,
      **({'depth': stats([entry.depth for entry in checked])} if checked[0].depth else {}),
  }
