"""Training from single noisy images: the refusals, the Trainer's wiring of
Neighbor2Neighbor's regulariser, and both methods learning in a few dozen steps
(issue 22). The sub-sampler and masks: tests/data/test_single_image_pairs.py;
the regulariser's own value: tests/methods/test_neighbor2neighbor.py."""

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import single_image
from n2n import config as config_lib
from n2n.data import single_image_pairs as pairs
from n2n.training import distribute
from n2n.training import trainer as trainer_lib
from n2n.training import train_lib


@pytest.mark.parametrize('overrides, message', [
    (dict(method='blind_spot', target='clean'),
     '--target=clean trains on clean targets; --method=blind_spot trains from single noisy '
     'images'),
    (dict(method='neighbor2neighbor', crop_size=96),
     '--crop_size=96: --method=neighbor2neighbor needs a multiple of 64: its half-size '
     'sub-images'),
    (dict(method='blind_spot', loss='l1'), '--loss=l1: --method=blind_spot takes the loss'),
    # l2 is gaussian's own loss: blind-spot used to rewrite it to masked_l2 quietly.
    (dict(method='blind_spot', loss='l2'), '--loss=l2: --method=blind_spot takes the loss'),
    (dict(method='neighbor2neighbor', noise='bernoulli'), '--noise=bernoulli needs the target'),
])
def test_settings_that_make_no_sense_together_are_refused_in_one_line(overrides, message):
  values = dict(train_data='x', model_dir='y', crop_size=64)
  values.update(overrides)
  with pytest.raises(ValueError, match=message.replace('(', r'\(').replace(')', r'\)')):
    config_lib.train_config(**values)
  assert config_lib.train_config(train_data='x', model_dir='y',
                                method='blind_spot').method.loss == 'masked_l2'


def test_a_pixel_shuffle_runs_loss_is_the_mean_over_every_sub_image():
  """With stride 2 each of the 2 crops becomes 4 sub-images (n2n/data/pixel_shuffle.py):
  the reported loss is the masked error averaged over the 8 of them, not their
  sum over the 2 crops."""
  config = config_lib.train_config(train_data='x', model_dir='y', method='blind_spot',
                                   crop_size=64, batch_size=2, train_steps=4,
                                   blind_spot_stride=2, blind_spot_fraction=0.05,
                                   precision='float32', seed=5, gradient_clip_multiple=0.0)
  trainer = trainer_lib.Trainer(config, distribute.create_strategy('default'), 'float32')
  noisy = tf.data.Dataset.from_tensors(tf.random.stateless_uniform([2, 64, 64, 3], [4, 2]))
  from n2n.pipelines import registry as pipelines  # pylint: disable=g-import-not-at-top
  elements = pipelines.get('blind_spot').elements_dataset(
      noisy, tf.constant([1, 2], tf.int64), config)
  batch = next(iter(elements))
  assert batch['input'].shape == (8, 32, 32, 3)
  trainer.attach_dataset(tf.data.Dataset.from_tensors(batch).repeat())
  prediction = trainer.model(batch['input'], training=True).numpy()
  mask = batch['target_mask'].numpy()
  errors = [np.sum(mask[i] * np.square(prediction[i] - batch['target'].numpy()[i]))
            / (mask[i].sum() * 3) for i in range(8)]
  np.testing.assert_allclose(trainer.train(1).loss, np.mean(errors), rtol=1e-4)


def test_the_trainer_adds_the_weighted_regulariser_to_the_neighbor2neighbor_loss():
  """One step's reported loss against the loss computed here from the same
  network and batch: the reconstruction error plus gamma * step_fraction times
  the regulariser, the sub-images taken by explicit indexing."""
  gamma, batch_size = 1.5, 2
  config = config_lib.train_config(train_data='x', model_dir='y', method='neighbor2neighbor',
                                   crop_size=64, batch_size=batch_size, train_steps=4,
                                   neighbor2neighbor_gamma=gamma, precision='float32', seed=5,
                                   gradient_clip_multiple=0.0)
  trainer = trainer_lib.Trainer(config, distribute.create_strategy('default'), 'float32')
  noisy = tf.random.stateless_uniform([batch_size, 64, 64, 3], [4, 2])
  batch = pairs.neighbor2neighbor_pair(noisy, tf.constant([6, 7]))
  trainer.attach_dataset(tf.data.Dataset.from_tensors(batch).repeat())
  trainer.optimizer.iterations.assign(2)  # half-way: the weight is gamma / 2
  full = trainer.model(noisy, training=True).numpy()
  prediction = trainer.model(batch['input'], training=True).numpy()
  target, positions = batch['target'].numpy(), batch['positions'].numpy()
  rows, columns = np.mgrid[0:32, 0:32]

  def sub_image(images, which):
    cell = positions[..., which]  # [B, 32, 32] in 0..3: 0 1 / 2 3
    return np.stack([images[b, 2 * rows + cell[b] // 2, 2 * columns + cell[b] % 2]
                     for b in range(batch_size)])

  reconstruction = np.mean(np.square(prediction - target), axis=(1, 2, 3))
  regulariser = np.mean(np.square(prediction - target - (sub_image(full, 0) - sub_image(full, 1))),
                        axis=(1, 2, 3))
  assert regulariser.min() > 1e-3  # the term is not negligible at these weights
  expected = np.sum(reconstruction + gamma * 0.5 * regulariser) / batch_size
  stats = trainer.train(1)
  np.testing.assert_allclose(stats.loss, expected, rtol=1e-4)


# The short runs' bounds (bench/recipes/single_image.py: their settings). At half the
# paper's width, over seeds 1-6 (python -m bench.learning_test_spread
# --tests=single_image_neighbor2neighbor,single_image_blind_spot;
# docs/bench/learning_test_spread_single_image_w24.json) they gained 2.6-3.2 dB
# (Neighbor2Neighbor) and 3.2-3.6 dB (blind-spot), against the bound of 2 dB, with
# held-out ratios of 0.04-0.10 against 0.3. The settings before (width 48, 60 and 200
# steps) gained 1.2-2.4 and 2.3-3.1 dB: only seed 1, the test's, cleared 2 dB with
# Neighbor2Neighbor (docs/bench/learning_test_spread_single_image_w48.json).
MIN_GAIN_DB = 2.0
MAX_HELD_OUT_RATIO = 0.3  # the trained network's reference-free score over the untrained one's


@pytest.mark.slow
@pytest.mark.parametrize('method', single_image.SHORT_RUNS)
def test_a_short_run_on_single_noisy_images_lowers_the_loss_and_gains_psnr(
    method, tfrecord_dir, image_folder, tmp_path):
  steps = single_image.SHORT_RUNS[method]['train_steps']
  result = single_image.short_run(image_folder, tfrecord_dir, tmp_path, method, 1, steps,
                                  single_image.NETWORK_WIDTH)
  assert result['gain_db'] > MIN_GAIN_DB, result
  # The reference-free score fell as the PSNR rose: below the untrained network's.
  assert result['held_out_ratio'] < MAX_HELD_OUT_RATIO, result
  losses = result['losses']
  assert len(losses) == steps // 10 and losses[-1] < losses[0], losses


def test_every_capture_of_a_scene_dataset_is_a_training_image(tmp_path):
  from n2n.data import native_images  # pylint: disable=g-import-not-at-top
  from n2n.data import scene_writer  # pylint: disable=g-import-not-at-top
  from n2n.data import simulated_scenes  # pylint: disable=g-import-not-at-top
  from bench.recipes.images import smooth_image  # pylint: disable=g-import-not-at-top
  (tmp_path / 'clean').mkdir()
  (tmp_path / 'clean' / 'a.png').write_bytes(native_images.encode_pages(
      [smooth_image(np.random.default_rng(0), 80, 96)], 'png'))
  simulated_scenes.write_scenes(str(tmp_path / 'clean'), str(tmp_path / 'raw'), captures=3,
                                reference=False)
  scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'records'))
  config = config_lib.train_config(train_data=str(tmp_path / 'records'), model_dir='unused',
                                  noise='none', method='neighbor2neighbor', crop_size=64,
                                  batch_size=2, seed=3)
  config = config_lib.resolve_data(config, 3, 'uint16', 65535.0)
  element = next(iter(train_lib.build_dataset(config, 2, cache=False)))
  assert element['full'].shape == (2, 64, 64, 3) and element['input'].shape == (2, 32, 32, 3)
  # 16-bit captures on the 0-1 scale, noisy: no two crops alike.
  full = element['full'].numpy()
  assert 0.0 <= full.min() and full.max() <= 1.0 and np.abs(full[0] - full[1]).mean() > 0.01


@pytest.mark.slow
def test_a_noisy_image_dataset_trains_only_with_a_single_image_method(tmp_path):
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  from n2n.data import native_images  # pylint: disable=g-import-not-at-top
  from n2n.training import preflight  # pylint: disable=g-import-not-at-top
  from bench.recipes.images import smooth_image  # pylint: disable=g-import-not-at-top
  from tests.conftest import REPO_ROOT  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(4)
  folder = tmp_path / 'noisy'
  (folder / 'day2').mkdir(parents=True)
  gray16 = smooth_image(rng, 70, 72, 1)[:, :, 0].astype(np.uint16) * 200
  for name, page in (('a.png', gray16), ('day2/b.png', gray16 + 7), ('c.tif', gray16 + 9)):
    (folder / name).write_bytes(native_images.encode_pages([page], native_images.family_of(name)))
  result = subprocess.run(
      [sys.executable, 'datasets/make_tfrecords.py', '--noisy_images', f'--input_dir={folder}',
       f'--output_dir={tmp_path / "records"}'], cwd=REPO_ROOT, capture_output=True, text=True,
      timeout=120)
  assert result.returncode == 0, result.stderr[-2000:]
  import json  # pylint: disable=g-import-not-at-top
  manifest = json.loads((tmp_path / 'records' / 'manifest.json').read_text())
  assert manifest['kind'] == 'noisy_images' and manifest['num_images'] == 3
  assert (manifest['dtype'], manifest['channels']) == ('uint16', 1)
  strategy = distribute.create_strategy('default')
  pairs = config_lib.train_config(train_data=str(tmp_path / 'records'),
                                 model_dir=str(tmp_path / 'r'), noise='none', crop_size=64)
  with pytest.raises(ValueError, match=r'--method=pairs needs two captures of each scene, but '
                     r'--train_data holds single noisy images \(datasets/make_tfrecords.py '
                     r'--noisy_images\); train them with --method=neighbor2neighbor or '
                     r'--method=blind_spot'):
    preflight.check_training_inputs(pairs, strategy)
  single = config_lib.train_config(train_data=str(tmp_path / 'records'),
                                  model_dir=str(tmp_path / 'r'), noise='none', crop_size=64,
                                  batch_size=2, method='blind_spot', blind_spot_stride=1,
                                  blind_spot_line='none')
  checked = preflight.check_training_inputs(single, strategy)
  assert (checked.config.data.dtype, checked.config.model.channels) == ('uint16', 1)
  element = next(iter(train_lib.build_dataset(checked.config, 2, cache=False)))
  assert element['input'].shape == (2, 64, 64, 1) and element['target_mask'].shape == (2, 64, 64, 1)
  both = subprocess.run(
      [sys.executable, 'datasets/make_tfrecords.py', '--noisy_images', '--scenes',
       f'--input_dir={folder}', f'--output_dir={tmp_path / "x"}'], cwd=REPO_ROOT,
      capture_output=True, text=True, timeout=120)
  assert both.returncode == 1 and both.stderr.strip().splitlines()[-1] == (
      'make_tfrecords.py: error: --scenes and --noisy_images describe different folders; pass one')
