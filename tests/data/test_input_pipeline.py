import imageio.v3 as iio
import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import dataset_writer
from n2n.data import input_pipeline


def _config(tfrecord_dir, **overrides):
  values = dict(train_data=str(tfrecord_dir / '*.tfrecord'), val_data='', model_dir='unused',
                crop_size=32, batch_size=4, crops_per_image=2)
  values.update(overrides)
  return config_lib.train_config(**values)


def test_training_batches_have_static_per_replica_shapes(tfrecord_dir):
  dataset = input_pipeline.build_train_dataset(_config(tfrecord_dir), 4, cache=True)
  for batch in dataset.take(3):
    assert batch['input'].shape == (4, 32, 32, 3)
    assert batch['target'].shape == (4, 32, 32, 3)
  assert dataset.element_spec['input'].shape == (4, 32, 32, 3)


def test_pipeline_is_reproducible_and_start_step_changes_it(tfrecord_dir):
  config = _config(tfrecord_dir)
  first = next(iter(input_pipeline.build_train_dataset(config, 4, cache=False)))
  again = next(iter(input_pipeline.build_train_dataset(config, 4, cache=False)))
  resumed = next(iter(input_pipeline.build_train_dataset(config, 4, cache=False, start_step=100)))
  np.testing.assert_array_equal(first['input'], again['input'])
  assert not np.array_equal(first['input'], resumed['input'])


def test_input_and_target_are_independent_corruptions_of_one_crop(tfrecord_dir):
  batch = next(iter(input_pipeline.build_train_dataset(
      _config(tfrecord_dir, noise_range=(20.0, 20.0)), 4, cache=True)))
  residual = (batch['input'] - batch['target']).numpy()
  # Difference of two independent sigma-20 noises: std 20 * sqrt(2) / 255.
  assert abs(residual.std() - 20.0 * np.sqrt(2) / 255.0) < 0.01
  assert abs(np.corrcoef(batch['input'].numpy().ravel(), batch['target'].numpy().ravel())[0, 1]) < 0.99


def test_clean_target_baseline(tfrecord_dir):
  batch = next(iter(input_pipeline.build_train_dataset(
      _config(tfrecord_dir, target='clean'), 4, cache=True)))
  target = batch['target'].numpy()
  np.testing.assert_allclose(target * 255.0, np.round(target * 255.0), atol=1e-3)
  assert target.min() >= 0.0 and target.max() <= 1.0


@pytest.fixture(scope='module')
def flat_records(tmp_path_factory):
  """8 uniform 32x32 images, grey level 20 * index, in 4 shards: with 32x32 crops,
  no augmentation and no noise, each training example says which image it is."""
  folder = tmp_path_factory.mktemp('flat_images')
  for index in range(8):
    iio.imwrite(folder / f'flat{index}.png', np.full((32, 32, 3), 20 * index, np.uint8))
  output = tmp_path_factory.mktemp('flat_records')
  dataset_writer.write_dataset(str(folder), str(output), num_shards=4, min_size=32)
  return output


def _image_indices(records, count, start_step=0, context=None, **overrides):
  """Which images (20 * index grey) the first `count` single-example batches hold."""
  config = _config(records, crops_per_image=1, noise_range=(0.0, 0.0), target='clean',
                   augment_flips=False, augment_rotations=False,
                   augment_channel_permutations=False, **overrides)
  dataset = input_pipeline.build_train_dataset(config, 1, False, start_step, context)
  return [int(round(float(batch['input'].numpy().mean()) * 255.0 / 20.0))
          for batch in dataset.take(count)]


def test_sharding_by_input_context_gives_each_pipeline_its_own_images(flat_records):
  seen = [set(_image_indices(flat_records, 24, context=tf.distribute.InputContext(2, pipeline, 2)))
          for pipeline in range(2)]
  assert not seen[0] & seen[1]
  assert seen[0] | seen[1] == set(range(8))


def test_a_resumed_pipeline_reads_the_images_in_a_new_order(flat_records):
  first = _image_indices(flat_records, 16)
  assert first == _image_indices(flat_records, 16)
  assert _image_indices(flat_records, 16, start_step=100) != first


def test_random_crops_shape():
  image = tf.zeros([50, 70, 3], tf.uint8)
  assert input_pipeline.random_crops(image, 32, 3, tf.constant([1, 2])).shape == (3, 32, 32, 3)


def test_bernoulli_pairs_carry_the_target_mask(tfrecord_dir):
  batch = next(iter(input_pipeline.build_train_dataset(
      _config(tfrecord_dir, noise='bernoulli', noise_range=(0.5, 0.5)), 4, cache=True)))
  mask = batch['target_mask'].numpy()
  assert mask.shape == (4, 32, 32, 1) and abs(1.0 - mask.mean() - 0.5) < 0.1
  assert np.all(batch['target'].numpy()[np.broadcast_to(mask, (4, 32, 32, 3)) == 0] == 0.0)
  gaussian = next(iter(input_pipeline.build_train_dataset(_config(tfrecord_dir), 4, cache=True)))
  assert 'target_mask' not in gaussian


@pytest.mark.parametrize('noise', ['text', 'impulse', 'bernoulli'])
def test_every_corruption_feeds_the_pipeline(tfrecord_dir, noise):
  batch = next(iter(input_pipeline.build_train_dataset(
      _config(tfrecord_dir, noise=noise, noise_range=(0.3, 0.3)), 4, cache=True)))
  assert batch['input'].shape == (4, 32, 32, 3)
  assert not np.array_equal(batch['input'], batch['target'])
