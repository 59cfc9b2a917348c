"""Denoising OME-Zarr volumes chunk by chunk: bounded memory, resumable, shardable.

Each output chunk is computed from its input region widened by a margin of
context on each side in z, y and x (clipped at the volume's faces), denoised
by the 3D network (tiled within the region as any volume is), cropped back to
the chunk and written. Memory holds one region and the network's activations,
whatever the volume's size.

After a chunk is written, a marker `.n2n/done/<chunk index>` holding the digest
of the settings it was denoised with is written inside the output: a killed
run leaves at most the chunks it was writing without a marker, and a rerun
denoises only the chunks without a marker of its own settings' digest. With a
shard K/N a worker takes the chunks whose place in the chunk grid's order is K
modulo N, so N workers (a job array) write disjoint chunks of one output.
A movie without z (axes like TYX, or TCZYX with one z plane) is denoised with
time as depth.

The output is created in a temporary folder beside it and renamed into place,
so shards that start together never see a half-created output: one rename
wins, the others open the winner's. `.n2n/settings.json` records what the
chunks were denoised with (model, precision, tiles, context, white level); a
resumed or sharded run with other settings is refused, since its chunks would
not match the ones already written. After `--overwrite` with new settings,
chunks whose marker holds the old digest count as not done, whichever shard
reruns them.

With --normalization=percentile a first pass reads the input chunk by chunk
and takes each volume's percentiles (per time point of a z-stack, or of the
whole movie with time as depth, over all its voxels and channels, as the
in-memory path does), one slab of time points at a time. 8- and 16-bit
integer volumes count every value, so their maps equal the in-memory ones
exactly; float volumes use every value up to MAX_PERCENTILE_SAMPLES, else a
random draw of that many (seeded: the same on every rerun and shard).

A chunk's faces see only the margin of context, and neighbouring chunks are not
blended: where the margin is less than the network's reach (its halo), voxels
at chunk faces differ slightly from denoising the whole volume at once.
"""

import dataclasses
import hashlib
import itertools
import json
import math
import os
import shutil
import tempfile

from absl import logging
import numpy as np

from n2n.data import normalization
from n2n.data import ome_zarr
from n2n.data import volumes
from n2n.inference import noisy_files

DONE_DIR = os.path.join('.n2n', 'done')
SETTINGS_FILE = os.path.join('.n2n', 'settings.json')
# The flag behind each recorded setting, for messages.
SETTING_FLAGS = {'model': '--model', 'precision': '--precision', 'tile': '--volume_tile',
                 'context': '--volume_overlap', 'white_level': '--white_level',
                 'normalization': "the run's --normalization"}
# The most values a float volume's percentiles are taken from (2**24: 64 MB of
# float32, and np.percentile's float64 copy 128 MB); a 1024 x 2048 x 2048 float
# volume is sampled at 1 value in 256. Integers of up to 16 bits are counted.
MAX_PERCENTILE_SAMPLES = 1 << 24


@dataclasses.dataclass
class ChunkedSummary:
  """What one OME-Zarr job did: chunks written now, found done, megavoxels written."""
  written: int = 0
  already_done: int = 0
  megavoxels: float = 0.0


def depth_axis(axes, where, shape):
  """The letter the network's depth runs along: Z, or T for a movie without z
  (or with a z of one plane, as OME-Zarr writers store TCZYX movies), as
  volumes.volumes_of reads TIFF stacks."""
  sizes = dict(zip(axes, shape))
  if 'T' in axes and sizes.get('Z', 1) == 1 and sizes['T'] > 1:
    return 'T'
  if 'Z' in axes:
    return 'Z'
  if 'T' in axes:
    return 'T'
  raise ome_zarr.OmeZarrError(f'{where}: axes {axes} have neither z nor t for a 3D network')


def chunk_indices(shape, chunks):
  """Every chunk's index in the grid, in C order: [(i0, i1, ...)]."""
  return list(itertools.product(*[range(math.ceil(size / chunk))
                                  for size, chunk in zip(shape, chunks)]))


def shard_chunks(indices, shard):
  """The chunks of a shard (sharding.Shard, or None for all): every count-th from its index."""
  if shard is None:
    return list(indices)
  return [index for place, index in enumerate(indices) if place % shard.count == shard.index]


def marker_path(output_path, index):
  """The file that says chunk `index` of the output is written."""
  return os.path.join(output_path, DONE_DIR, '.'.join(str(value) for value in index))


def chunk_region(index, chunks, shape, axes, spatial, margin):
  """(read slices, crop slices): the chunk widened by margin along the spatial
  axes (clipped to the array), and where the chunk lies within that region.

  Args:
    index: the chunk's grid index; chunks, shape: per axis.
    axes: the array's letters; spatial: the letters widened (depth, Y, X).
    margin: {letter: voxels of context each side}.
  """
  read, crop = [], []
  for position, letter, chunk, size in zip(index, axes, chunks, shape):
    start, stop = position * chunk, min((position + 1) * chunk, size)
    extra = margin[letter] if letter in spatial else 0
    low, high = max(0, start - extra), min(size, stop + extra)
    read.append(slice(low, high))
    crop.append(slice(start - low, stop - low))
  return tuple(read), tuple(crop)


def _time_axis(axes, depth_letter):
  """The index of the axis whose time points are volumes of their own, or None
  (no T, or a movie whose time is the depth)."""
  return axes.index('T') if 'T' in axes and depth_letter != 'T' else None


def denoise_region(region, axes, depth_letter, denoise, white_level, frame_maps=None):
  """A region [...] in `axes` order denoised volume by volume, channel by channel, same dtype.

  Args:
    denoise: fn([D, H, W, 1] float32) -> same (a one-channel 3D network).
    white_level: what maps to 1.0 (None: the dtype's range).
    frame_maps: None (the white level), or, with --normalization=percentile,
      one normalization.PixelMap per volume of the region (its time points;
      one for a movie with time as depth), from percentile_maps.
  """
  if depth_letter == 'T' and 'Z' in axes:
    # A movie stored with a z of one plane: time is the depth, the z axis set aside.
    plane_axis = axes.index('Z')
    return np.expand_dims(denoise_region(np.squeeze(region, plane_axis), axes.replace('Z', ''),
                                         depth_letter, denoise, white_level, frame_maps),
                          plane_axis)
  letters = axes.replace('T', 'Z') if depth_letter == 'T' else axes
  canonical = volumes.to_canonical(region, letters)
  output = np.empty_like(canonical)
  for frame in range(canonical.shape[0]):
    for channel in range(canonical.shape[4]):
      volume = canonical[frame, ..., channel:channel + 1]
      values, back = (noisy_files.values_by_white_level(volume, white_level)
                      if frame_maps is None else
                      noisy_files.values_by_map(volume, frame_maps[frame]))
      output[frame, ..., channel:channel + 1] = back(denoise(values))
  return volumes.from_canonical(output, letters)


class _VolumeValues:
  """One volume's values as read chunk by chunk: the count of every value for
  integers of up to 16 bits (exact percentiles in 512 KiB), else all values, or
  for volumes of more than stride-fold the budget a 1/stride random draw of
  each chunk (random, not every k-th: a regular stride aliases with
  periodic structure such as chunk widths), NaN and infinity left out."""

  def __init__(self, dtype, stride):
    dtype = np.dtype(dtype)
    self.exact = dtype.kind in 'iu' and dtype.itemsize <= 2
    self.lowest = int(np.iinfo(dtype).min) if self.exact else 0
    self.counts = np.zeros(1 << (8 * dtype.itemsize), np.int64) if self.exact else None
    self.stride, self.samples = stride, []
    self.draws = np.random.default_rng(0)  # the same samples on every rerun and shard

  def add(self, values):
    flat = values.reshape(-1)
    if self.exact:
      self.counts += np.bincount(flat.astype(np.int64) - self.lowest, minlength=self.counts.size)
      return
    # Copied, so that the chunk itself is freed.
    picked = (np.array(flat) if self.stride == 1 else
              flat[self.draws.integers(0, flat.size, math.ceil(flat.size / self.stride))])
    self.samples.append(picked[np.isfinite(picked)] if picked.dtype.kind == 'f' else picked)

  def pixel_map(self, rule):
    """normalization.PixelMap by rule's percentiles (numpy's 'linear' rule)."""
    if not self.exact:
      return normalization.percentile_map(np.concatenate(self.samples), rule)
    cumulative = np.cumsum(self.counts)
    last = cumulative[-1] - 1

    def at(percentile):
      position = last * percentile / 100.0
      below = math.floor(position)
      value = lambda rank: int(np.searchsorted(cumulative, rank, side='right')) + self.lowest
      return value(below) + (position - below) * (value(min(below + 1, last)) - value(below))

    return normalization.map_between(at(rule.low_percentile), at(rule.high_percentile))


def percentile_maps(array, axes, depth_letter, rule, max_samples=MAX_PERCENTILE_SAMPLES):
  """Each volume's normalization.PixelMap by rule's percentiles, read chunk by
  chunk, one slab of time points at a time (memory: one chunk, and each of the
  slab's volumes' counts or samples).

  Args:
    array: the image's zarr array (or any array with .shape, .chunks, .dtype and
      slicing) in `axes` order.
    depth_letter: depth_axis's letter; with 'T' the whole movie is one volume.
    rule: normalization.Rule with kind PERCENTILE.
    max_samples: the most values a float volume's percentiles are taken from
      (integer volumes of up to 16 bits count every value).

  Returns:
    list of PixelMap, one per time point (one where there is no T, or T is depth).
  """
  time_axis = _time_axis(axes, depth_letter)
  values_per_volume = math.prod(size for axis, size in enumerate(array.shape)
                                if axis != time_axis)
  stride = math.ceil(values_per_volume / max_samples)
  indices = chunk_indices(array.shape, array.chunks)
  slabs = [None] if time_axis is None else range(math.ceil(array.shape[time_axis] /
                                                           array.chunks[time_axis]))
  maps = []
  for slab in slabs:
    frames = 1 if slab is None else min(array.chunks[time_axis],
                                        array.shape[time_axis] - slab * array.chunks[time_axis])
    found = [_VolumeValues(array.dtype, stride) for _ in range(frames)]
    for index in indices:
      if slab is not None and index[time_axis] != slab:
        continue
      read, _ = chunk_region(index, array.chunks, array.shape, axes, (), {})
      block = np.asarray(array[read])
      for offset, volume_values in enumerate(found):
        volume_values.add(block if time_axis is None else np.take(block, offset, axis=time_axis))
    maps += [volume_values.pixel_map(rule) for volume_values in found]
  return maps


def _create_output(destination, image, settings):
  """Creates the output with its settings and marker folder in a temporary
  folder, then renames it into place. Returns False where another process
  created it first (the rename found a folder there)."""
  parent = os.path.dirname(os.path.abspath(destination))
  os.makedirs(parent, exist_ok=True)
  temporary = tempfile.mkdtemp(prefix='.' + os.path.basename(destination) + '.', dir=parent)
  try:
    staged = os.path.join(temporary, 'output.zarr')
    try:
      ome_zarr.create_like(staged, image)
    except Exception as error:  # pylint: disable=broad-except  (zarr's own types)
      raise ome_zarr.OmeZarrError(f'{destination}: cannot create ({error})') from None
    os.makedirs(os.path.join(staged, DONE_DIR))
    _write_settings(staged, settings)
    try:
      os.rename(staged, destination)
    except OSError:
      if not os.path.isdir(destination):
        raise
      return False
    return True
  finally:
    shutil.rmtree(temporary, ignore_errors=True)


def settings_digest(settings):
  """A short digest of the settings (JSON with sorted keys): what each marker holds."""
  return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def _write_settings(output_path, settings):
  """Writes settings.json atomically (shards, on any host, may write it at once)."""
  path = os.path.join(output_path, SETTINGS_FILE)
  handle, partial = tempfile.mkstemp(dir=os.path.dirname(path), prefix='.settings.')
  with os.fdopen(handle, 'w') as output:
    json.dump(settings, output, indent=1, sort_keys=True)
  os.replace(partial, path)


def _is_done(marker, digest):
  """True where the chunk's marker exists and holds this digest."""
  try:
    with open(marker) as handle:
      return handle.read().strip() == digest
  except OSError:
    return False


def _check_settings(destination, settings):
  """Raises OmeZarrError where the output's chunks were denoised with other settings."""
  path = os.path.join(destination, SETTINGS_FILE)
  try:
    with open(path) as handle:
      recorded = json.load(handle)
  except (OSError, ValueError):
    raise ome_zarr.OmeZarrError(
        f'{destination} exists but has no readable {SETTINGS_FILE} (not an n2n output, or '
        'one from an older n2n); pass --overwrite to replace it') from None
  changed = [f'{SETTING_FLAGS.get(key, key)} {recorded.get(key)} then, {value} now'
             for key, value in settings.items() if recorded.get(key) != value]
  if changed:
    raise ome_zarr.OmeZarrError(
        f'{destination} was begun with other settings ({"; ".join(changed)}): its chunks '
        'would not match; pass the same ones to resume it, or --overwrite (on every shard) '
        'to start afresh')


def open_output(destination, image, settings, overwrite, sharded):
  """The output array of an OME-Zarr job: created like the input, or, from an
  earlier (interrupted or sharded) run, opened after checking it matches.

  Args:
    settings: {name: JSON value} the chunks are denoised with (see denoise_ome_zarr).
    overwrite: start afresh. Alone, the old output is removed; with shards
      (sharded=True) other workers may be writing it, so it is kept and each
      shard re-denoises its own chunks under the new settings.
  """
  if overwrite and os.path.exists(destination) and not sharded:
    shutil.rmtree(destination)
  if not os.path.exists(destination):
    _create_output(destination, image, settings)
  existing = ome_zarr.open_image(destination, mode='r+')
  if (existing.axes, existing.array.shape, existing.array.chunks, existing.array.dtype) != (
      image.axes, image.array.shape, image.array.chunks, image.array.dtype):
    advice = ('remove it before starting the shards' if sharded else
              'pass --overwrite to replace it')
    raise ome_zarr.OmeZarrError(
        f'{destination} exists as {ome_zarr.describe(existing)}, not like its input '
        f'{ome_zarr.describe(image)}; {advice}')
  if overwrite:
    os.makedirs(os.path.join(destination, DONE_DIR), exist_ok=True)
    _write_settings(destination, settings)
  else:
    _check_settings(destination, settings)
  # Zarr keeps no array config on disk: a reopened output must be told again to
  # write chunks of fill values (see ome_zarr.create_image), or a resumed run's
  # all-zero chunk leaves no file.
  return existing.array.with_config({'write_empty_chunks': True})


def _recorded_settings(settings, margin, white_level, rule):
  """{name: JSON value} an output records and a resume checks: settings (None: none),
  the context margin, the white level (None for a percentile rule) and, for a percentile
  rule (normalization.Rule), its percentiles."""
  # Through JSON and back, so that what is compared is what the file holds (tuples
  # become lists).
  recorded = json.loads(json.dumps(dict(
      settings or {}, context=[int(value) for value in margin],
      white_level=None if white_level is None else float(white_level))))
  if rule.per_image:
    recorded['normalization'] = (f'percentile {rule.low_percentile:g} '
                                 f'{rule.high_percentile:g}')
  return recorded


def denoise_ome_zarr(source, destination, denoise, margin, serving, white_level_override=0.0,
                     shard=None, overwrite=False, settings=None):
  """Denoises an OME-Zarr image's full-resolution level into a new OME-Zarr.

  Args:
    source, destination: .zarr folders.
    denoise: fn([D, H, W, 1] float32) -> same, a one-channel 3D network.
    margin: (z, y, x) voxels of context read around each chunk.
    serving: serving.Serving of the network (its white level or percentile
      rule; serving.without_run(1) for a bare denoise function; a shipped model's
      refuses pixel types it does not take: ValueError, before any output).
    white_level_override: --white_level (0: the run's).
    shard: sharding.Shard or None.
    overwrite: start the output afresh instead of resuming it (with a shard:
      re-denoise this shard's chunks, see open_output).
    settings: {name: JSON value} that decide the chunks' voxels besides margin
      and white level (denoise.py: the model and the tiles); recorded in the
      output and checked on resume.

  Returns:
    ChunkedSummary.
  """
  real_source, real_destination = os.path.realpath(source), os.path.realpath(destination)
  if (real_source == real_destination or real_destination.startswith(real_source + os.sep) or
      real_source.startswith(real_destination + os.sep)):
    raise ome_zarr.OmeZarrError(f'{destination}: the output would overwrite its input {source}; '
                                'give another --output_dir')
  image = ome_zarr.open_image(source)
  # A shipped model refuses pixel types it was not trained for, before any output exists.
  serving.check_pixel_type(image.array.dtype.name, 1)
  depth_letter = depth_axis(image.axes, source, image.array.shape)
  spatial = (depth_letter, 'Y', 'X')
  margins = dict(zip(spatial, margin))
  rule = serving.rule
  white_level = (None if rule.per_image else
                 serving.white_level_for(image.array.dtype, white_level_override))
  recorded = _recorded_settings(settings, margin, white_level, rule)
  output = open_output(destination, image, recorded, overwrite,
                       sharded=shard is not None and shard.count > 1)
  summary = ChunkedSummary()
  planned = shard_chunks(chunk_indices(image.array.shape, image.array.chunks), shard)
  digest = settings_digest(recorded)
  if overwrite:
    # Only this shard's markers: the other shards' chunks are theirs to redo (their
    # markers hold the old digest, so they count as not done under the new settings).
    for index in planned:
      if os.path.exists(marker_path(destination, index)):
        os.remove(marker_path(destination, index))
  frame_maps = None  # each volume's percentile map, read only when a chunk is left to do
  if rule.per_image and not all(_is_done(marker_path(destination, index), digest)
                                for index in planned):
    frame_maps = percentile_maps(image.array, image.axes, depth_letter, rule)
  time_axis = _time_axis(image.axes, depth_letter)
  for place, index in enumerate(planned, 1):
    marker = marker_path(destination, index)
    if _is_done(marker, digest):
      summary.already_done += 1
      continue
    read, crop = chunk_region(index, image.array.chunks, image.array.shape, image.axes, spatial,
                              margins)
    region_maps = frame_maps
    if frame_maps is not None and time_axis is not None:
      region_maps = frame_maps[read[time_axis]]
    denoised = denoise_region(np.asarray(image.array[read]), image.axes, depth_letter, denoise,
                              white_level, region_maps)[crop]
    write = tuple(slice(region.start + inner.start, region.start + inner.stop)
                  for region, inner in zip(read, crop))
    output[write] = denoised
    with open(marker, 'w') as handle:
      handle.write(digest)
    summary.written += 1
    summary.megavoxels += denoised.size / 1e6
    logging.info('%s: chunk %s (%d of %d%s)', destination, index, place, len(planned),
                 f', shard {shard}' if shard else '')
  return summary
