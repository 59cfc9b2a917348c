"""n2n's U-Net (n2n/model/unet.py build_unet) in stock Keras 3 layers, for any Keras backend.

build_unet's convolutions and activations are Keras layers whose calls and
gradients are written in TensorFlow (n2n/model/conv.py), so its network runs
where TensorFlow does. A machine that has JAX but no TensorFlow (the GPU
machines bench/volumes_gpu.py runs on: TensorFlow's wheel and its CUDA
libraries do not travel there) gets the same network from this module: the
same layers, names, shapes and initial weights' distribution, built from
keras.layers only. tests/test_portable_unet.py loads build_unet's weights
into it by name and checks that both map the same input to the same output,
in 2D and 3D.

What it leaves out: the 2D network's other down- and upsampling (N2V2's
max-blur pool, 'resize'), top_skip=False and in-plane 3D levels; only the
paper's network (and its 3D form) as the results page trains it.
"""

import keras

# build_unet's widths and z pooling rule (n2n/model/unet.py layer_widths, z_pooled_stages),
# restated here because importing n2n.model imports TensorFlow.
STAGES = 5


def layer_widths(width):
  """(encoder, decoder, dec_conv1a, dec_conv1b) channels, as unet.layer_widths."""
  return width, 2 * width, round(4 * width / 3), round(2 * width / 3)


def build(channels=1, spatial_dims=2, width=48, z_pools=3, precision='float32', seed=None):
  """The paper's U-Net as a keras.Model of stock layers.

  Args:
    channels: image channels in and out.
    spatial_dims: 2 ([B, H, W, C]; H, W multiples of 32) or 3 ([B, D, H, W, C];
      D a multiple of 2**z_pools).
    width: the encoder's channels (48 in the paper).
    z_pools: 3D only: how many of the five pooling stages (the last ones) pool z.
    precision: a Keras dtype policy name ('float32', 'mixed_bfloat16', ...);
      the output is float32 either way.
    seed: int for reproducible initial weights (per layer, as build_unet seeds
      them), or None.

  Returns:
    keras.Model from images in [0, 1] units to images in [0, 1] units, float32.
  """
  if spatial_dims not in (2, 3):
    raise ValueError(f'spatial_dims={spatial_dims} must be 2 or 3')
  policy = keras.DTypePolicy(precision)
  made = []
  conv_layer = keras.layers.Conv3D if spatial_dims == 3 else keras.layers.Conv2D

  def conv(filters, name, activation=True):
    layer_seed = None if seed is None else seed * 100 + len(made)
    made.append(name)
    initializer = keras.initializers.VarianceScaling(2.0 if activation else 1.0, 'fan_in',
                                                     'truncated_normal', seed=layer_seed)
    layer = conv_layer(filters, 3, padding='same', kernel_initializer=initializer, name=name,
                       dtype=policy)
    if not activation:
      return layer
    relu = keras.layers.LeakyReLU(negative_slope=0.1, name=f'{name}_lrelu', dtype=policy)
    return lambda x: relu(layer(x))

  def size(stage):
    if spatial_dims == 2:
      return 2
    return (2 if stage > STAGES - z_pools else 1, 2, 2)

  if spatial_dims == 3:
    pool = lambda name, stage: keras.layers.MaxPooling3D(size(stage), name=name, dtype=policy)
    up = lambda name, stage: keras.layers.UpSampling3D(size(stage), name=name, dtype=policy)
  else:
    pool = lambda name, stage: keras.layers.MaxPooling2D(2, name=name, dtype=policy)
    up = lambda name, stage: keras.layers.UpSampling2D(2, interpolation='nearest', name=name,
                                                       dtype=policy)
  concat = lambda name: keras.layers.Concatenate(name=name, dtype=policy)

  inputs = keras.Input(shape=(None,) * spatial_dims + (channels,), name='noisy')
  centred = keras.layers.Rescaling(1.0, offset=-0.5, name='centre', dtype='float32')(inputs)
  encoder, decoder, top_a, top_b = layer_widths(width)
  x = conv(encoder, 'enc_conv0')(centred)
  x = conv(encoder, 'enc_conv1')(x)
  skips = [centred]
  x = pool('pool1', 1)(x)
  for stage in range(2, STAGES + 1):
    skips.append(x)
    x = conv(encoder, f'enc_conv{stage}')(x)
    x = pool(f'pool{stage}', stage)(x)
  x = conv(encoder, 'enc_conv6')(x)
  for stage in range(STAGES, 1, -1):
    x = up(f'upsample{stage}', stage)(x)
    x = concat(f'concat{stage}')([x, skips[stage - 1]])
    x = conv(decoder, f'dec_conv{stage}a')(x)
    x = conv(decoder, f'dec_conv{stage}b')(x)
  x = up('upsample1', 1)(x)
  x = concat('concat1')([x, skips[0]])
  x = conv(top_a, 'dec_conv1a')(x)
  x = conv(top_b, 'dec_conv1b')(x)
  x = conv(channels, 'dec_conv1', activation=False)(x)
  x = keras.layers.Activation('linear', dtype='float32', name='to_float32')(x)
  outputs = keras.layers.Rescaling(1.0, offset=0.5, name='uncentre', dtype='float32')(x)
  return keras.Model(inputs, outputs, name='portable_unet')
