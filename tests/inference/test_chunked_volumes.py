"""OME-Zarr volumes denoised chunk by chunk: the same voxels as the whole volume where the
context suffices, a killed run resumed without rewriting chunks, shards that split chunks."""

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import volumes as volume_helpers
from n2n import config as config_lib
from n2n.data import normalization
from n2n.data import ome_zarr
from n2n.data import phantom
from n2n.inference import chunked_volumes
from n2n.inference import serving
from n2n.inference import sharding
from n2n import shipped
from tests.conftest import REPO_ROOT

# The Serving of the one-channel stand-in networks: no run, so pixels map at
# their dtype's range unless white_level_override says otherwise.
BARE = serving.without_run(1)


def _local_network(radius):
  """fn([D, H, W, 1] float32) -> same whose every output voxel depends on input voxels
  within `radius` (zero padding: as the U-Net, it sees only what it is given)."""
  rng = np.random.default_rng(3)
  kernels = [rng.normal(0, 0.2, (3, 3, 3, 1, 1)).astype(np.float32) for _ in range(radius)]

  def denoise(volume):
    values = tf.constant(volume[np.newaxis])
    for kernel in kernels:
      values = tf.nn.relu(tf.nn.conv3d(values, kernel, [1] * 5, 'SAME')) * 0.5 + values
    return values.numpy()[0]

  return denoise


def _write_zarr(path, array, axes, chunks, version='0.4'):
  output = ome_zarr.create_image(str(path), array.shape, chunks, array.dtype.name, axes,
                                 [0.4 if letter == 'Z' else 0.1 for letter in axes],
                                 {'Z': 'micrometer'}, version)
  output[...] = array
  return output


def _whole(array, denoise, white_level):
  """The reference: the whole volume at once, scaled and rounded as denoise.py scales
  16-bit data by a white level."""
  values = array.astype(np.float32)[..., np.newaxis] / white_level
  return np.round(np.clip(denoise(values)[..., 0], 0, 1) * white_level).astype(array.dtype)


@pytest.mark.parametrize('version', ['0.4', '0.5'])
def test_chunked_denoise_equals_the_whole_volume_where_the_margin_covers_the_context(
    tmp_path, version):
  volume = np.random.default_rng(0).integers(100, 500, (20, 50, 45)).astype(np.uint16)
  source = tmp_path / 'in.zarr'
  _write_zarr(source, volume, 'ZYX', (8, 16, 16), version)
  denoise = _local_network(radius=2)
  summary = chunked_volumes.denoise_ome_zarr(str(source), str(tmp_path / 'out.zarr'), denoise,
                                             (2, 2, 2), BARE, white_level_override=600.0)
  assert (summary.written, summary.already_done) == (3 * 4 * 3, 0)
  output = ome_zarr.open_image(str(tmp_path / 'out.zarr'))
  assert ome_zarr.to_json(output) == ome_zarr.to_json(ome_zarr.open_image(str(source)))
  np.testing.assert_array_equal(output.array[...], _whole(volume, denoise, 600.0))
  # One voxel less context than the network reaches: chunk faces differ from the whole.
  chunked_volumes.denoise_ome_zarr(str(source), str(tmp_path / 'short.zarr'), denoise,
                                   (1, 1, 1), BARE, white_level_override=600.0)
  assert not np.array_equal(ome_zarr.open_image(str(tmp_path / 'short.zarr')).array[...],
                            _whole(volume, denoise, 600.0))


def test_a_shipped_model_refuses_an_ome_zarr_of_a_pixel_type_it_does_not_take(tmp_path):
  # Served as a shipped model that takes 8- and 16-bit counts, as every other front door
  # serves it (Serving.check_pixels): a float32 OME-Zarr is refused in one line naming the
  # model, before any output is made; a uint16 one is denoised.
  model = shipped.MODELS['fluorescence']
  served = dataclasses.replace(BARE, shipped_model=('fluorescence', model))
  volume = np.random.default_rng(1).integers(100, 500, (8, 32, 32))
  floats, counts = tmp_path / 'floats.zarr', tmp_path / 'counts.zarr'
  _write_zarr(floats, (volume / 500).astype(np.float32), 'ZYX', (8, 32, 32))
  _write_zarr(counts, volume.astype(np.uint16), 'ZYX', (8, 32, 32))
  with pytest.raises(ValueError, match='the model fluorescence denoises .* not float32'):
    chunked_volumes.denoise_ome_zarr(str(floats), str(tmp_path / 'floats_out.zarr'),
                                     _local_network(1), (1, 1, 1), served)
  assert not (tmp_path / 'floats_out.zarr').exists()
  summary = chunked_volumes.denoise_ome_zarr(str(counts), str(tmp_path / 'counts_out.zarr'),
                                             _local_network(1), (1, 1, 1), served,
                                             white_level_override=600.0)
  assert summary.written == 1


def test_a_movie_without_z_is_denoised_with_time_as_depth(tmp_path):
  movie = np.random.default_rng(1).integers(100, 500, (12, 40, 40)).astype(np.uint16)
  _write_zarr(tmp_path / 'movie.zarr', movie, 'TYX', (4, 32, 32))
  denoise = _local_network(radius=1)
  chunked_volumes.denoise_ome_zarr(str(tmp_path / 'movie.zarr'), str(tmp_path / 'out.zarr'),
                                   denoise, (1, 1, 1), BARE, white_level_override=600.0)
  np.testing.assert_array_equal(ome_zarr.open_image(str(tmp_path / 'out.zarr')).array[...],
                                _whole(movie, denoise, 600.0))


def _percentile_run():
  """A 3D --normalization=percentile run's TrainConfig (1 and 99.8, 16-bit)."""
  return config_lib.resolve_data(config_lib.train_config(
      train_data='data/stacks', model_dir='runs/x', noise='none', normalization='percentile',
      spatial_dims=3), 1, 'uint16', 65535.0)


def _whole_by_percentiles(volume, denoise):
  """The reference of a percentile run: the whole volume [D, H, W] uint16 mapped by
  its own 1st and 99.8th percentiles (NumPy, float64), denoised at once, mapped
  back, rounded and clipped to uint16."""
  low, high = np.percentile(volume.astype(np.float64), [1.0, 99.8])
  values = ((volume - low) / (high - low)).astype(np.float32)[..., np.newaxis]
  back = denoise(values)[..., 0].astype(np.float64) * (high - low) + low
  return np.clip(np.round(back), 0, 65535).astype(np.uint16)


def test_a_percentile_run_maps_each_time_point_by_its_own_percentiles(tmp_path):
  # Two time points of very different brightness, chunked across both T and space:
  # each must be mapped by its own percentiles, taken over the whole volume, not
  # the chunk (a chunk's percentiles would differ from chunk to chunk).
  rng = np.random.default_rng(4)
  dim = rng.integers(100, 500, (12, 40, 40))
  bright = rng.gamma(2.0, 900.0, (12, 40, 40)) + 3000
  middle = rng.integers(1000, 1500, (12, 40, 40))
  stack = np.stack([dim, np.minimum(bright, 65535), middle]).astype(np.uint16)
  # Two time points a chunk: the second chunk row holds the third alone.
  _write_zarr(tmp_path / 'in.zarr', stack, 'TZYX', (2, 6, 16, 16))
  denoise = _local_network(radius=1)
  summary = chunked_volumes.denoise_ome_zarr(str(tmp_path / 'in.zarr'),
                                             str(tmp_path / 'out.zarr'), denoise, (1, 1, 1),
                                             serving.of_run(_percentile_run()))
  assert summary.written == 2 * 2 * 3 * 3
  written = ome_zarr.open_image(str(tmp_path / 'out.zarr')).array[...]
  for frame in range(3):
    # Within one count: the reference maps in float64, denoise.py in float32.
    difference = written[frame].astype(np.int64) - _whole_by_percentiles(stack[frame], denoise)
    assert np.abs(difference).max() <= 1
  settings = (tmp_path / 'out.zarr' / chunked_volumes.SETTINGS_FILE).read_text()
  assert '"normalization": "percentile 1 99.8"' in settings and '"white_level": null' in settings


def test_a_percentile_movie_without_z_has_one_map_for_the_whole_movie(tmp_path):
  rng = np.random.default_rng(5)
  # The brightness climbs frame by frame: per-frame maps would flatten the climb.
  movie = (rng.integers(100, 300, (12, 24, 24)) * np.linspace(1, 8, 12)[:, None, None])
  movie = movie.astype(np.uint16)
  _write_zarr(tmp_path / 'movie.zarr', movie, 'TYX', (4, 16, 16))
  denoise = _local_network(radius=1)
  chunked_volumes.denoise_ome_zarr(str(tmp_path / 'movie.zarr'), str(tmp_path / 'out.zarr'),
                                   denoise, (1, 1, 1), serving.of_run(_percentile_run()))
  difference = (ome_zarr.open_image(str(tmp_path / 'out.zarr')).array[...].astype(np.int64)
                - _whole_by_percentiles(movie, denoise))
  assert np.abs(difference).max() <= 1  # float32 against the reference's float64


def test_16_bit_volumes_are_mapped_exactly_and_float_ones_from_a_random_sample():
  rng = np.random.default_rng(6)
  rule = normalization.rule_of(_percentile_run())
  counts = rng.gamma(3.0, 200.0, (2, 16, 64, 64))
  for dtype in (np.uint16, np.int16, np.uint8):
    volume = np.clip(counts / (1 if dtype != np.uint8 else 10), 0, 255 if dtype == np.uint8
                     else 30000).astype(dtype)
    array = _ChunkedArray(volume, (1, 5, 32, 32))
    # Counted, not sampled: exact at any budget.
    exact = chunked_volumes.percentile_maps(array, 'TZYX', 'Z', rule, max_samples=100)
    for frame in range(2):
      low, high = np.percentile(volume[frame].astype(np.float64), [1.0, 99.8])
      assert (exact[frame].offset, exact[frame].scale) == pytest.approx((low, high - low),
                                                                       rel=1e-9), dtype
    assert max(array.reads) == 1 * 5 * 32 * 32  # chunk by chunk
  # Float: a brightness that alternates with x in 4-pixel periods, which a
  # regular every-4th sample would see in one phase only.
  stripes = np.where((np.arange(64) // 2) % 2 == 0, 1.0, 3.0).astype(np.float32)
  volume = (counts * stripes).astype(np.float32)
  volume[0, 0, 0, :5] = np.nan  # missing voxels do not count
  array = _ChunkedArray(volume, (1, 5, 32, 32))
  sampled = chunked_volumes.percentile_maps(array, 'TZYX', 'Z', rule, max_samples=16384)
  for frame in range(2):
    low, high = np.nanpercentile(volume[frame].astype(np.float64), [1.0, 99.8])
    assert np.isfinite(sampled[frame].offset) and np.isfinite(sampled[frame].scale)
    # One value in 4 at random, 16384 values: within 5% of the spread.
    assert abs(sampled[frame].offset - low) < 0.05 * (high - low)
    assert abs(sampled[frame].offset + sampled[frame].scale - high) < 0.05 * (high - low)


def test_a_movie_stored_with_one_z_plane_is_denoised_with_time_as_depth(tmp_path):
  movie = np.random.default_rng(8).integers(100, 500, (12, 1, 1, 40, 40)).astype(np.uint16)
  _write_zarr(tmp_path / 'movie.zarr', movie, 'TCZYX', (4, 1, 1, 32, 32))
  denoise = _local_network(radius=1)
  chunked_volumes.denoise_ome_zarr(str(tmp_path / 'movie.zarr'), str(tmp_path / 'out.zarr'),
                                   denoise, (1, 1, 1), BARE, white_level_override=600.0)
  written = ome_zarr.open_image(str(tmp_path / 'out.zarr')).array[...]
  assert written.shape == movie.shape
  np.testing.assert_array_equal(written[:, 0, 0], _whole(movie[:, 0, 0], denoise, 600.0))


class _ChunkedArray:
  """An in-memory array with zarr's .shape, .chunks, .dtype and slicing, that
  records the size of every read."""

  def __init__(self, values, chunks):
    self.values, self.shape, self.chunks, self.reads = values, values.shape, chunks, []
    self.dtype = values.dtype

  def __getitem__(self, key):
    part = self.values[key]
    self.reads.append(part.size)
    return part


def test_shards_split_the_chunks_between_them_and_cover_every_one():
  indices = chunked_volumes.chunk_indices((2, 20, 50, 45), (1, 8, 16, 16))
  assert len(indices) == 2 * 3 * 4 * 3
  parts = [chunked_volumes.shard_chunks(indices, sharding.Shard(index, 3)) for index in range(3)]
  assert sorted(sum(parts, [])) == sorted(indices)
  assert all(not set(first) & set(second) for first in parts for second in parts
             if first is not second)


def test_a_shard_writes_every_second_chunk_in_c_order_and_only_those(tmp_path):
  volume = np.random.default_rng(2).integers(100, 500, (16, 32, 32)).astype(np.uint16)
  _write_zarr(tmp_path / 'in.zarr', volume, 'ZYX', (8, 16, 16))
  chunked_volumes.denoise_ome_zarr(str(tmp_path / 'in.zarr'), str(tmp_path / 'out.zarr'),
                                   _local_network(1), (1, 1, 1), BARE, white_level_override=600.0,
                                   shard=sharding.Shard(0, 2))
  # The 2 x 2 x 2 grid in C order is (0,0,0) (0,0,1) (0,1,0) (0,1,1) (1,0,0) ...:
  # shard 0 of 2 takes the 1st, 3rd, 5th and 7th.
  assert sorted(os.listdir(tmp_path / 'out.zarr' / chunked_volumes.DONE_DIR)) == [
      '0.0.0', '0.1.0', '1.0.0', '1.1.0']
  written = ome_zarr.open_image(str(tmp_path / 'out.zarr')).array[...]
  whole = _whole(volume, _local_network(1), 600.0)
  for z, y, x in np.ndindex(2, 2, 2):
    chunk = np.s_[z * 8:(z + 1) * 8, y * 16:(y + 1) * 16, x * 16:(x + 1) * 16]
    if x == 0:
      np.testing.assert_array_equal(written[chunk], whole[chunk])
    else:
      assert not written[chunk].any(), (z, y, x)  # never written: the fill value


def test_a_resume_with_other_settings_is_refused_in_one_line(tmp_path):
  volume = np.random.default_rng(2).integers(100, 500, (16, 32, 32)).astype(np.uint16)
  _write_zarr(tmp_path / 'in.zarr', volume, 'ZYX', (8, 16, 16))
  source, output = str(tmp_path / 'in.zarr'), str(tmp_path / 'out.zarr')
  first = dict(model='run_a/ckpt-300', tile=[8, 64, 64])
  chunked_volumes.denoise_ome_zarr(source, output, _local_network(1), (1, 1, 1), BARE,
                                   white_level_override=600.0, shard=sharding.Shard(0, 2),
                                   settings=first)
  changes = [(dict(settings=dict(first, model='run_a/ckpt-600')), '--model'),
             (dict(settings=dict(first, tile=[16, 64, 64])), '--volume_tile'),
             (dict(settings=first, margin=(2, 2, 2)), '--volume_overlap'),
             (dict(settings=first, white_level_override=1000.0), '--white_level')]
  for change, flag in changes:
    arguments = dict(margin=(1, 1, 1), serving=BARE, white_level_override=600.0,
                     settings=first)
    arguments.update(change)
    with pytest.raises(ome_zarr.OmeZarrError) as error:
      chunked_volumes.denoise_ome_zarr(source, output, _local_network(1),
                                       shard=sharding.Shard(1, 2), **arguments)
    message = str(error.value)
    assert 'begun with other settings' in message and '\n' not in message
    # The changed setting's flag is named, and no other's.
    assert [name for name in chunked_volumes.SETTING_FLAGS.values()
            if f'{name} ' in message] == [flag], message
  assert len(os.listdir(os.path.join(output, chunked_volumes.DONE_DIR))) == 4
  # The same settings resume it.
  summary = chunked_volumes.denoise_ome_zarr(source, output, _local_network(1), (1, 1, 1), BARE,
                                             white_level_override=600.0, settings=first)
  assert (summary.written, summary.already_done) == (4, 4)


def test_overwrite_with_a_shard_redoes_its_own_chunks_and_keeps_the_others(tmp_path):
  volume = np.random.default_rng(2).integers(100, 500, (16, 32, 32)).astype(np.uint16)
  _write_zarr(tmp_path / 'in.zarr', volume, 'ZYX', (8, 16, 16))
  source, output = str(tmp_path / 'in.zarr'), str(tmp_path / 'out.zarr')
  old, new = _local_network(1), _local_network(2)
  for index in range(2):
    chunked_volumes.denoise_ome_zarr(source, output, old, (2, 2, 2), BARE,
                                     white_level_override=600.0, shard=sharding.Shard(index, 2),
                                     settings={'model': 'old'})
  summary = chunked_volumes.denoise_ome_zarr(source, output, new, (2, 2, 2), BARE,
                                             white_level_override=600.0,
                                             shard=sharding.Shard(0, 2), overwrite=True,
                                             settings={'model': 'new'})
  assert (summary.written, summary.already_done) == (4, 0)
  written = ome_zarr.open_image(source.replace('in.zarr', 'out.zarr')).array[...]
  whole_old, whole_new = _whole(volume, old, 600.0), _whole(volume, new, 600.0)
  for z, y, x in np.ndindex(2, 2, 2):
    chunk = np.s_[z * 8:(z + 1) * 8, y * 16:(y + 1) * 16, x * 16:(x + 1) * 16]
    # Shard 0 owns the chunks with x == 0 (see the test above).
    np.testing.assert_array_equal(written[chunk], (whole_new if x == 0 else whole_old)[chunk])
  # Shard 1, resumed under the new settings without --overwrite, does not take its
  # old chunks for done: their markers hold the old settings' digest.
  summary = chunked_volumes.denoise_ome_zarr(source, output, new, (2, 2, 2), BARE,
                                             white_level_override=600.0,
                                             shard=sharding.Shard(1, 2),
                                             settings={'model': 'new'})
  assert (summary.written, summary.already_done) == (4, 0)
  np.testing.assert_array_equal(ome_zarr.open_image(output).array[...], whole_new)


def test_shards_that_create_the_output_at_once_all_open_the_same_one(tmp_path):
  volume = np.random.default_rng(2).integers(100, 500, (16, 32, 32)).astype(np.uint16)
  _write_zarr(tmp_path / 'in.zarr', volume, 'ZYX', (8, 16, 16))
  image = ome_zarr.open_image(str(tmp_path / 'in.zarr'))
  destination = str(tmp_path / 'out.zarr')
  start = threading.Barrier(4)
  failures = []

  def open_together():
    start.wait()
    try:
      chunked_volumes.open_output(destination, image, {'model': 'a'}, overwrite=False,
                                  sharded=True)
    except Exception as error:  # pylint: disable=broad-except  (collected and asserted below)
      failures.append(repr(error))

  threads = [threading.Thread(target=open_together) for _ in range(4)]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join()
  assert not failures, failures
  assert ome_zarr.to_json(ome_zarr.open_image(destination)) == ome_zarr.to_json(image)
  # No staging folder is left beside the output.
  assert sorted(os.listdir(tmp_path)) == ['in.zarr', 'out.zarr']


def test_a_shard_that_loses_the_race_to_create_the_output_opens_the_winners(tmp_path,
                                                                           monkeypatch):
  volume = np.random.default_rng(2).integers(100, 500, (16, 32, 32)).astype(np.uint16)
  _write_zarr(tmp_path / 'in.zarr', volume, 'ZYX', (8, 16, 16))
  image = ome_zarr.open_image(str(tmp_path / 'in.zarr'))
  destination = str(tmp_path / 'out.zarr')
  create_like = ome_zarr.create_like
  staged = []

  def another_shard_first(path, like):
    # The other shard's output appears, complete, while this one stages its own.
    staged.append(path)
    if len(staged) == 1:
      assert chunked_volumes._create_output(destination, like, {'model': 'a'})  # pylint: disable=protected-access
    return create_like(path, like)

  monkeypatch.setattr(ome_zarr, 'create_like', another_shard_first)
  created = chunked_volumes._create_output(destination, image, {'model': 'a'})  # pylint: disable=protected-access
  assert created is False and len(staged) == 2
  monkeypatch.setattr(ome_zarr, 'create_like', create_like)
  output = chunked_volumes.open_output(destination, image, {'model': 'a'}, overwrite=False,
                                       sharded=True)
  assert output.shape == volume.shape
  assert sorted(os.listdir(tmp_path)) == ['in.zarr', 'out.zarr']


@pytest.mark.parametrize('where', ['in.zarr', 'in.zarr/inner.zarr'])
@pytest.mark.parametrize('overwrite', [False, True])
def test_an_output_onto_its_own_input_is_refused_and_the_input_kept(tmp_path, where,
                                                                     overwrite):
  volume = np.random.default_rng(2).integers(100, 500, (16, 32, 32)).astype(np.uint16)
  _write_zarr(tmp_path / 'in.zarr', volume, 'ZYX', (8, 16, 16))
  with pytest.raises(ome_zarr.OmeZarrError, match=r'would overwrite its input .*--output_dir'):
    chunked_volumes.denoise_ome_zarr(str(tmp_path / 'in.zarr'), str(tmp_path / where),
                                     _local_network(1), (1, 1, 1), BARE, white_level_override=600.0,
                                     overwrite=overwrite)
  np.testing.assert_array_equal(ome_zarr.open_image(str(tmp_path / 'in.zarr')).array[...],
                                volume)


@pytest.fixture(scope='module')
def tiny_run(tmp_path_factory):
  """A 3D pairs run of 10 steps: the network's weights, not its quality, matter here
  (nor its width: 8 channels, for speed)."""
  root = tmp_path_factory.mktemp('chunked')
  records, _ = volume_helpers.write_phantom_dataset(root, count=2)
  return volume_helpers.train_run(records, root / 'run', 10, network_width=8)


def _denoise_py(model_dir, source, output, *flags):
  return [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={model_dir}',
          f'--input={source}', f'--output_dir={output}', '--precision=float32',
          '--volume_tile=16,64,64', '--volume_overlap=4,16,16', *flags]


def _chunk_files(path):
  """{chunk file: modification time} of an output's full-resolution array."""
  found = {}
  for folder, _, names in os.walk(os.path.join(path, '0')):
    for name in names:
      if not name.startswith('.'):
        found[os.path.join(folder, name)] = os.stat(os.path.join(folder, name)).st_mtime_ns
  return found


@pytest.mark.slow
def test_a_killed_chunked_run_resumes_and_writes_each_chunk_once(tiny_run, tmp_path):
  captures, _ = phantom.phantom_scene(phantom.PhantomSpec(shape=(32, 96, 96)), seed=4)
  source = tmp_path / 'inputs' / 'stack.zarr'
  source.parent.mkdir()
  _write_zarr(source, captures[0], 'ZYX', (8, 32, 32))
  chunk_count = 4 * 3 * 3
  # Uninterrupted, for reference.
  subprocess.run(_denoise_py(tiny_run, source, tmp_path / 'whole'), check=True,
                 capture_output=True, timeout=300)
  done_dir = tmp_path / 'killed' / 'stack.zarr' / chunked_volumes.DONE_DIR
  process = subprocess.Popen(_denoise_py(tiny_run, source, tmp_path / 'killed'),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  deadline = time.monotonic() + 240
  while time.monotonic() < deadline and process.poll() is None:
    if done_dir.is_dir() and len(os.listdir(done_dir)) >= 3:
      break
    time.sleep(0.02)
  process.send_signal(signal.SIGKILL)
  process.wait()
  markers_before = set(os.listdir(done_dir))
  assert 3 <= len(markers_before) < chunk_count, len(markers_before)
  written_before = _chunk_files(tmp_path / 'killed' / 'stack.zarr')
  result = subprocess.run(_denoise_py(tiny_run, source, tmp_path / 'killed'),
                          capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr[-2000:]
  assert len(os.listdir(done_dir)) == chunk_count
  written_after = _chunk_files(tmp_path / 'killed' / 'stack.zarr')
  assert len(written_after) == chunk_count
  # Chunks whose marker was written before the kill were not written again.
  for marker in markers_before:
    index = tuple(int(value) for value in marker.split('.'))
    path = os.path.join(tmp_path / 'killed' / 'stack.zarr', '0', '.'.join(map(str, index)))
    assert written_after[path] == written_before[path], marker
  resumed = ome_zarr.open_image(str(tmp_path / 'killed' / 'stack.zarr')).array[...]
  whole = ome_zarr.open_image(str(tmp_path / 'whole' / 'stack.zarr')).array[...]
  np.testing.assert_array_equal(resumed, whole)


@pytest.mark.slow
def test_two_shards_started_together_write_one_output_like_one_worker(tiny_run, tmp_path):
  captures, _ = phantom.phantom_scene(phantom.PhantomSpec(shape=(16, 64, 64)), seed=5)
  source = tmp_path / 'inputs' / 'stack.zarr'
  source.parent.mkdir()
  _write_zarr(source, captures[0], 'ZYX', (8, 32, 32), version='0.5')
  subprocess.run(_denoise_py(tiny_run, source, tmp_path / 'one'), check=True,
                 capture_output=True, timeout=300)
  # Both shards at once, as a job array starts them: they race to create the output.
  processes = [subprocess.Popen(_denoise_py(tiny_run, source, tmp_path / 'two',
                                            f'--shard={shard}'),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
               for shard in ('0/2', '1/2')]
  for process in processes:
    _, errors = process.communicate(timeout=300)
    assert process.returncode == 0, errors[-2000:]
  assert len(os.listdir(tmp_path / 'two' / 'stack.zarr' / chunked_volumes.DONE_DIR)) == 8
  np.testing.assert_array_equal(ome_zarr.open_image(str(tmp_path / 'two' / 'stack.zarr')).array[...],
                                ome_zarr.open_image(str(tmp_path / 'one' / 'stack.zarr')).array[...])
