"""Folders of images -> shuffled, sharded TFRecords plus a JSON manifest.

The library behind datasets/make_tfrecords.py (and the demo's first-use
build). All file access goes through tf.io.gfile, so gs:// paths work.
"""

import concurrent.futures
import dataclasses
import fnmatch
import json
import math
import os
import time

from absl import logging
import numpy as np
import tensorflow as tf

from n2n.data import file_lists
from n2n.data import rgb_images
from n2n.data import tfrecord

TARGET_SHARD_BYTES = 150 * 2**20
SHARD_SUFFIX = tfrecord.SHARD_SUFFIX
# Files read and converted per batch of work: bounds the bytes held in memory.
_CHUNK = 64


def shard_name(index, count):
  """'train-00003-of-00010.tfrecord'."""
  return f'train-{index:05d}-of-{count:05d}{SHARD_SUFFIX}'


@dataclasses.dataclass(frozen=True)
class ImageSource:
  """One image to write: a file, or a caller's array.

  Attributes:
    name: kept in its record (a path below the input folder, or a label such
      as 'clean[2]').
    read: fn() -> [H, W, 3] uint8; raises UnusableImage, ImageDecodeError,
      OSError or tf.errors.OpError with the reason it cannot.
    size: fn() -> bytes it takes, for sizing shards (0 where unknown).
    shown: what messages call it (a file's path as found; '' : name).
  """
  name: str
  read: object
  size: object = lambda: 0
  shown: str = ''


class UnusableImage(Exception):
  """A source that gives no image; the message is the reason recorded."""


def file_source(path, input_dir):
  """ImageSource of an image file below input_dir, decoded to 8-bit RGB."""

  def read():
    with tf.io.gfile.GFile(path, 'rb') as image_file:
      data = image_file.read()
    if not data:
      raise UnusableImage('empty file')
    return rgb_images.decode_image(data)

  return ImageSource(os.path.relpath(path, input_dir), read, lambda: _file_size(path), path)


def _read_and_convert(source, min_size):
  """Reads one source; returns (png_bytes, height, width) or (None, reason)."""
  try:
    image = source.read()
  except (tf.errors.OpError, OSError) as error:
    return None, f'unreadable: {getattr(error, "message", error)}'
  except UnusableImage as error:
    return None, str(error)
  except rgb_images.ImageDecodeError as error:
    return None, f'not a readable image: {error}'
  height, width = image.shape[:2]
  if min(height, width) < min_size:
    return None, f'smaller than --min_size={min_size} ({width}x{height})'
  return (rgb_images.encode_png(image), height, width), None


def _file_size(path):
  """Size in bytes; 0 for files that cannot be stat'ed (they are skipped later)."""
  try:
    return tf.io.gfile.stat(path).length
  except (tf.errors.OpError, OSError):
    return 0


def summary_stats(values):
  """{'min', 'median', 'max'} of a list of numbers, for manifests."""
  return {'min': int(np.min(values)), 'median': float(np.median(values)),
          'max': int(np.max(values))}


def check_output(output_dir, overwrite):
  """Creates output_dir; returns the shards and manifest already there (ValueError
  unless overwrite)."""
  existing = (tf.io.gfile.glob(os.path.join(output_dir, '*' + SHARD_SUFFIX)) +
              tf.io.gfile.glob(os.path.join(output_dir, tfrecord.MANIFEST_NAME)))
  if existing and not overwrite:
    raise ValueError(f'--output_dir={output_dir!r} already holds shards; pass --overwrite to '
                     'replace them')
  tf.io.gfile.makedirs(output_dir)
  return existing


def commit_shards(output_dir, temporary, counts, existing):
  """Replaces the existing shards by the complete temporary ones, renamed
  train-NNNNN-of-MMMMM; empty ones are dropped. Returns the manifest's list."""
  for path in existing:
    tf.io.gfile.remove(path)
  used = [index for index, count in enumerate(counts) if count]
  shards = []
  for new_index, index in enumerate(used):
    final = shard_name(new_index, len(used))
    tf.io.gfile.rename(temporary[index], os.path.join(output_dir, final), overwrite=True)
    shards.append({'file': final, 'count': counts[index]})
  for index in set(range(len(counts))) - set(used):
    tf.io.gfile.remove(temporary[index])
  return shards


def write_manifest(output_dir, manifest):
  """Writes output_dir/manifest.json."""
  with tf.io.gfile.GFile(os.path.join(output_dir, tfrecord.MANIFEST_NAME), 'w') as out:
    json.dump(manifest, out, indent=2)


def write_dataset(input_dir, output_dir, num_shards=0, min_size=256, seed=0, overwrite=False,
                  num_workers=0):
  """Converts every readable image below input_dir into TFRecord shards.

  Images are converted to 8-bit RGB (see rgb_images.decode_image), shuffled with
  seed, and dealt round-robin into shards. Shards are written under temporary
  names and renamed when complete, so a crash never leaves a shard that looks
  finished.

  Args:
    input_dir: folder searched recursively.
    output_dir: folder for the shards and manifest.json.
    num_shards: 0 sizes shards at about 150 MB each.
    min_size: images whose shorter side is below this are skipped (counted).
    seed: shuffle seed.
    overwrite: replace existing shards in output_dir.
    num_workers: decoding threads (0: one per CPU core).

  Returns:
    The manifest dict (also written to output_dir/manifest.json).

  Raises:
    ValueError: bad folders, existing output, or no usable image.
  """
  if not tf.io.gfile.isdir(input_dir):
    raise ValueError(f'--input_dir={input_dir!r} is not a folder')
  paths = file_lists.files_below(input_dir)
  return write_images([file_source(path, input_dir) for path in paths], output_dir, num_shards,
                      min_size, seed, overwrite, num_workers,
                      lambda skipped: _no_usable_image(input_dir, paths, skipped))


def write_images(sources, output_dir, num_shards=0, min_size=256, seed=0, overwrite=False,
                 num_workers=0, no_usable_image=None):
  """Writes images, from files or a caller's arrays, as TFRecord shards
  (write_dataset's work once its files are found).

  Args:
    sources: list of ImageSource.
    no_usable_image: fn(skipped) -> the ValueError to raise when no source
      gives an image (skipped: list of {'file', 'reason'}).
    The others: as write_dataset's.

  Returns:
    The manifest dict (also written to output_dir/manifest.json).
  """
  sources = list(sources)
  existing = check_output(output_dir, overwrite)
  np.random.default_rng(seed).shuffle(sources)
  num_shards = _shard_count(sources, num_shards)
  temporary = [os.path.join(output_dir, f'.incomplete-{index:05d}') for index in range(num_shards)]
  started = time.perf_counter()
  try:
    written = _write_shards(sources, temporary, min_size, num_workers)
  except BaseException:
    _remove_existing(temporary)
    raise
  if not written.heights:
    _remove_existing(temporary)
    raise (no_usable_image(written.skipped) if no_usable_image
           else ValueError('no usable image'))
  shards = commit_shards(output_dir, temporary, written.counts, existing)
  manifest = _image_manifest(written, shards, min_size, seed)
  write_manifest(output_dir, manifest)
  small = sum(1 for entry in written.skipped if entry['reason'].startswith('smaller'))
  logging.info('Wrote %d images to %d shard(s) in %s; skipped %d (%d smaller than --min_size=%d) '
               'in %.1f s.', len(written.heights), len(shards), output_dir, len(written.skipped),
               small, min_size, time.perf_counter() - started)
  return manifest


def _shard_count(sources, num_shards):
  """num_shards, or (0) as many as make shards of about TARGET_SHARD_BYTES; at most one a
  source."""
  if num_shards <= 0:
    total_bytes = sum(source.size() for source in sources)
    num_shards = max(1, math.ceil(total_bytes / TARGET_SHARD_BYTES))
  return max(1, min(num_shards, len(sources)))


@dataclasses.dataclass
class _Written:
  """What _write_shards put into the temporary shards."""
  counts: list
  heights: list
  widths: list
  skipped: list  # {'file', 'reason'}


def _write_shards(sources, temporary, min_size, num_workers):
  """Decodes sources on a thread pool and deals the images round-robin into the
  temporary shards; returns _Written."""
  writers = [tf.io.TFRecordWriter(path) for path in temporary]
  written = _Written([0] * len(temporary), [], [], [])
  started = last_report = time.perf_counter()
  workers = num_workers or os.cpu_count() or 1
  try:
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
      for chunk_start in range(0, len(sources), _CHUNK):
        chunk = sources[chunk_start:chunk_start + _CHUNK]
        for source, (converted, reason) in zip(
            chunk, pool.map(lambda source: _read_and_convert(source, min_size), chunk)):
          if converted is None:
            logging.warning('Skipping %s: %s', source.shown or source.name, reason)
            written.skipped.append({'file': source.name, 'reason': reason})
            continue
          png, height, width = converted
          shard = len(written.heights) % len(temporary)
          writers[shard].write(tfrecord.serialize_image(png, height, width, source.name))
          written.counts[shard] += 1
          written.heights.append(height)
          written.widths.append(width)
        done = chunk_start + len(chunk)
        now = time.perf_counter()
        if now - last_report > 5 or done == len(sources):
          logging.info('%d/%d images, %.1f images/s', done, len(sources),
                       done / (now - started))
          last_report = now
  finally:
    for writer in writers:
      writer.close()
  return written


def _remove_existing(paths):
  for path in paths:
    if tf.io.gfile.exists(path):
      tf.io.gfile.remove(path)


def _no_usable_image(input_dir, paths, skipped):
  """The ValueError for a folder none of whose files gave an image, with the reasons counted."""
  reasons = {}
  for entry in skipped:
    key = entry['reason'].split(':')[0].split(' (')[0]
    reasons[key] = reasons.get(key, 0) + 1
  summary = ', '.join(f'{count} {reason}' for reason, count in sorted(reasons.items()))
  return ValueError(f'--input_dir={input_dir!r} has no usable image'
                    + (f' ({len(paths)} files: {summary})' if paths else ' (it is empty)'))


def _image_manifest(written, shards, min_size, seed):
  heights, widths = written.heights, written.widths
  return {
      'kind': 'images',
      'num_images': len(heights),
      'shards': shards,
      'height': summary_stats(heights),
      'width': summary_stats(widths),
      'shortest_side': summary_stats(np.minimum(heights, widths)),
      'decoded_bytes': int(np.sum(np.array(heights, np.int64) * np.array(widths, np.int64) * 3)),
      'num_skipped': len(written.skipped),
      'skipped': written.skipped,
      'min_size': min_size,
      'seed': seed,
  }


def build_if_missing(train_data, images_dir, min_size, seed=0, is_chief=True,
                     wait_seconds=3600.0, poll_seconds=2.0):
  """Builds TFRecords for --train_data from an image folder on first use.

  Used by the demo: when train_data names no record file and images_dir is
  given, the shards are written where train_data will find them: into
  train_data itself when it is a folder (a dataset folder, as
  datasets/make_tfrecords.py writes), else into the folder of a single glob
  such as DIR/train-*.tfrecord. Does nothing when records are already there.
  min_size should be the run's crop size: smaller images cannot give a crop,
  larger ones all can.

  On a cluster only the chief builds: every worker writing the same
  temporary shards would corrupt them. The others wait for the chief's
  manifest (written after the shards are complete).

  Raises:
    ValueError: a list of globs, a glob the built shards would not match (both
      before writing anything), or (not the chief) no dataset after wait_seconds.
  """
  if not images_dir:
    return
  if tf.io.gfile.exists(train_data) and not tf.io.gfile.isdir(train_data):
    return  # one record file, named outright
  output_dir, pattern = _build_target(train_data)
  if tf.io.gfile.glob(pattern):
    return
  if not is_chief:
    manifest = os.path.join(output_dir, tfrecord.MANIFEST_NAME)
    logging.info('Waiting for the chief to build TFRecords from %s into %s.', images_dir,
                 output_dir)
    deadline = time.monotonic() + wait_seconds
    while not (tf.io.gfile.exists(manifest) and tf.io.gfile.glob(pattern)):
      if time.monotonic() > deadline:
        raise ValueError(f'--train_data={train_data!r}: the chief built no dataset from '
                         f'--train_images_dir={images_dir!r} within {wait_seconds:g} s')
      time.sleep(poll_seconds)
    return
  logging.info('No record file in --train_data=%s; building TFRecords from %s into %s.',
               train_data, images_dir, output_dir)
  write_dataset(images_dir, output_dir, min_size=min_size, seed=seed)


_GLOB_CHARACTERS = frozenset('*?[')


def _build_target(train_data):
  """(folder to build into, glob of its shards) for a --train_data value.

  A value with no glob character that does not end in .tfrecord is a dataset
  folder, existing or not, as file_lists.record_files reads it. Anything else
  is a glob whose folder must be literal and whose name must match the names
  write_dataset gives its shards: otherwise the build would write shards that
  train_data then does not find.
  """
  if ',' in train_data:
    raise ValueError('--train_images_dir needs a single --train_data folder or glob, not a list')
  folder, name = os.path.split(train_data.rstrip('/'))
  if not _GLOB_CHARACTERS & set(train_data) and not name.endswith(SHARD_SUFFIX):
    return train_data, os.path.join(train_data, '*' + SHARD_SUFFIX)
  if _GLOB_CHARACTERS & set(folder):
    raise ValueError(f'--train_images_dir needs --train_data={train_data!r} to name a folder '
                     'to build into, not a glob of folders')
  if not fnmatch.fnmatchcase(shard_name(0, 1), name):
    raise ValueError(f'--train_images_dir needs --train_data={train_data!r} to match the shards '
                     'it builds, but the shards it builds are named '
                     f'train-NNNNN-of-NNNNN{SHARD_SUFFIX}: name their folder or '
                     f'{os.path.join(folder or ".", "train-*" + SHARD_SUFFIX)!r}')
  return folder or '.', train_data
