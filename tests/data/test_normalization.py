"""--normalization (issue 23): the percentile map in numpy and in TensorFlow, and
denoise.py and evaluation applying it to whole images."""

import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import native_images
from n2n.data import normalization
from n2n.evaluation import eval_data
from n2n.inference import noisy_files
from n2n.inference import serving

RULE = normalization.Rule(normalization.PERCENTILE, 1.0, 99.8)


def test_numpy_and_tensorflow_maps_match_numpys_percentile_for_every_image_of_a_batch():
  rng = np.random.default_rng(0)
  batch = np.stack([rng.normal(1200 + 100 * index, 30, (37, 41, 3)) for index in range(3)])
  offset, scale = normalization.percentile_maps_tf(tf.constant(batch, tf.float32), RULE)
  for index, image in enumerate(batch):
    low, high = np.percentile(image, [1, 99.8])
    pixel_map = normalization.percentile_map(image, RULE)
    assert (pixel_map.offset, pixel_map.scale) == pytest.approx((low, high - low))
    assert offset.numpy()[index, 0, 0, 0] == pytest.approx(low, abs=1e-3)
    assert scale.numpy()[index, 0, 0, 0] == pytest.approx(high - low, abs=1e-3)


def test_a_stretched_copy_of_an_image_gets_the_same_network_values():
  # What lets 1000-1400 data train like full-range data: the map undoes any
  # positive scale and offset.
  image = np.random.default_rng(1).uniform(size=(30, 30, 1))
  narrow = normalization.normalize(1000 + 400 * image, normalization.percentile_map(
      1000 + 400 * image, RULE))
  full = normalization.normalize(65535 * image, normalization.percentile_map(65535 * image, RULE))
  np.testing.assert_allclose(narrow, full, atol=1e-5)
  assert narrow.min() < 0.0 < 1.0 < narrow.max()  # the tails beyond the percentiles are kept


def test_a_flat_image_keeps_its_scale_instead_of_dividing_by_zero():
  flat = np.full((8, 8, 1), 1234.0)
  assert normalization.percentile_map(flat, RULE) == normalization.PixelMap(1234.0, 1.0)
  offset, scale = normalization.percentile_maps_tf(tf.constant(flat[np.newaxis], tf.float32), RULE)
  assert (offset.numpy().item(), scale.numpy().item()) == (1234.0, 1.0)


def percentile_run(**overrides):
  """A --normalization=percentile run's TrainConfig, 16-bit grayscale."""
  return config_lib.resolve_data(config_lib.train_config(
      train_data='data/scenes', model_dir='runs/x', noise='none', normalization='percentile',
      **overrides), 1, 'uint16', 65535.0)


def as_saved(run_config):
  """The TrainConfig denoise.py reads back from config.json."""
  return config_lib.read_train_config(json.loads(run_config.to_json()))


@pytest.mark.parametrize('page', [
    np.random.default_rng(2).integers(1000, 1400, (20, 30)).astype(np.uint16),
    np.random.default_rng(3).integers(10, 60, (20, 30, 3)).astype(np.uint8),
    np.random.default_rng(4).normal(5e-3, 1e-3, (20, 30)).astype(np.float32)],
                         ids=['uint16', 'uint8 rgb', 'float32'])
def test_an_identity_network_gives_every_page_back_through_its_map(page):
  seen = []

  def identity(values):
    seen.append(values)
    return values

  served = dataclasses.replace(serving.of_run(as_saved(percentile_run())),
                               channels=page.shape[-1] if page.ndim == 3 else 1)
  output = noisy_files.denoise_page(page, identity, served)
  assert output.dtype == page.dtype
  np.testing.assert_allclose(output, page, rtol=1e-5)
  # The network saw the page's own 1-99.8 percentiles at 0-1, colours under one map.
  values = np.concatenate([array.ravel() for array in seen])
  assert np.percentile(values, 1) == pytest.approx(0.0, abs=1e-4)
  assert np.percentile(values, 99.8) == pytest.approx(1.0, abs=1e-4)


def test_white_level_is_refused_for_a_percentile_model():
  with pytest.raises(ValueError, match=r'^--white_level=4095 does not apply: the model maps each '
                     r'image\'s 1 and 99.8 percentiles'):
    noisy_files.check_white_level_override(serving.of_run(as_saved(percentile_run())), 4095.0)
  noisy_files.check_white_level_override(serving.of_run(as_saved(percentile_run())), 0.0)


def test_evaluation_puts_a_scene_on_its_first_captures_scale(tmp_path):
  rng = np.random.default_rng(5)
  reference = rng.integers(1100, 1300, (40, 40)).astype(np.uint16)
  for name, image in (('capture_0.png', reference + 10), ('capture_1.png', reference + 20),
                      ('reference.png', reference)):
    (tmp_path / 'scene' / name).parent.mkdir(exist_ok=True)
    (tmp_path / 'scene' / name).write_bytes(native_images.encode_pages([image], 'png'))
  run_config = percentile_run(percentile_low=2.0)
  scene, = eval_data.load_eval_scenes(str(tmp_path), run_config)
  pixel_map = normalization.percentile_map(reference + 10, normalization.rule_of(run_config))
  assert pixel_map.offset == pytest.approx(np.percentile(reference + 10, 2))
  np.testing.assert_allclose(scene.first, (reference[..., None] + 10 - pixel_map.offset)
                             / pixel_map.scale, atol=1e-5)
  np.testing.assert_allclose(scene.reference, (reference[..., None] - pixel_map.offset)
                             / pixel_map.scale, atol=1e-5)
  assert scene.step == pytest.approx(1 / pixel_map.scale)


def test_missing_voxels_do_not_count_in_a_percentile_map():
  rng = np.random.default_rng(3)
  volume = rng.uniform(100.0, 500.0, (4, 16, 16)).astype(np.float32)
  holed = volume.copy()
  holed[0, :2] = np.nan
  holed[1, 0, 0] = np.inf
  found = normalization.percentile_map(holed, RULE)
  kept = volume[np.isfinite(holed)].astype(np.float64)
  low, high = np.percentile(kept, [RULE.low_percentile, RULE.high_percentile])
  assert (found.offset, found.scale) == pytest.approx((low, high - low), rel=1e-6)
  with pytest.raises(ValueError, match='holds no finite value'):
    normalization.percentile_map(np.full((3, 3), np.nan, np.float32), RULE)
