"""The U-Net's convolution and leaky ReLU, with gradients right and fast in bfloat16.

TensorFlow's own gradients of Keras Conv2D + LeakyReLU have three problems,
measured on the 2-core AVX512-BF16 machine (docs/performance.md):

* The bias gradient is a BiasAddGrad. Its bfloat16 CPU kernel sums in bfloat16,
  so the sum stops growing once the running total dwarfs each term. The answer
  is only right when oneDNN happens to fuse it into the filter gradient. With
  TF_ENABLE_ONEDNN_OPTS=0, the bias gradients of the U-Net at 256x256 came out
  up to 96% wrong. Here the bias gradient is a reduce_sum, which accumulates in
  float32 whatever the input dtype; tests/model/test_conv.py checks that.
* oneDNN's bfloat16 filter-gradient kernel slows down on large images. For
  4x256x256, 99->64 channels it took 226 ms, and 124 ms when the same sums were
  cut into 64x64 tiles; float32 gets slower when tiled. So tiling is a switch,
  and the trainer turns it on only for bfloat16 on CPUs with AVX512-BF16/AMX.
* On CPUs without those instructions TensorFlow's bfloat16 filter gradient
  sums in bfloat16: 8% wrong for 4x128x128 images, and 10x slower than the
  same sums in float32 (AMD EPYC without avx512_bf16, 4x256x256 99->64: 7.8 s
  vs 0.77 s). There the filter gradient is computed in float32.
* The leaky ReLU's gradient reads the bias-add's output, which makes Grappler's
  remapper fail on the whole training graph (see leaky_relu below).
"""

import math

import keras
import tensorflow as tf

# Layers whose images are larger than this (in pixels) get tiled filter gradients;
# at 128x128 tiling bought nothing in the measurements above.
TILE_ABOVE_PIXELS = 128 * 128
# Measured best of 32, 64 and 128 at 256x256.
TILE_SIZE = 64


def _tile_extent(size):
  """Splits `size` pixels into near-equal tiles of at most TILE_SIZE."""
  count = math.ceil(size / TILE_SIZE)
  return math.ceil(size / count), count


FILTER_GRADIENT_MODES = ('direct', 'tiled', 'float32')


def filter_gradient(inputs, output_gradient, kernel_size, mode='direct'):
  """Gradient of a 'same', stride-1 convolution (odd kernel) with respect to its kernel.

  Args:
    inputs: [B, H, W, Cin] float tensor, the convolution's input; H and W static
      when mode is 'tiled'.
    output_gradient: [B, H, W, Cout], same dtype, gradient of the convolution's
      output.
    kernel_size: (kh, kw), odd.
    mode: 'direct', one filter-gradient op; 'tiled', cut the image into tiles
      of at most TILE_SIZE pixels a side (each with the halo the kernel reads)
      and stack them on the batch axis before the one op (the sum is the same,
      only its order changes); 'float32', the direct op on float32 copies,
      cast back.

  Returns:
    [kh, kw, Cin, Cout] tensor of the inputs' dtype.
  """
  kernel_h, kernel_w = kernel_size
  in_channels = inputs.shape[-1]
  out_channels = output_gradient.shape[-1]
  filter_sizes = [kernel_h, kernel_w, in_channels, out_channels]
  if mode == 'float32' and inputs.dtype != tf.float32:
    return tf.cast(filter_gradient(tf.cast(inputs, tf.float32),
                                   tf.cast(output_gradient, tf.float32), kernel_size),
                   inputs.dtype)
  if mode != 'tiled':
    return tf.raw_ops.Conv2DBackpropFilter(
        input=inputs, filter_sizes=filter_sizes, out_backprop=output_gradient,
        strides=[1, 1, 1, 1], padding='SAME')
  height, width = inputs.shape[1], inputs.shape[2]
  tile_h, rows = _tile_extent(height)
  tile_w, cols = _tile_extent(width)
  halo_h, halo_w = kernel_h // 2, kernel_w // 2
  extra_h, extra_w = rows * tile_h - height, cols * tile_w - width
  # Zero padding past the image is exact: 'same' padding is zeros, and a zero
  # output gradient adds nothing to any kernel tap.
  padded = tf.pad(inputs, [[0, 0], [halo_h, halo_h + extra_h], [halo_w, halo_w + extra_w], [0, 0]])
  padded_gradient = tf.pad(output_gradient, [[0, 0], [0, extra_h], [0, extra_w], [0, 0]])
  input_tiles, gradient_tiles = [], []
  for row in range(rows):
    for col in range(cols):
      top, left = row * tile_h, col * tile_w
      input_tiles.append(padded[:, top:top + tile_h + 2 * halo_h, left:left + tile_w + 2 * halo_w])
      gradient_tiles.append(padded_gradient[:, top:top + tile_h, left:left + tile_w])
  return tf.raw_ops.Conv2DBackpropFilter(
      input=tf.concat(input_tiles, 0), filter_sizes=filter_sizes,
      out_backprop=tf.concat(gradient_tiles, 0), strides=[1, 1, 1, 1], padding='VALID')


def conv2d_same_with_bias(inputs, kernel, bias, mode='direct'):
  """A stride-1 'same' convolution plus bias, with the gradient described above.

  Args:
    inputs: [B, H, W, Cin] float tensor (float32 or bfloat16).
    kernel: [kh, kw, Cin, Cout], same dtype, odd kh and kw.
    bias: [Cout], same dtype.
    mode: how the filter gradient is computed (see filter_gradient); 'tiled'
      needs static H, W.

  Returns:
    [B, H, W, Cout] tensor of the inputs' dtype.
  """

  @tf.custom_gradient
  def convolve(inputs, kernel, bias):
    outputs = tf.nn.bias_add(tf.nn.conv2d(inputs, kernel, 1, 'SAME'), bias)

    def gradient(output_gradient):
      input_gradient = tf.raw_ops.Conv2DBackpropInput(
          input_sizes=tf.shape(inputs), filter=kernel, out_backprop=output_gradient,
          strides=[1, 1, 1, 1], padding='SAME')
      kernel_gradient = filter_gradient(inputs, output_gradient, kernel.shape[:2], mode)
      bias_gradient = tf.reduce_sum(output_gradient, axis=[0, 1, 2])
      return input_gradient, kernel_gradient, bias_gradient

    return outputs, gradient

  return convolve(inputs, kernel, bias)


class Conv2DSame(keras.layers.Conv2D):
  """keras.layers.Conv2D (odd kernel, stride 1, 'same', bias) via conv2d_same_with_bias.

  Same variables and names as keras.layers.Conv2D, so checkpoints are
  interchangeable; only the gradient computation differs.
  """

  def __init__(self, filters, kernel_size, filter_gradient_mode='direct', **kwargs):
    super().__init__(filters, kernel_size, padding='same', use_bias=True, **kwargs)
    if (tuple(self.strides) != (1, 1) or tuple(self.dilation_rate) != (1, 1)
        or self.data_format != 'channels_last' or self.groups != 1
        or any(size % 2 == 0 for size in self.kernel_size)):
      raise ValueError(f'Conv2DSame {self.name}: only odd kernels, stride 1, no dilation, '
                       'one group, channels_last')
    if filter_gradient_mode not in FILTER_GRADIENT_MODES:
      raise ValueError(f'Conv2DSame {self.name}: filter_gradient_mode={filter_gradient_mode!r} '
                       f'is not one of {", ".join(FILTER_GRADIENT_MODES)}')
    self.filter_gradient_mode = filter_gradient_mode

  def call(self, inputs):
    height, width = inputs.shape[1], inputs.shape[2]
    mode = self.filter_gradient_mode
    if mode == 'tiled' and (height is None or width is None
                            or height * width <= TILE_ABOVE_PIXELS):
      mode = 'direct'
    kernel = keras.ops.cast(self.kernel, self.compute_dtype)
    bias = keras.ops.cast(self.bias, self.compute_dtype)
    outputs = conv2d_same_with_bias(inputs, kernel, bias, mode)
    if self.activation is not None:
      outputs = self.activation(outputs)
    return outputs

  def get_config(self):
    config = super().get_config()
    config['filter_gradient_mode'] = self.filter_gradient_mode
    for fixed in ('padding', 'use_bias'):
      config.pop(fixed, None)
    return config


def leaky_relu(features, negative_slope):
  """Leaky ReLU whose gradient reads its output instead of its input.

  For a slope >= 0 the output has the input's sign (or is 0 where the input is
  <= 0 and the slope 0), so it says just as well which side each value was on.
  The stock gradient reads the input, which is the convolution's bias-add: that
  extra reader made Grappler's remapper fail on every training graph ("fanout
  ... LeakyReluGrad exist for missing node ... BiasAdd") and kept the
  pre-activation alive for the backward pass.

  Args:
    features: float tensor of any shape and float dtype.
    negative_slope: python float >= 0.

  Returns:
    Tensor of the same shape and dtype.
  """

  @tf.custom_gradient
  def activate(features):
    outputs = tf.nn.leaky_relu(features, negative_slope)

    def gradient(output_gradient):
      return tf.raw_ops.LeakyReluGrad(gradients=output_gradient, features=outputs,
                                      alpha=negative_slope)

    return outputs, gradient

  return activate(features)


class LeakyReLU(keras.layers.LeakyReLU):
  """keras.layers.LeakyReLU with the gradient of leaky_relu above."""

  def call(self, inputs):
    return leaky_relu(inputs, self.negative_slope)


class NearestUpSampling2D(keras.layers.UpSampling2D):
  """keras.layers.UpSampling2D(interpolation='nearest') for 2x as a channel tile
  and a depth-to-space.

  The same values (tested), and a graph converters map to plain builtin ops:
  Keras 3 builds nearest upsampling from ops.repeat, whose dynamic reshapes
  lose the channel dimension in the TFLite converter (every following
  convolution then needed TensorFlow's own Flex kernel), and a nearest resize
  becomes an ONNX Resize with a deprecated TensorFlow rounding mode that
  onnxruntime warns about. Tiling the C channels 4 times and moving channel
  block (i, j) to pixel (i, j) of each 2x2 cell repeats every pixel exactly.
  No variables: checkpoints are unaffected.
  """

  def __init__(self, size=2, **kwargs):
    super().__init__(size, interpolation='nearest', **kwargs)
    if tuple(self.size) != (2, 2):
      raise ValueError(f'NearestUpSampling2D upsamples by 2, not {self.size}')

  def call(self, inputs):
    # Both ops keep the input's dtype (bfloat16 stays bfloat16).
    return tf.nn.depth_to_space(tf.tile(inputs, [1, 1, 1, 4]), 2)


# The binomial [1, 2, 1] / 4 filter, outer product: the anti-aliasing blur of
# Zhang (ICML 2019) that N2V2 uses for downsampling.
_BLUR_TAPS = (1.0, 2.0, 1.0)


class MaxBlurPool2D(keras.layers.Layer):
  """2x downsampling by max-blur-pooling (Zhang, ICML 2019), as N2V2 uses it
  against checkerboard artefacts (Hoeck et al. 2022).

  A 2x2 max over every position (stride 1), then a 3x3 binomial blur taken at
  every second pixel (reflect-padded), instead of a max over disjoint 2x2
  cells: the output no longer jumps with the input's phase on the pixel grid.
  [B, H, W, C] (H, W even) -> [B, H/2, W/2, C], in the input's dtype. No
  variables: the weights of the network around it are unchanged.
  """

  def call(self, inputs):
    channels = inputs.shape[-1]
    # 'SAME' pads the max window at the bottom and right only, as 2x2 needs.
    maxed = tf.nn.max_pool2d(inputs, 2, 1, 'SAME')
    taps = tf.constant(_BLUR_TAPS, inputs.dtype)
    kernel = taps[:, tf.newaxis] * taps[tf.newaxis, :] / tf.reduce_sum(taps) ** 2
    kernel = tf.tile(kernel[:, :, tf.newaxis, tf.newaxis], [1, 1, channels, 1])
    padded = tf.pad(maxed, [[0, 0], [1, 1], [1, 1], [0, 0]], mode='REFLECT')
    return tf.nn.depthwise_conv2d(padded, kernel, [1, 2, 2, 1], 'VALID')

  def compute_output_shape(self, input_shape):
    batch, height, width, channels = input_shape
    half = lambda size: None if size is None else size // 2
    return (batch, half(height), half(width), channels)


def conv3d_same_with_bias(inputs, kernel, bias):
  """A stride-1 'same' 3D convolution plus bias, gradients summed in float32.

  The 3D counterpart of conv2d_same_with_bias: TensorFlow's bias gradient
  (BiasAddGrad) and, without AVX512-BF16 or AMX, its filter gradient sum in
  bfloat16 when the compute dtype is bfloat16; a 3D crop has D times the
  terms of a 2D one, so both are computed from float32 copies here.

  Args:
    inputs: [B, D, H, W, Cin] float tensor (float32 or bfloat16).
    kernel: [kd, kh, kw, Cin, Cout], same dtype, odd sizes.
    bias: [Cout], same dtype.

  Returns:
    [B, D, H, W, Cout] tensor of the inputs' dtype.
  """
  if kernel.shape[0] == 1:
    # An in-plane kernel (unet's xy_conv_levels): the planes as a batch of
    # images through the 2D convolution, the same sums; with its gradients it
    # took 0.49x the time of TensorFlow's depth-1 3D op on the 3D runs' crops
    # at width 24 (docs/bench/in_plane_levels.json, a 2-core AVX2 host); on an
    # AMX host the two took the same time (0.95x float32, 1.03x bfloat16:
    # docs/bench/in_plane_levels_amx_*.json), so nothing is lost there.
    shape = tf.shape(inputs)
    planes = tf.reshape(inputs, tf.concat([[-1], shape[2:]], 0))
    outputs = conv2d_same_with_bias(planes, kernel[0], bias, mode='float32')
    return tf.reshape(outputs, tf.concat([shape[:4], tf.shape(outputs)[3:]], 0))

  @tf.custom_gradient
  def convolve(inputs, kernel, bias):
    outputs = tf.nn.bias_add(tf.nn.conv3d(inputs, kernel, [1] * 5, 'SAME'), bias)

    def gradient(output_gradient):
      input_gradient = tf.raw_ops.Conv3DBackpropInputV2(
          input_sizes=tf.shape(inputs), filter=kernel, out_backprop=output_gradient,
          strides=[1] * 5, padding='SAME')
      wide = lambda tensor: tf.cast(tensor, tf.float32)
      kernel_gradient = tf.raw_ops.Conv3DBackpropFilterV2(
          input=wide(inputs), filter_sizes=tf.shape(kernel), out_backprop=wide(output_gradient),
          strides=[1] * 5, padding='SAME')
      bias_gradient = tf.reduce_sum(output_gradient, axis=[0, 1, 2, 3])
      return input_gradient, tf.cast(kernel_gradient, kernel.dtype), bias_gradient

    return outputs, gradient

  return convolve(inputs, kernel, bias)


class Conv3DSame(keras.layers.Conv3D):
  """keras.layers.Conv3D (odd kernel, stride 1, 'same', bias) via conv3d_same_with_bias.

  Same variables and names as keras.layers.Conv3D; only the gradient differs.
  """

  def __init__(self, filters, kernel_size, **kwargs):
    super().__init__(filters, kernel_size, padding='same', use_bias=True, **kwargs)
    if (tuple(self.strides) != (1, 1, 1) or tuple(self.dilation_rate) != (1, 1, 1)
        or self.data_format != 'channels_last' or self.groups != 1
        or any(size % 2 == 0 for size in self.kernel_size)):
      raise ValueError(f'Conv3DSame {self.name}: only odd kernels, stride 1, no dilation, '
                       'one group, channels_last')

  def call(self, inputs):
    kernel = keras.ops.cast(self.kernel, self.compute_dtype)
    bias = keras.ops.cast(self.bias, self.compute_dtype)
    outputs = conv3d_same_with_bias(inputs, kernel, bias)
    if self.activation is not None:
      outputs = self.activation(outputs)
    return outputs

  def get_config(self):
    config = super().get_config()
    for fixed in ('padding', 'use_bias'):
      config.pop(fixed, None)
    return config
