"""The U-Net of Noise2Noise (Lehtinen et al., ICML 2018, appendix A.1).

Five 2x max-pool stages with 48-channel 3x3 convolutions on the way down,
nearest-neighbour upsampling with skip concatenations and 96-channel
convolutions on the way up, leaky ReLU (alpha 0.1), no normalisation, linear
output. 991,203 parameters for RGB in and out. These are the paper's widths,
the default; --network_width scales them (layer_widths). Initialisation as in the
official code: He (gain sqrt 2) for every layer followed by a leaky ReLU, gain
1 for the linear output layer, weights ~ N(0, gain^2 / fan_in) truncated.

N2V2's changes against the checkerboard artefacts of blind-spot training
(Hoeck et al. 2022) are options: max-blur-pool downsampling
(conv.MaxBlurPool2D) and no top skip connection (the full-resolution input is
not concatenated before the last convolutions, so the output cannot copy it).

The 3D network (spatial_dims=3, for volumes and movies) is the same graph
with 3x3x3 convolutions and the same channel counts. Its first 5 - z_pools
stages pool and upsample only y and x, its last z_pools stages all three
axes: on anisotropic data (z steps coarser than xy pixels) the xy resolution
first catches up with z, as CARE's anisotropic networks do, and thin crops
(few planes) still pass five stages. Its convolutions at the finest
xy_conv_levels of its six resolution levels can be in-plane (1x3x3): those
levels hold most of the network's multiply-adds, and a 3x3x3
kernel costs three 3x3 ones, so such a network's step costs close to the 2D
network's per voxel while its coarser levels still join neighbouring planes.
"""

import dataclasses

import keras

from n2n import config as config_lib
from n2n.model import conv as conv_lib

ARCHITECTURE = 'n2n_unet'
DOWNSAMPLINGS = ('max_pool', 'max_blur_pool')
# Five pooling stages: spatial sizes must be multiples of 2**5.
STAGES = config_lib.POOLING_STAGES
SIZE_MULTIPLE = 2 ** STAGES
SPATIAL_DIMS = (2, 3)


def layer_widths(width):
  """(encoder, decoder, dec_conv1a, dec_conv1b) channels for an encoder width.

  The paper's 48 gives its 48, 96, 64 and 32; other widths keep those ratios
  (2, 4/3 and 2/3 of the encoder's), rounded to whole channels (1 and more for
  any width of 1 and more). The output layer has the image's channels.
  """
  if width < 1:
    raise ValueError(f'--network_width={width} must be 1 or more channels')
  return width, 2 * width, round(4 * width / 3), round(2 * width / 3)


def depth_multiple(z_pools):
  """Crop depths of a 3D network with z_pools z-pooling stages must be multiples of this."""
  return 2 ** z_pools


LEVELS = config_lib.RESOLUTION_LEVELS  # the input's and one after each pooling stage


def check_xy_conv_levels(xy_conv_levels, spatial_dims=3):
  """ValueError unless xy_conv_levels is 0 to LEVELS, and 0 for a 2D network (whose
  kernels are all in-plane: a value would be ignored, not obeyed)."""
  if not 0 <= xy_conv_levels <= LEVELS:
    raise ValueError(f'--xy_conv_levels={xy_conv_levels} must be 0 to {LEVELS}')
  if xy_conv_levels and spatial_dims == 2:
    raise ValueError(f'--xy_conv_levels={xy_conv_levels} shapes the 3D network only; a 2D '
                     'network convolves in y and x at every level: leave it out')


def z_pooled_stages(z_pools):
  """(bool per stage 1..5): whether that stage pools z; the last z_pools do."""
  if not 0 <= z_pools <= STAGES:
    raise ValueError(f'--z_pools={z_pools} must be 0 to {STAGES}')
  return tuple(stage > STAGES - z_pools for stage in range(1, STAGES + 1))


def _conv(filters, name, dtype_policy, seed, filter_gradient_mode, activation=True,
          spatial_dims=2, in_plane=False):
  # Gain^2 is 2 before a ReLU-like activation (He), 1 for the linear output.
  initializer = keras.initializers.VarianceScaling(2.0 if activation else 1.0, 'fan_in',
                                                   'truncated_normal', seed=seed)
  if spatial_dims == 3:
    conv = conv_lib.Conv3DSame(filters, (1, 3, 3) if in_plane else 3,
                               kernel_initializer=initializer, activation=None, name=name,
                               dtype=dtype_policy)
  else:
    conv = conv_lib.Conv2DSame(
        filters,
        3,
        filter_gradient_mode=filter_gradient_mode,
        kernel_initializer=initializer,
        activation=None,
        name=name,
        dtype=dtype_policy,
    )
  if not activation:
    return conv
  relu = conv_lib.LeakyReLU(negative_slope=0.1, name=f'{name}_lrelu', dtype=dtype_policy)
  return lambda x: relu(conv(x))


def _resampling_layers(downsampling, upsampling, policy):
  """(fn(name) -> 2x downsampling layer, fn(name) -> 2x upsampling layer)."""
  if downsampling == 'max_pool':
    pool = lambda name: keras.layers.MaxPooling2D(2, name=name, dtype=policy)
  elif downsampling == 'max_blur_pool':
    pool = lambda name: conv_lib.MaxBlurPool2D(name=name, dtype=policy)
  else:
    raise ValueError(f'downsampling={downsampling!r} is not one of {", ".join(DOWNSAMPLINGS)}')
  if upsampling == 'resize':
    up = lambda name: conv_lib.NearestUpSampling2D(2, name=name, dtype=policy)
  elif upsampling == 'repeat':
    up = lambda name: keras.layers.UpSampling2D(2, interpolation='nearest', name=name,
                                                dtype=policy)
  else:
    raise ValueError(f"upsampling={upsampling!r} is not 'repeat' or 'resize'")
  return pool, up


def _resampling_layers_3d(downsampling, policy, pooled_z):
  """As _resampling_layers for 3D: fn(name, stage) -> layer, z pooled where pooled_z says."""
  if downsampling != 'max_pool':
    raise ValueError(f'--downsampling={downsampling} has no 3D network; use max_pool')
  size = lambda stage: (2 if pooled_z[stage - 1] else 1, 2, 2)
  pool = lambda name, stage: keras.layers.MaxPooling3D(size(stage), name=name, dtype=policy)
  up = lambda name, stage: keras.layers.UpSampling3D(size(stage), name=name, dtype=policy)
  return pool, up


def build_unet(channels=3, precision='float32', seed=None, filter_gradient_mode='direct',
               upsampling='repeat', downsampling='max_pool', top_skip=True, spatial_dims=2,
               z_pools=3, width=config_lib.PAPER_NETWORK_WIDTH, xy_conv_levels=0):
  """Builds the paper's U-Net as a Keras functional model.

  The model takes and returns images in [0, 1] units; it centres them
  internally (subtract 0.5 on the way in, add it back on the way out) because
  the paper's network works on [-0.5, 0.5] data.

  Args:
    channels: image channels in and out (3 for RGB, 1 for grayscale).
    precision: 'float32', 'mixed_bfloat16' or 'mixed_float16'. Mixed policies
      compute in 16 bits with float32 variables; the output is always float32.
    seed: int for reproducible initial weights, or None for random ones.
    filter_gradient_mode: how kernel gradients are computed, 'direct', 'tiled'
      or 'float32' (see n2n/model/conv.py and hardware.filter_gradient_mode);
      the network and its weights are the same either way.
    upsampling: 'repeat' (Keras' UpSampling2D, used for training) or 'resize'
      (conv.NearestUpSampling2D: the same values, and a graph TFLite and ONNX
      convert with plain builtin ops; used by export.py).
    downsampling: 'max_pool' (the paper) or 'max_blur_pool' (N2V2).
    top_skip: concatenate the input before the last convolutions (the paper);
      False: N2V2's network without it (dec_conv1a's kernel then takes
      `channels` fewer inputs, so checkpoints of the two do not mix).
    spatial_dims: 2 (images) or 3 (volumes; max_pool only; upsampling is
      UpSampling3D's repeat either way).
    z_pools: 3D only: how many of the five stages (the last ones) pool z.
    width: channels of the encoder's convolutions, 48 in the paper; every
      convolution but the output keeps the paper's ratio to it (layer_widths).
    xy_conv_levels: 3D only: the convolutions at resolution levels below this
      (0 to 6; level 0 is the input's, level s the one after pooling stage s:
      enc_conv0/1 and dec_conv1* work at 0, enc_conv{s+1} and dec_conv{s+1}a/b
      at s, enc_conv6 at 5) have 1x3x3 kernels, the others 3x3x3. 0: all 3x3x3.

  Returns:
    keras.Model mapping [B, H, W, channels] float32 (H, W multiples of 32, any
    value range, noisy inputs are not clipped) to [B, H, W, channels] float32;
    in 3D [B, D, H, W, channels] to the same, D a multiple of 2**z_pools.
  """
  if spatial_dims not in SPATIAL_DIMS:
    raise ValueError(f'--spatial_dims={spatial_dims} must be 2 or 3')
  check_xy_conv_levels(xy_conv_levels, spatial_dims)
  policy = keras.DTypePolicy(precision)
  inputs = keras.Input(shape=(None,) * spatial_dims + (channels,), name='noisy')
  # Centred in float32 before any cast: in bfloat16 first, inputs in [0.5, 1)
  # would be rounded to steps of 2^-8 before the subtraction.
  centred = keras.layers.Rescaling(1.0, offset=-0.5, name='centre', dtype='float32')(inputs)
  layers = _layer_makers(policy, seed, filter_gradient_mode, upsampling, downsampling,
                         spatial_dims, z_pools, xy_conv_levels)
  x = _wire(centred, layers, channels, width, top_skip)
  # The output and the loss stay in float32 whatever the compute precision.
  x = keras.layers.Activation('linear', dtype='float32', name='to_float32')(x)
  outputs = keras.layers.Rescaling(1.0, offset=0.5, name='uncentre', dtype='float32')(x)
  return keras.Model(inputs, outputs, name=ARCHITECTURE)


@dataclasses.dataclass(frozen=True)
class _LayerMakers:
  """The U-Net's layers by kind, as build_unet's settings make them.

  conv(filters, name, level, activation=True): a convolution at a resolution
    level, its initializer seeded by the order convolutions are made in;
  pool(name, stage) and up(name, stage): the resampling of a pooling stage;
  concat(name): a concatenation in the compute precision.
  """
  conv: object
  pool: object
  up: object
  concat: object


def _layer_makers(policy, seed, filter_gradient_mode, upsampling, downsampling, spatial_dims,
                  z_pools, xy_conv_levels):
  convs_made = []

  def conv(filters, name, level, activation=True):
    # Each layer its own initializer seed: one shared seed would repeat kernels.
    layer_seed = None if seed is None else seed * 100 + len(convs_made)
    convs_made.append(name)
    return _conv(filters, name, policy, layer_seed, filter_gradient_mode, activation,
                 spatial_dims, in_plane=level < xy_conv_levels)

  if spatial_dims == 3:
    pool, up = _resampling_layers_3d(downsampling, policy, z_pooled_stages(z_pools))
  else:
    pool_2d, up_2d = _resampling_layers(downsampling, upsampling, policy)
    pool = lambda name, stage: pool_2d(name)
    up = lambda name, stage: up_2d(name)
  return _LayerMakers(conv, pool, up,
                      lambda name: keras.layers.Concatenate(name=name, dtype=policy))


def _wire(centred, layers, channels, width, top_skip):
  """The paper's encoder, decoder and skips over the centred input; the
  network's last convolution's output (before its cast to float32)."""
  conv, pool, up, concat = layers.conv, layers.pool, layers.up, layers.concat
  encoder, decoder, top_a, top_b = layer_widths(width)
  # Each convolution's resolution level: pooling stage s leads from level s - 1 to s.
  x = conv(encoder, 'enc_conv0', 0)(centred)
  x = conv(encoder, 'enc_conv1', 0)(x)
  skips = [centred]
  x = pool('pool1', 1)(x)
  for stage in range(2, 6):
    skips.append(x)
    x = conv(encoder, f'enc_conv{stage}', stage - 1)(x)
    x = pool(f'pool{stage}', stage)(x)
  x = conv(encoder, 'enc_conv6', STAGES)(x)

  for stage in range(5, 1, -1):
    x = up(f'upsample{stage}', stage)(x)
    x = concat(f'concat{stage}')([x, skips[stage - 1]])
    x = conv(decoder, f'dec_conv{stage}a', stage - 1)(x)
    x = conv(decoder, f'dec_conv{stage}b', stage - 1)(x)

  x = up('upsample1', 1)(x)
  if top_skip:
    x = concat('concat1')([x, skips[0]])
  x = conv(top_a, 'dec_conv1a', 0)(x)
  x = conv(top_b, 'dec_conv1b', 0)(x)
  return conv(channels, 'dec_conv1', 0, activation=False)(x)
