import numpy as np
import pytest
import tensorflow as tf

from n2n.model import unet as model


def test_rgb_unet_has_the_papers_parameter_count_and_shapes():
  unet = model.build_unet(3)
  assert unet.count_params() == 991203
  output = unet(tf.zeros([2, 64, 96, 3]))
  assert output.shape == (2, 64, 96, 3) and output.dtype == tf.float32


def test_layer_widths_follow_the_paper():
  unet = model.build_unet(3)
  filters = {layer.name: layer.filters for layer in unet.layers if hasattr(layer, 'filters')}
  assert all(filters[f'enc_conv{i}'] == 48 for i in range(7))
  assert all(filters[f'dec_conv{i}{ab}'] == 96 for i in range(2, 6) for ab in 'ab')
  assert (filters['dec_conv1a'], filters['dec_conv1b'], filters['dec_conv1']) == (64, 32, 3)


@pytest.mark.parametrize('width, expected', [
    # Written out by hand: encoder, decoder (2x), dec_conv1a (4/3), dec_conv1b (2/3).
    (24, (24, 48, 32, 16)),
    (16, (16, 32, 21, 11)),
    (1, (1, 2, 1, 1)),
])
@pytest.mark.parametrize('spatial_dims', [2, 3])
def test_a_narrower_unet_scales_every_layer_by_the_papers_ratios(width, expected, spatial_dims):
  unet = model.build_unet(1, spatial_dims=spatial_dims, width=width)
  filters = {layer.name: layer.filters for layer in unet.layers if hasattr(layer, 'filters')}
  encoder, decoder, top_a, top_b = expected
  assert [filters[f'enc_conv{i}'] for i in range(7)] == [encoder] * 7
  assert [filters[f'dec_conv{i}{ab}'] for i in range(2, 6) for ab in 'ab'] == [decoder] * 8
  assert (filters['dec_conv1a'], filters['dec_conv1b'], filters['dec_conv1']) == (top_a, top_b, 1)
  shape = [1, 8, 32, 32, 1] if spatial_dims == 3 else [1, 32, 32, 1]
  assert unet(tf.zeros(shape)).shape == shape


def test_a_unet_of_width_0_is_refused():
  with pytest.raises(ValueError, match='--network_width=0'):
    model.build_unet(3, width=0)


def test_grayscale_unet():
  unet = model.build_unet(1)
  assert unet(tf.zeros([1, 32, 32, 1])).shape == (1, 32, 32, 1)


@pytest.mark.parametrize('precision', ['mixed_bfloat16', 'mixed_float16'])
def test_mixed_precision_keeps_float32_variables_and_output(precision):
  unet = model.build_unet(3, precision)
  assert all(variable.dtype == 'float32' for variable in unet.trainable_variables)
  output = unet(tf.random.uniform([1, 32, 32, 3]))
  assert output.dtype == tf.float32
  assert np.all(np.isfinite(output.numpy()))


def test_seeded_initialisation_is_reproducible_and_layers_differ():
  first = model.build_unet(3, seed=7).get_weights()
  again = model.build_unet(3, seed=7).get_weights()
  other = model.build_unet(3, seed=8).get_weights()
  for a, b in zip(first, again):
    np.testing.assert_array_equal(a, b)
  assert not np.array_equal(first[0], other[0])
  # enc_conv1 and enc_conv2 have the same shape but must not share initial kernels.
  assert first[2].shape == first[4].shape and not np.array_equal(first[2], first[4])


def _filter_gradient_paddings(graph):
  return sorted(op.get_attr('padding').decode() for op in graph.get_operations()
                if op.type == 'Conv2DBackpropFilter')


def test_tiled_filter_gradients_change_only_how_gradients_are_summed():
  # 160x160 is above conv.TILE_ABOVE_PIXELS, so the full-resolution layers tile.
  images = tf.random.uniform([1, 160, 160, 3], seed=3)
  gradients, paddings = [], []
  for mode in ('direct', 'tiled'):
    unet = model.build_unet(3, seed=5, filter_gradient_mode=mode)

    @tf.function
    def gradient_of_loss(images, unet=unet):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(unet(images, training=True) - images))
      return tape.gradient(loss, unet.trainable_variables)

    gradients.append(gradient_of_loss(images))
    paddings.append(_filter_gradient_paddings(
        gradient_of_loss.get_concrete_function(images).graph))
  # Tiled gradients stack haloed tiles and convolve them 'VALID': the five
  # full-resolution convolutions (enc_conv0, enc_conv1, dec_conv1a/1b/1) tile,
  # the 13 smaller ones do not.
  assert paddings[0] == ['SAME'] * 18
  assert paddings[1] == ['SAME'] * 13 + ['VALID'] * 5
  for plain, tiled in zip(*gradients):
    scale = np.abs(plain.numpy()).max()
    np.testing.assert_allclose(tiled.numpy(), plain.numpy(), atol=1e-4 * scale)


def test_output_layer_has_gain_1_and_hidden_layers_he_gain():
  unet = model.build_unet(3, seed=11)
  # 3x3 kernels over 32 channels: fan_in 288; truncated normals keep the variance.
  output_std = unet.get_layer('dec_conv1').kernel.numpy().std()
  hidden_std = unet.get_layer('dec_conv1b').kernel.numpy().std()  # fan_in 576
  assert abs(output_std - np.sqrt(1.0 / 288)) < 0.1 * np.sqrt(1.0 / 288)
  assert abs(hidden_std - np.sqrt(2.0 / 576)) < 0.05 * np.sqrt(2.0 / 576)


def test_bfloat16_network_centres_its_input_in_float32():
  unet = model.build_unet(3, 'mixed_bfloat16', seed=0)
  centre = unet.get_layer('centre')
  # 0.5 + 2^-12 rounds to 0.5 in bfloat16; centred first, 2^-12 survives the cast.
  probe = tf.keras.Model(unet.input, centre.output)
  centred = probe(tf.fill([1, 32, 32, 3], 0.5 + 2.0**-12))
  assert centred.dtype == tf.float32
  assert float(tf.cast(tf.cast(centred, tf.bfloat16), tf.float32)[0, 0, 0, 0]) == 2.0**-12


def test_max_blur_pool_halves_like_max_pool_but_does_not_jump_with_the_pixel_grid():
  from n2n.model import conv  # pylint: disable=g-import-not-at-top
  pool = conv.MaxBlurPool2D()
  flat = pool(tf.fill([1, 8, 8, 2], 0.7))
  assert flat.shape == (1, 4, 4, 2)
  np.testing.assert_allclose(flat.numpy(), 0.7, rtol=1e-6)  # the blur keeps levels
  # A one-pixel bright line: max pooling's output depends on the line's phase
  # (both rows of a cell give the same), the blurred pool's moves with it.
  line = lambda row: tf.tensor_scatter_nd_update(tf.zeros([1, 16, 16, 1]),
                                                 [[0, row, column, 0] for column in range(16)],
                                                 tf.ones([16]))
  max_pool = tf.keras.layers.MaxPooling2D(2)
  np.testing.assert_array_equal(max_pool(line(6)), max_pool(line(7)))
  assert not np.array_equal(pool(line(6)).numpy(), pool(line(7)).numpy())
  # It blurs: a line spreads over more than one output row.
  assert (pool(line(7)).numpy()[0, :, 4, 0] > 0).sum() >= 2


def test_n2v2_options_change_the_network_as_n2v2_says():
  paper = model.build_unet(3, seed=1)
  n2v2 = model.build_unet(3, seed=1, downsampling='max_blur_pool', top_skip=False)
  names = {layer.name: type(layer).__name__ for layer in n2v2.layers}
  assert all(names[f'pool{stage}'] == 'MaxBlurPool2D' for stage in range(1, 6))
  assert 'concat1' not in names and 'concat1' in {layer.name for layer in paper.layers}
  # Without the top skip dec_conv1a takes the 96 upsampled channels, not 96 + 3.
  assert paper.get_layer('dec_conv1a').kernel.shape == (3, 3, 99, 64)
  assert n2v2.get_layer('dec_conv1a').kernel.shape == (3, 3, 96, 64)
  assert n2v2.count_params() == 991203 - 3 * 3 * 3 * 64
  output = n2v2(tf.random.uniform([2, 64, 96, 3]))
  assert output.shape == (2, 64, 96, 3) and output.dtype == tf.float32
  assert n2v2(tf.random.uniform([1, 32, 32, 3])).shape == (1, 32, 32, 3)
  bf16 = model.build_unet(3, 'mixed_bfloat16', downsampling='max_blur_pool', top_skip=False)
  assert np.isfinite(bf16(tf.random.uniform([1, 64, 64, 3])).numpy()).all()
