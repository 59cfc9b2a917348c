import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import input_pipeline


def _config(tfrecord_dir, **overrides):
  values = dict(train_data=str(tfrecord_dir / '*.tfrecord'), val_data='', model_dir='unused',
                crop_size=32, batch_size=4, crops_per_image=2)
  values.update(overrides)
  return config_lib.TrainConfig(**values)


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


def test_sharding_by_input_context_splits_the_data(tfrecord_dir):
  config = _config(tfrecord_dir)
  names = []
  for pipeline_id in range(2):
    context = tf.distribute.InputContext(2, pipeline_id, 2)
    files = input_pipeline.list_files(config.train_data)
    dataset = tf.data.Dataset.from_tensor_slices(files).shard(2, pipeline_id)
    names.append(sorted(dataset.as_numpy_iterator()))
    batch = next(iter(input_pipeline.build_train_dataset(config, 2, True, 0, context)))
    assert batch['input'].shape == (2, 32, 32, 3)
  assert not set(names[0]) & set(names[1])


def test_random_crops_shape():
  image = tf.zeros([50, 70, 3], tf.uint8)
  assert input_pipeline.random_crops(image, 32, 3, tf.constant([1, 2])).shape == (3, 32, 32, 3)


def test_glob_matching_nothing_names_the_flag_and_glob(tmp_path):
  with pytest.raises(ValueError, match=r"--train_data: no file matches '.*nothing-\*'"):
    input_pipeline.list_files(str(tmp_path / 'nothing-*'))


def test_eval_images_from_folder_skip_non_images(image_folder):
  images = input_pipeline.load_eval_images(str(image_folder))
  names = [name for name, _ in images]
  assert 'broken.png' not in names and len(names) == 6
  assert all(image.shape[-1] == 3 and image.dtype == np.uint8 for _, image in images)
  gray = input_pipeline.load_eval_images(str(image_folder), channels=1, max_images=2)
  assert len(gray) == 2 and gray[0][1].shape[-1] == 1


def test_eval_images_from_tfrecords(tfrecord_dir):
  images = input_pipeline.load_eval_images(str(tfrecord_dir / '*.tfrecord'))
  assert len(images) == 6


def test_eval_folder_without_images_is_an_error(tmp_path):
  (tmp_path / 'readme.txt').write_text('no images here')
  with pytest.raises(ValueError, match='--val_data: no readable image in'):
    input_pipeline.load_eval_images(str(tmp_path))


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
