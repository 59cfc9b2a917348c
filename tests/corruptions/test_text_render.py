import numpy as np
import pytest
import tensorflow as tf

from n2n.corruptions import noise
from n2n.corruptions import text_render


def _coverage(size, p, seed):
  # Background outside [0, 1]: every pixel text touches visibly changes.
  image = tf.fill([size, size, 3], -1.0)
  noisy = noise.corrupt(image, 'text', p, tf.constant([0, seed]))
  return float(tf.reduce_mean(tf.cast(tf.reduce_any(noisy != image, axis=-1), tf.float32)))


def test_graph_has_no_python_function_ops():
  traced = tf.function(lambda image, p, seed: noise.corrupt(image, 'text', p, seed))
  graph = traced.get_concrete_function(
      tf.TensorSpec([None, None, 3], tf.float32), tf.TensorSpec([], tf.float32),
      tf.TensorSpec([2], tf.int32)).graph.as_graph_def()
  op_types = {node.op for node in graph.node}
  for function in graph.library.function:
    op_types.update(node.op for node in function.node_def)
  assert 'While' in op_types or 'StatelessWhile' in op_types
  assert not op_types & {'PyFunc', 'PyFuncStateless', 'EagerPyFunc'}


@pytest.mark.parametrize('p', [0.05, 0.25, 0.5])
def test_coverage_lands_within_0_03_of_the_request_on_256x256(p):
  for seed in range(3):
    assert abs(_coverage(256, p, seed) - p) <= 0.03


def test_text_is_seeded_and_coloured():
  image = tf.fill([64, 64, 3], 0.5)
  first = noise.corrupt(image, 'text', 0.3, tf.constant([1, 1])).numpy()
  again = noise.corrupt(image, 'text', 0.3, tf.constant([1, 1])).numpy()
  other = noise.corrupt(image, 'text', 0.3, tf.constant([1, 2])).numpy()
  np.testing.assert_array_equal(first, again)
  assert not np.array_equal(first, other)
  changed = first[np.any(first != 0.5, axis=-1)]
  assert len(np.unique(np.round(changed, 4), axis=0)) > 3  # several string colours
  assert first.min() >= 0.0 and first.max() <= 1.0


def test_zero_coverage_is_identity_and_grayscale_works():
  image = tf.random.uniform([40, 50, 1], seed=3)
  np.testing.assert_array_equal(noise.corrupt(image, 'text', 0.0, tf.constant([0, 0])), image)
  assert noise.corrupt(image, 'text', 0.2, tf.constant([0, 0])).shape == (40, 50, 1)


def test_text_in_parallel_dataset_map():
  dataset = tf.data.Dataset.range(4).map(
      lambda index: noise.corrupt(tf.fill([32, 32, 3], 0.5), 'text', 0.2,
                                  tf.stack([tf.constant(0, tf.int64), index])),
      num_parallel_calls=4)
  assert len(list(dataset.as_numpy_iterator())) == 4


def test_glyph_atlases_load():
  for name in text_render.FONT_NAMES:
    glyphs = text_render.load_glyphs(name)
    assert glyphs.shape[0] == 95 and set(np.unique(glyphs)) == {0.0, 1.0}
    assert glyphs[0].sum() == 0  # the space character has no ink


def test_a_batch_gets_each_image_its_own_coverage_and_strings():
  overlay = text_render.make_text_overlay()
  images = tf.fill([4, 128, 128, 3], -1.0)
  requested = np.array([0.0, 0.1, 0.3, 0.5], np.float32)
  noisy = overlay(images, tf.constant(requested), tf.constant([5, 6])).numpy()
  covered = np.any(noisy != -1.0, axis=-1)
  np.testing.assert_array_equal(noisy[0], -1.0)  # zero coverage draws nothing
  np.testing.assert_allclose(covered.mean(axis=(1, 2)), requested, atol=0.03)
  assert not np.array_equal(covered[2], covered[3])


def test_ink_tables_list_every_glyph_pixel():
  glyphs = np.zeros([95, 3, 2], np.float32)
  glyphs[1, 0, 1] = glyphs[1, 2, 0] = 1.0  # '!' has two ink pixels
  tables = text_render.ink_tables([glyphs])
  assert tables['count'][1] == 2 and tables['count'][0] == 0
  start = tables['start'][1]
  assert list(zip(tables['y'][start:start + 2], tables['x'][start:start + 2])) == [(0, 1), (2, 0)]
  assert list(tables['cell_height']) == [3] and list(tables['cell_width']) == [2]
