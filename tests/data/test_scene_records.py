"""Scene datasets: the dataset tool's --scenes records and the training pairs read from them."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes.images import smooth_image
from n2n import config as config_lib
from n2n.data import native_images
from n2n.data import scene_pipeline
from n2n.data import scene_writer
from n2n.data import tfrecord


def _write(path, array):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(native_images.encode_pages([array], native_images.family_of(str(path))))


@pytest.fixture(scope='module')
def offset_scenes(tmp_path_factory):
  """Scenes whose captures are one smooth 16-bit image plus 100 * index, and a
  reference plus 1000: a pair's difference tells which captures and windows met."""
  root = tmp_path_factory.mktemp('scenes')
  rng = np.random.default_rng(0)
  for name in ('one', 'two'):
    base = smooth_image(rng, 72, 80, 1)[:, :, 0].astype(np.uint16) * 200
    for index in range(3):
      _write(root / name / f'capture_{index}.png', base + 100 * index)
    _write(root / name / 'reference.png', base + 1000)
  return root


def test_scene_records_keep_pixels_and_the_manifest_counts(offset_scenes, tmp_path):
  manifest = scene_writer.write_scene_dataset(str(offset_scenes), str(tmp_path), num_shards=2)
  assert manifest['kind'] == 'scenes' and manifest['num_scenes'] == 2
  assert (manifest['num_captures'], manifest['num_references']) == (6, 2)
  assert (manifest['dtype'], manifest['channels'], manifest['white_level']) == ('uint16', 1,
                                                                                65535.0)
  assert json.loads((tmp_path / 'manifest.json').read_text()) == manifest
  records = sorted(str(path) for path in tmp_path.glob('*.tfrecord'))
  assert len(records) == 2
  scene = tfrecord.parse_scene(next(iter(tf.data.TFRecordDataset(records[0]))))
  captures = [tfrecord.decode_pixels(data, tf.uint16, 1).numpy() for data in scene['captures']]
  assert len(captures) == 3 and captures[0].dtype == np.uint16
  np.testing.assert_array_equal(captures[2].astype(int) - captures[0], 200)
  assert list(scene['shape'].numpy()) == [72, 80, 1]


def test_a_bad_scene_stops_the_tool_with_nothing_written(offset_scenes, tmp_path):
  source = tmp_path / 'source'
  shutil.copytree(offset_scenes, source)
  _write(source / 'two' / 'capture_9.png', np.zeros((72, 81), np.uint16))
  output = tmp_path / 'out'
  with pytest.raises(ValueError, match=r'capture_9.png is 81x72'):
    scene_writer.write_scene_dataset(str(source), str(output))
  assert not list(output.glob('*'))
  manifest = scene_writer.write_scene_dataset(str(source), str(output), skip_bad_scenes=True)
  assert manifest['num_scenes'] == 1 and manifest['skipped'][0]['scene'] == 'two'


def test_scenes_of_different_pixel_types_are_refused(offset_scenes, tmp_path):
  source = tmp_path / 'source'
  shutil.copytree(offset_scenes, source)
  for index in range(2):
    _write(source / 'eight' / f'c{index}.png', np.zeros((72, 80), np.uint8))
  with pytest.raises(ValueError, match=r'capture_0.png is uint16 with 1 channel\(s\) but .*c0.png '
                     'is uint8 with 1; a dataset has one pixel type'):
    scene_writer.write_scene_dataset(str(source), str(tmp_path / 'out'))


def _pairs(records, target, cache=False, **overrides):
  config = config_lib.train_config(train_data=str(records / '*.tfrecord'), model_dir='unused',
                                  noise='none', target=target, crop_size=32, batch_size=4,
                                  **overrides)
  config = config_lib.resolve_data(config, 1, 'uint16', 65535.0)
  dataset = scene_pipeline.build_scene_dataset(config, 4, cache=cache)
  return [batch for batch in dataset.take(8)]


@pytest.mark.parametrize('target', ['noisy', 'clean'])
def test_pairs_are_two_captures_of_one_scene_at_the_same_window(offset_scenes, tmp_path, target):
  scene_writer.write_scene_dataset(str(offset_scenes), str(tmp_path))
  differences = set()
  for batch in _pairs(tmp_path, target):
    assert batch['input'].shape == (4, 32, 32, 1) and 'target_mask' not in batch
    difference = np.round((batch['target'] - batch['input']).numpy() * 65535)
    # One value per crop: the same window and augmentation for input and target.
    per_crop = difference.reshape(4, -1)
    assert (per_crop == per_crop[:, :1]).all()
    differences.update(per_crop[:, 0].tolist())
  if target == 'noisy':
    # Two different captures every time, in either order.
    assert differences <= {-200, -100, 100, 200} and len(differences) >= 3
  else:
    assert differences <= {1000, 900, 800} and len(differences) >= 2


@pytest.fixture(scope='module')
def colour_scenes(tmp_path_factory):
  """RGB 16-bit scenes whose channels hold far-apart values (R 1000, G 20000,
  B 50000, plus 100 * the capture's index, reference plus 1000): any value tells
  its channel, its capture and its scale."""
  root = tmp_path_factory.mktemp('colour_scenes')
  base = np.ones((64, 64, 3), np.uint16) * np.array([1000, 20000, 50000], np.uint16)
  for name in ('one', 'two'):
    for index in range(3):
      _write(root / name / f'capture_{index}.png', base + 100 * index)
    _write(root / name / 'reference.png', base + 1000)
  records = tmp_path_factory.mktemp('colour_records')
  scene_writer.write_scene_dataset(str(root), str(records))
  return records


def _colour_pairs(records, white_level, **augment):
  config = config_lib.train_config(
      train_data=str(records / '*.tfrecord'), model_dir='unused', noise='none', crop_size=32,
      batch_size=4, **{f'augment_{name}': value for name, value in augment.items()})
  config = config_lib.resolve_data(config, 3, 'uint16', white_level)
  dataset = scene_pipeline.build_scene_dataset(config, 4, cache=False)
  return [(batch['input'].numpy(), batch['target'].numpy()) for batch in dataset.take(12)]


@pytest.mark.parametrize('white_level', [65535.0, 60000.0])
def test_scene_pairs_keep_channel_order_and_the_white_level(colour_scenes, white_level):
  for noisy_input, target in _colour_pairs(colour_scenes, white_level, channel_permutations=False):
    for image in (noisy_input, target):
      values = np.round(image * white_level).reshape(-1, 3)
      # Red from the red channel, and so on, each divided by the white level only.
      offsets = values - np.array([1000, 20000, 50000])
      assert set(np.unique(offsets)) <= {0, 100, 200}


def test_channel_permutations_move_input_and_target_together(colour_scenes):
  orders = set()
  for noisy_input, target in _colour_pairs(colour_scenes, 65535.0):
    for crop_input, crop_target in zip(noisy_input, target):
      input_order = tuple(np.argsort(crop_input[0, 0]))
      # The same order of the three channels in the input and the target.
      assert tuple(np.argsort(crop_target[0, 0])) == input_order
      # Still two different captures: each channel differs by the same offset.
      difference = np.round((crop_target - crop_input) * 65535).reshape(-1, 3)
      assert (difference == difference[0, 0]).all() and difference[0, 0] != 0
      orders.add(input_order)
  # 48 crops draw all six orders.
  assert len(orders) == 6


def test_a_scene_too_large_for_one_record_is_split_into_records_of_two_or_more(offset_scenes,
                                                                              tmp_path):
  # Each capture and the reference are 72 x 80 uint16: 11,520 bytes. A budget of
  # three of them holds two captures and the reference: 3 captures -> 2 records.
  budget = 3 * 72 * 80 * 2
  manifest = scene_writer.write_scene_dataset(str(offset_scenes), str(tmp_path),
                                              max_record_bytes=budget)
  assert manifest['num_scenes'] == 2 and manifest['num_records'] == 4
  assert manifest['num_captures'] == 6  # captures of the scenes, not of the records
  sizes, groups = [], {}
  for record in tf.data.TFRecordDataset(sorted(str(path) for path in tmp_path.glob('*.tfrecord'))):
    sizes.append(len(record.numpy()))
    scene = tfrecord.parse_scene(record)
    decode = lambda data: tfrecord.decode_pixels(data, tf.uint16, 1).numpy()[0, 0, 0].astype(int)
    reference, = [decode(data) for data in scene['reference']]
    # capture_i is the reference - 1000 + 100 i.
    indices = [(decode(data) - reference + 1000) // 100 for data in scene['captures']]
    assert len(indices) == 2
    groups.setdefault(scene['name'].numpy().decode(), set()).update(indices)
  assert max(sizes) < budget + 1024  # the pixels plus a few hundred bytes of framing
  # Records of two captures each; together they hold all three of each scene.
  assert groups == {'one': {0, 1, 2}, 'two': {0, 1, 2}}
  # Pairs are drawn within a record: still two different captures of one scene.
  differences = set()
  for batch in _pairs(tmp_path, 'noisy'):
    difference = np.round((batch['target'] - batch['input']).numpy() * 65535).reshape(4, -1)
    differences.update(difference[:, 0].tolist())
  assert differences <= {-100, 100} and differences


def test_a_capture_too_large_for_any_record_is_refused_before_anything_is_written(
    offset_scenes, tmp_path):
  with pytest.raises(ValueError, match=r'capture_0.png is 0 MiB: two captures and the reference '
                     r'\(0 MiB\) pass the 0 MiB a record may hold; crop the captures into tiles'):
    scene_writer.write_scene_dataset(str(offset_scenes), str(tmp_path / 'out'),
                                     max_record_bytes=20000)
  assert not list((tmp_path / 'out').iterdir())


def test_a_failure_while_writing_records_leaves_no_temporary_shard(offset_scenes, tmp_path,
                                                                  monkeypatch):
  reads = []
  read_scene = scene_writer.scenes_lib.read_scene

  def failing_read(*args):
    reads.append(args)
    if len(reads) == 3:  # the second pass's first scene: the file changed, the disk failed
      raise OSError('read error')
    return read_scene(*args)

  monkeypatch.setattr(scene_writer.scenes_lib, 'read_scene', failing_read)
  with pytest.raises(OSError, match='read error'):
    scene_writer.write_scene_dataset(str(offset_scenes), str(tmp_path / 'out'))
  assert not list((tmp_path / 'out').iterdir())


@pytest.mark.parametrize('dtype, channels', [('uint8', 1), ('uint8', 3), ('uint16', 1),
                                             ('uint16', 3)])
def test_noisy_image_records_round_trip_every_bit_depth_and_channel_count(dtype, channels,
                                                                          tmp_path):
  from n2n.training import train_lib  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(channels)
  top = np.iinfo(dtype).max
  images = {}
  for name, size in (('a.png', (70, 66)), ('deeper/b.tif', (64, 90))):
    images[name] = rng.integers(0, top, size + (channels,), endpoint=True).astype(dtype)
    _write(tmp_path / 'noisy' / name, images[name][..., 0] if channels == 1 else images[name])
  manifest = scene_writer.write_scene_dataset(str(tmp_path / 'noisy'), str(tmp_path / 'records'),
                                              noisy_images=True)
  assert (manifest['kind'], manifest['num_images'], manifest['dtype'], manifest['channels']) == (
      'noisy_images', 2, dtype, channels)
  stored = []
  for path in sorted((tmp_path / 'records').glob('*.tfrecord')):
    for record in tf.data.TFRecordDataset(str(path)):
      scene = tfrecord.parse_scene(record)
      assert len(scene['captures']) == 1
      stored.append(tfrecord.decode_pixels(scene['captures'][0], tf.as_dtype(dtype),
                                           channels).numpy())
  assert sorted(map(bytes, stored)) == sorted(map(bytes, images.values()))
  # Training reads them on the 0-1 scale at their white level, with their channels.
  config = config_lib.resolve_data(
      config_lib.train_config(train_data=str(tmp_path / 'records'), model_dir='unused',
                             noise='none', method='blind_spot', crop_size=64, batch_size=2),
      channels, dtype, float(top))
  element = next(iter(train_lib.build_dataset(config, 2, cache=False)))
  crops = element['target'].numpy()
  assert crops.shape == (2, 64, 64, channels)
  assert 0.0 <= crops.min() and crops.max() <= 1.0
  values = np.round(crops * top)
  np.testing.assert_allclose(crops * top, values, atol=1e-2)  # on the native grid


# With the cache every capture's map is computed once before it; without, per visit.
@pytest.mark.parametrize('cache', [False, True])
def test_percentile_pairs_put_the_target_on_the_input_captures_scale(offset_scenes, tmp_path,
                                                                    cache):
  scene_writer.write_scene_dataset(str(offset_scenes), str(tmp_path))
  # Every capture of a scene has the same spread; only the offset moves by 100 per capture.
  spreads = []
  for name in ('one', 'two'):
    capture = native_images.read_pages(str(offset_scenes / name / 'capture_0.png'))[0]
    low, high = np.percentile(capture, [1, 99.8])
    spreads.append(high - low)
  differences = set()
  for batch in _pairs(tmp_path, 'noisy', cache, normalization='percentile'):
    inputs = batch['input'].numpy()
    # The input on its own percentiles' scale: about 0-1, not pixel / 65535.
    assert inputs.min() >= -0.1 and inputs.max() > 0.5
    per_crop = (batch['target'] - batch['input']).numpy().reshape(4, -1)
    assert np.allclose(per_crop, per_crop[:, :1], atol=1e-5)
    for difference in per_crop[:, 0]:
      # The target mapped by its own percentiles would differ by 0.
      levels = {round(float(difference * spread)) for spread in spreads}
      assert levels & {-200, -100, 100, 200}, levels
      differences.add(round(float(np.sign(difference))))
  assert differences == {-1, 1}


def test_the_dim_data_warning_names_the_brightest_value_and_the_way_out():
  # The phantom at 5 photons: counts up to 266 under the table's white level 600.
  line = scene_writer.dim_data_warning(266.0, 600.0, True, clean=False)
  assert line.startswith('the brightest value of the captures, 266, is 44.3% of '
                         '--white_level=600: ')
  assert line.endswith('pass --white_level near it, or train with --normalization=percentile')
  assert '\n' not in line
  # Clean stacks train on synthetic noise, which has no percentile normalisation.
  assert scene_writer.dim_data_warning(4095.0, 65535.0, False, clean=True).startswith(
      'the brightest value of the captures, 4095, is 6.2% of the default white level 65535')
  assert scene_writer.dim_data_warning(4095.0, 65535.0, False, clean=True).endswith(
      ': the network sees the data dark and learns less from them; pass --white_level near it')
  # At 10 photons (52% of 600) it still cost 2.9 dB: warned. Three quarters or more: not.
  assert scene_writer.dim_data_warning(312.0, 600.0, True, clean=False).startswith(
      'the brightest value of the captures, 312, is 52.0% of --white_level=600')
  assert scene_writer.dim_data_warning(449.0, 600.0, True, clean=False) is not None
  assert scene_writer.dim_data_warning(450.0, 600.0, True, clean=False) is None
  assert scene_writer.dim_data_warning(539.0, 600.0, True, clean=False) is None


def test_writing_dim_scenes_warns_once_and_a_fitting_white_level_does_not(tmp_path, caplog):
  import logging  # pylint: disable=g-import-not-at-top
  # 16-bit microscopy using a few hundred levels: two scenes, counts 100 to about 300.
  rng = np.random.default_rng(1)
  for name in ('one', 'two'):
    base = smooth_image(rng, 40, 48, 1)[:, :, 0].astype(np.float64)
    for index in range(2):
      _write(tmp_path / 'dim' / name / f'capture_{index}.png',
             np.round(100 + 200 * base / base.max() - 10 * index).astype(np.uint16)[:, :, None])
  brightest = max(int(native_images.read_pages(str(path))[0].max())
                  for path in (tmp_path / 'dim').glob('*/capture_*.png'))
  assert 250 <= brightest <= 300
  with caplog.at_level(logging.WARNING):
    scene_writer.write_scene_dataset(str(tmp_path / 'dim'), str(tmp_path / 'default'))
  warned = [record.getMessage() for record in caplog.records
            if 'brightest value' in record.getMessage()]
  assert warned == [f'the brightest value of the captures, {brightest}, is '
                    f'{brightest / 65535:.1%} of the default white level 65535: the network sees '
                    'the data dark and learns less from them; pass --white_level near '
                    'it, or train with --normalization=percentile']
  caplog.clear()
  with caplog.at_level(logging.WARNING):
    scene_writer.write_scene_dataset(str(tmp_path / 'dim'), str(tmp_path / 'fitting'),
                                     white_level=float(brightest))
  assert not [record for record in caplog.records if 'brightest value' in record.getMessage()]
