"""The 3D U-Net (spatial_dims=3): shape, weights, gradients and its reach along z, y and x."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from n2n.model import conv
from n2n.model import receptive_field
from n2n.model import unet


def test_3d_unet_has_the_2d_layers_with_3x3x3_kernels():
  # The 2D RGB network has 991,203 parameters: 1,203 biases (7 x 48 + 8 x 96 +
  # 64 + 32 + 3) and 9 taps x 110,000 input-output channel pairs. A 3x3x3
  # kernel has 27 taps for the same pairs.
  network = unet.build_unet(3, spatial_dims=3, z_pools=3)
  assert network.count_params() == 27 * 110000 + 1203
  output = network(tf.zeros([1, 8, 32, 64, 3]))
  assert output.shape == (1, 8, 32, 64, 3) and output.dtype == tf.float32


@pytest.mark.parametrize('z_pools, depth', [(0, 1), (2, 4), (5, 32)])
def test_depth_needs_only_a_multiple_of_the_z_pooling_stages(z_pools, depth):
  assert unet.depth_multiple(z_pools) == depth
  network = unet.build_unet(1, spatial_dims=3, z_pools=z_pools)
  assert network(tf.zeros([1, depth, 32, 32, 1])).shape == (1, depth, 32, 32, 1)
  pools = [layer for layer in network.layers if isinstance(layer, keras.layers.MaxPooling3D)]
  assert [tuple(layer.pool_size)[0] for layer in pools] == [1] * (5 - z_pools) + [2] * z_pools


# The resolution level each convolution works at, written from the paper's
# figure (level 0: the input's; each pooling stage one level down).
LEVELS = {'enc_conv0': 0, 'enc_conv1': 0, 'enc_conv2': 1, 'enc_conv3': 2, 'enc_conv4': 3,
          'enc_conv5': 4, 'enc_conv6': 5, 'dec_conv5a': 4, 'dec_conv5b': 4, 'dec_conv4a': 3,
          'dec_conv4b': 3, 'dec_conv3a': 2, 'dec_conv3b': 2, 'dec_conv2a': 1, 'dec_conv2b': 1,
          'dec_conv1a': 0, 'dec_conv1b': 0, 'dec_conv1': 0}


@pytest.mark.parametrize('xy_conv_levels', range(7))
def test_the_finest_levels_convolve_in_plane_and_the_others_in_3d(xy_conv_levels):
  network = unet.build_unet(1, spatial_dims=3, width=4, xy_conv_levels=xy_conv_levels)
  kernels = {layer.name: tuple(layer.kernel.shape[:3]) for layer in network.layers
             if isinstance(layer, keras.layers.Conv3D)}
  assert set(kernels) == set(LEVELS)
  for name, level in LEVELS.items():
    assert kernels[name] == ((1, 3, 3) if level < xy_conv_levels else (3, 3, 3)), name
  assert network(tf.zeros([1, 8, 32, 32, 1])).shape == (1, 8, 32, 32, 1)


def test_3d_network_refuses_what_it_does_not_have():
  with pytest.raises(ValueError, match='max_pool'):
    unet.build_unet(1, spatial_dims=3, downsampling='max_blur_pool')
  with pytest.raises(ValueError, match='--z_pools=6'):
    unet.build_unet(1, spatial_dims=3, z_pools=6)
  with pytest.raises(ValueError, match='--spatial_dims=4'):
    unet.build_unet(1, spatial_dims=4)
  with pytest.raises(ValueError, match=r'^--xy_conv_levels=7 must be 0 to 6$'):
    unet.build_unet(1, spatial_dims=3, xy_conv_levels=7)
  with pytest.raises(ValueError, match=r'^--xy_conv_levels=2 shapes the 3D network only'):
    unet.build_unet(1, spatial_dims=2, xy_conv_levels=2)


@pytest.mark.parametrize('kernel_depth', [3, 1])  # 1: the in-plane levels' kernels
def test_conv3d_gradients_match_tensorflows_own(kernel_depth):
  rng = np.random.default_rng(0)
  inputs = tf.constant(rng.normal(size=(2, 5, 12, 10, 3)), tf.float32)
  kernel = tf.constant(rng.normal(size=(kernel_depth, 3, 3, 3, 4)), tf.float32)
  bias = tf.constant(rng.normal(size=(4,)), tf.float32)
  output_gradient = tf.constant(rng.normal(size=(2, 5, 12, 10, 4)), tf.float32)

  def gradients(function):
    with tf.GradientTape() as tape:
      tape.watch([inputs, kernel, bias])
      outputs = function(inputs, kernel, bias)
    return outputs, tape.gradient(outputs, [inputs, kernel, bias], output_gradient)

  stock = lambda x, k, b: tf.nn.bias_add(tf.nn.conv3d(x, k, [1] * 5, 'SAME'), b)
  ours_out, ours = gradients(conv.conv3d_same_with_bias)
  stock_out, reference = gradients(stock)
  np.testing.assert_allclose(ours_out.numpy(), stock_out.numpy(), rtol=1e-5, atol=1e-4)
  for name, got, want in zip(('inputs', 'kernel', 'bias'), ours, reference):
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5 * np.abs(want).max(),
                               err_msg=name)


@pytest.mark.parametrize('kernel_depth', [3, 1])  # 1: through the 2D op over the planes
def test_conv3d_bfloat16_gradients_are_summed_in_float32(kernel_depth):
  # 4 x 16 x 64 x 64 terms of ~5e-4 per channel: a bfloat16 running sum stalls near 1.
  # TensorFlow's own kernels sum in bfloat16 only on hosts without AVX512-BF16 or
  # AMX (n2n/model/conv.py): there (the AVX2 hosts) this fails without the float32
  # sums; on the others it passes either way.
  rng = np.random.default_rng(1)
  inputs = tf.constant(rng.uniform(size=(4, 16, 64, 64, 2)), tf.bfloat16)
  kernel = tf.constant(rng.normal(size=(kernel_depth, 3, 3, 2, 3)), tf.bfloat16)
  bias = tf.zeros([3], tf.bfloat16)
  output_gradient = tf.constant(rng.uniform(0, 1e-3, size=(4, 16, 64, 64, 3)), tf.bfloat16)
  with tf.GradientTape() as tape:
    tape.watch([kernel, bias])
    outputs = conv.conv3d_same_with_bias(inputs, kernel, bias)
  kernel_gradient, bias_gradient = tape.gradient(outputs, [kernel, bias], output_gradient)
  wide = lambda tensor: tf.cast(tensor, tf.float64)
  exact_bias = tf.reduce_sum(wide(output_gradient), axis=[0, 1, 2, 3]).numpy()
  exact_kernel = tf.raw_ops.Conv3DBackpropFilterV2(
      input=wide(inputs), filter_sizes=kernel.shape, out_backprop=wide(output_gradient),
      strides=[1] * 5, padding='SAME').numpy()
  np.testing.assert_allclose(wide(bias_gradient).numpy(), exact_bias, rtol=1e-2)
  np.testing.assert_allclose(wide(kernel_gradient).numpy(), exact_kernel, rtol=2e-2)


def _probe_network(z_pools, xy_conv_levels=0):
  """The 3D network with non-negative kernels and zero biases, output before
  'uncentre': a positive impulse on a 0.5 (centred: zero) volume changes
  exactly the outputs it reaches, by a positive amount (see the 2D halo test).
  Width 8: the reach depends on the kernels' shapes, not on how many channels
  they have (every weight positive, each channel carries the impulse)."""
  model = unet.build_unet(1, seed=1, spatial_dims=3, z_pools=z_pools,
                          xy_conv_levels=xy_conv_levels, width=8)
  for weight in model.weights:
    if len(weight.shape) == 5:
      weight.assign(np.full(weight.shape, 1.0 / weight.shape[3], np.float32))
    else:
      weight.assign(np.zeros(weight.shape, np.float32))
  return keras.Model(model.input, model.get_layer('to_float32').output)


def _reach(changes, axis, centre):
  """(before, after): how far the reached outputs extend along `axis` from `centre`."""
  other = tuple(index for index in range(changes.ndim) if index != axis)
  reached = np.nonzero(changes.max(axis=other) > 0)[0]
  assert 0 < reached.min() and reached.max() < changes.shape[axis] - 1  # clear of the border
  assert reached.max() - reached.min() + 1 == len(reached)  # one block, no gaps
  return centre - reached.min(), reached.max() - centre


@pytest.mark.slow
def test_3d_receptive_field_matches_a_one_voxel_probe_along_z_y_and_x():
  z_pools = 3
  network = _probe_network(z_pools)
  pooled_z = unet.z_pooled_stages(z_pools)
  # Along z: every position on the 8-plane pooling grid, each its own volume.
  depth, centre = 128, 56  # a multiple of 8: phase 0 on the grid
  phases = unet.depth_multiple(z_pools)
  volumes = np.full((phases, depth, 32, 32, 1), 0.5, np.float32)
  for phase in range(phases):
    volumes[phase, centre + phase, 16, 16, 0] = 1.5
  changes = network(volumes).numpy()[..., 0]
  assert changes.min() == 0.0
  expected = receptive_field.reaches('max_pool', pooled_z)
  assert [_reach(changes[phase], 0, centre + phase) for phase in range(phases)] == expected
  # Along y and x: a few positions on the 32-pixel grid (the 2D test covers all).
  size, centre = 384, 160  # centre on the pooling grid (a multiple of 32)
  expected_xy = receptive_field.reaches('max_pool')
  for phase in (0, 13, 31):
    for axis in (1, 2):
      shape = [8, 32, 32]
      shape[axis] = size
      volume = np.full([1] + shape + [1], 0.5, np.float32)
      position = [4, 16, 16]
      position[axis] = centre + phase
      volume[(0, *position, 0)] = 1.5
      reach = _reach(network(volume).numpy()[0, ..., 0], axis, centre + phase)
      assert reach == expected_xy[phase], (axis, phase)
  assert receptive_field.volume_halo(z_pools) == (max(max(pair) for pair in expected),
                                                  max(max(pair) for pair in expected_xy),
                                                  max(max(pair) for pair in expected_xy))


@pytest.mark.slow
# 4: in-plane levels that z pooling has already reached (stage 3 pools z at z_pools=3).
@pytest.mark.parametrize('xy_conv_levels', [2, 4, 6])
def test_in_plane_levels_shorten_the_reach_along_z_as_counted(xy_conv_levels):
  z_pools = 3
  network = _probe_network(z_pools, xy_conv_levels)
  depth, centre = 128, 56
  phases = unet.depth_multiple(z_pools)
  volumes = np.full((phases, depth, 32, 32, 1), 0.5, np.float32)
  for phase in range(phases):
    volumes[phase, centre + phase, 16, 16, 0] = 1.5
  changes = network(volumes).numpy()[..., 0]
  found = [_reach(changes[phase], 0, centre + phase) for phase in range(phases)]
  assert found == receptive_field.reaches('max_pool', unet.z_pooled_stages(z_pools),
                                          receptive_field.z_spread(xy_conv_levels))
  # Fewer planes than the all-3D network: the in-plane levels add no reach along z.
  assert max(max(pair) for pair in found) == receptive_field.volume_halo(
      z_pools, xy_conv_levels)[0] < receptive_field.volume_halo(z_pools)[0]
