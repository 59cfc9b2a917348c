import numpy as np
import pytest
import tensorflow as tf

from n2n.corruptions import noise
from n2n.corruptions import text_glyphs
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
  for name in text_glyphs.FONT_NAMES:
    glyphs = text_glyphs.load_glyphs(name)
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
  tables = text_glyphs.ink_tables([glyphs])
  assert tables['count'][1] == 2 and tables['count'][0] == 0
  start = tables['start'][1]
  assert list(zip(tables['y'][start:start + 2], tables['x'][start:start + 2])) == [(0, 1), (2, 0)]
  assert list(tables['cell_height']) == [3] and list(tables['cell_width']) == [2]


def test_strings_to_draw_keeps_the_last_string_only_when_it_lands_closer():
  counts = tf.constant([[30.0, 30.0, 30.0]] * 3)
  drawn, achieved, reached = text_render.strings_to_draw(
      tf.constant([0.5, 0.4, 0.95]), tf.zeros([3]), counts, tf.constant(100.0),
      tf.constant([3, 3, 3]))
  # 0.5: 0.6 is closer than 0.3, keep 2; 0.4: 0.3 is closer than 0.6, keep 1;
  # 0.95: not reached in this chunk, all 3 drawn.
  assert drawn.numpy().tolist() == [2, 1, 3]
  np.testing.assert_allclose(achieved.numpy(), [0.6, 0.3, 0.9], rtol=1e-6)
  assert reached.numpy().tolist() == [True, True, False]


def test_strings_wanted_grows_with_the_missing_coverage():
  wanted = text_render.strings_wanted(tf.constant([0.1, 0.5, 0.5]), tf.constant([0.0, 0.0, 0.45]),
                                      tf.constant(256), tf.constant(256)).numpy()
  assert wanted[1] > wanted[0] > wanted[2] >= 1
