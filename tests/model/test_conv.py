import keras
import numpy as np
import pytest
import tensorflow as tf

from n2n import hardware
from n2n.model import conv


def _reference_gradients(inputs, kernel, bias, output_gradient):
  """TensorFlow's own gradients of conv2d + bias_add, in float64."""
  inputs, kernel, bias, output_gradient = (
      tf.cast(t, tf.float64) for t in (inputs, kernel, bias, output_gradient))
  with tf.GradientTape() as tape:
    tape.watch([inputs, kernel, bias])
    outputs = tf.nn.bias_add(tf.nn.conv2d(inputs, kernel, 1, 'SAME'), bias)
  return tape.gradient(outputs, [inputs, kernel, bias], output_gradients=output_gradient)


def _our_gradients(inputs, kernel, bias, output_gradient, mode):
  with tf.GradientTape() as tape:
    tape.watch([inputs, kernel, bias])
    outputs = conv.conv2d_same_with_bias(inputs, kernel, bias, mode)
  return outputs, tape.gradient(outputs, [inputs, kernel, bias], output_gradients=output_gradient)


# 150 and 130 are not multiples of the tile size, so the last tiles are padded;
# the 5x5 kernel needs a 2-pixel halo.
@pytest.mark.parametrize('mode', conv.FILTER_GRADIENT_MODES)
@pytest.mark.parametrize('kernel_size', [3, 5])
def test_gradients_match_tensorflows_own(mode, kernel_size):
  rng = np.random.default_rng(0)
  inputs = tf.constant(rng.normal(size=(2, 150, 130, 5)), tf.float32)
  kernel = tf.constant(rng.normal(size=(kernel_size, kernel_size, 5, 7)), tf.float32)
  bias = tf.constant(rng.normal(size=(7,)), tf.float32)
  output_gradient = tf.constant(rng.normal(size=(2, 150, 130, 7)), tf.float32)

  outputs, ours = _our_gradients(inputs, kernel, bias, output_gradient, mode)
  reference = _reference_gradients(inputs, kernel, bias, output_gradient)

  expected_outputs = tf.nn.bias_add(tf.nn.conv2d(inputs, kernel, 1, 'SAME'), bias)
  np.testing.assert_allclose(outputs.numpy(), expected_outputs.numpy(), rtol=1e-5, atol=1e-4)
  for name, got, want in zip(('inputs', 'kernel', 'bias'), ours, reference):
    scale = np.abs(want.numpy()).max()
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5 * scale, err_msg=name)


def test_tiles_are_near_equal_and_cover_the_image():
  for size in (65, 128, 150, 256, 1000):
    tile, count = conv._tile_extent(size)  # pylint: disable=protected-access
    assert tile <= conv.TILE_SIZE and tile * count >= size > tile * (count - 1)


def test_bfloat16_bias_gradient_accumulates_in_float32():
  # 65,536 terms of ~5e-4 per channel: summed in bfloat16, the total stalls
  # near 1 (TensorFlow's own bfloat16 BiasAddGrad on CPU returns about 1 here).
  rng = np.random.default_rng(1)
  inputs = tf.constant(rng.uniform(size=(4, 128, 128, 2)), tf.bfloat16)
  kernel = tf.constant(rng.normal(size=(3, 3, 2, 4)), tf.bfloat16)
  bias = tf.zeros([4], tf.bfloat16)
  output_gradient = tf.constant(rng.uniform(0, 1e-3, size=(4, 128, 128, 4)), tf.bfloat16)

  exact = tf.reduce_sum(tf.cast(output_gradient, tf.float64), axis=[0, 1, 2]).numpy()
  _, reference_kernel, _ = _reference_gradients(inputs, kernel, bias, output_gradient)
  # The mode training picks on this CPU, and float32 (right everywhere).
  for mode in {hardware.filter_gradient_mode('mixed_bfloat16'), 'float32'}:
    _, (_, kernel_gradient, bias_gradient) = _our_gradients(inputs, kernel, bias,
                                                            output_gradient, mode)
    np.testing.assert_allclose(tf.cast(bias_gradient, tf.float64).numpy(), exact, rtol=1e-2)
    np.testing.assert_allclose(tf.cast(kernel_gradient, tf.float64).numpy(),
                               reference_kernel.numpy(), rtol=2e-2)


def test_layer_is_a_drop_in_for_keras_conv2d():
  ours = conv.Conv2DSame(6, 3, name='layer')
  theirs = keras.layers.Conv2D(6, 3, padding='same', name='layer')
  inputs = tf.random.uniform([1, 16, 16, 4])
  ours.build(inputs.shape)
  theirs.build(inputs.shape)
  assert [(v.path, v.shape) for v in ours.weights] == [(v.path, v.shape) for v in theirs.weights]
  theirs.set_weights(ours.get_weights())
  np.testing.assert_allclose(ours(inputs).numpy(), theirs(inputs).numpy(), atol=1e-5)


@pytest.mark.parametrize('bad', [dict(strides=2), dict(dilation_rate=2), dict(kernel_size=2)])
def test_layer_rejects_what_its_gradient_does_not_cover(bad):
  arguments = dict(filters=4, kernel_size=3)
  arguments.update(bad)
  with pytest.raises(ValueError, match='stride 1'):
    conv.Conv2DSame(**arguments)


def test_only_bfloat16_on_cpu_departs_from_the_stock_filter_gradient():
  if tf.config.list_logical_devices('GPU'):
    assert hardware.filter_gradient_mode('mixed_bfloat16') == 'direct'
  else:
    native = hardware.cpu_supports_bfloat16()
    assert hardware.filter_gradient_mode('mixed_bfloat16') == ('tiled' if native else 'float32')
  for precision in ('float32', 'mixed_float16'):
    assert hardware.filter_gradient_mode(precision) == 'direct'


def test_unknown_filter_gradient_mode_is_refused():
  with pytest.raises(ValueError, match="filter_gradient_mode='fast'"):
    conv.Conv2DSame(4, 3, filter_gradient_mode='fast')


@pytest.mark.parametrize('slope', [0.1, 0.0])
def test_leaky_relu_gradient_from_its_output_matches_tensorflows_own(slope):
  features = tf.constant([[-2.0, -1e-3, 0.0, 1e-3, 3.0]])
  output_gradient = tf.constant([[1.0, 2.0, 3.0, 4.0, 5.0]])
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(features)
    ours = conv.leaky_relu(features, slope)
    theirs = tf.nn.leaky_relu(features, slope)
  np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
  np.testing.assert_allclose(
      tape.gradient(ours, features, output_gradients=output_gradient).numpy(),
      tape.gradient(theirs, features, output_gradients=output_gradient).numpy())


def test_leaky_relu_layer_keeps_keras_semantics():
  layer = conv.LeakyReLU(negative_slope=0.1)
  np.testing.assert_allclose(layer(tf.constant([-1.0, 2.0])).numpy(), [-0.1, 2.0], rtol=1e-6)


@pytest.mark.parametrize('dtype', [tf.float32, tf.bfloat16])
def test_nearest_upsampling_equals_keras_upsampling_and_its_gradient(dtype):
  images = tf.cast(tf.random.uniform([2, 5, 7, 3], seed=1), dtype)
  policy = 'float32' if dtype == tf.float32 else 'mixed_bfloat16'
  ours = conv.NearestUpSampling2D(2, dtype=policy)
  theirs = keras.layers.UpSampling2D(2, interpolation='nearest', dtype=policy)
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(images)
    ours_out, theirs_out = ours(images), theirs(images)
  assert ours_out.dtype == dtype and ours_out.shape == (2, 10, 14, 3)
  np.testing.assert_array_equal(ours_out.numpy(), theirs_out.numpy())
  weights = tf.cast(tf.random.uniform([2, 10, 14, 3], seed=2), dtype)
  np.testing.assert_allclose(
      tf.cast(tape.gradient(ours_out, images, output_gradients=weights), tf.float32).numpy(),
      tf.cast(tape.gradient(theirs_out, images, output_gradients=weights), tf.float32).numpy(),
      rtol=1e-2 if dtype == tf.bfloat16 else 1e-6)
