"""A network's weights as constants of its inference graph, so that TensorFlow's
oneDNN convolutions of a tile need no buffer that grows with it.

Why: n2n's programs run TensorFlow with its oneDNN kernels on every CPU
(n2n/cli.use_onednn_kernels). For a float32 convolution whose filter is a
variable and whose batch is one image -- a tile -- TensorFlow pins the filter
to the plain HWIO layout (its mkl_conv_ops), and on a CPU without AVX512 the
one oneDNN convolution that takes NHWC data with HWIO weights is im2col + GEMM
(x64:gemm:jit; with AVX512 its direct convolution takes them too). That
one splits its im2col buffer only when the layer's weights fit in half of the
L2 cache oneDNN reads from CPUID, and refuses a scratchpad above 1 GiB; oneDNN
then falls back to its scalar reference convolution (ref:any). Under qemu's
model of an AVX2 EPYC (512 KiB of L2 per core) the U-Net's 144->96 layer at
512x512, the second level of a 1024-pixel tile, does: "scratchpad memory limit
exceeded", ref:any (bench/onednn_dispatch.py, docs/bench/onednn_dispatch.json);
on an AVX2-only EPYC, denoise.py had not finished one 1024 x 1024 photograph
after 300 s where 512-pixel tiles took seconds (issue 64). With constant weights
TensorFlow lets oneDNN choose their layout, and it runs its direct
convolution (brg_conv_fwd), which needs no im2col buffer: no limit that
depends on the tile's size and the cache.

A frozen function holds the weights as they were when it was made: a network
that trains on is frozen again before it is scored (n2n/evaluation/evaluator.py).
"""

import tensorflow as tf
# The public API has no TF2 freezing; this is the converter TFLite's own uses.
from tensorflow.python.framework import convert_to_constants  # pylint: disable=g-direct-tensorflow-import


def freeze(function):
  """The tf.function `function` (a ConcreteFunction, e.g. a SavedModel's
  signature) with every variable it reads replaced by a constant of its value
  now. Same inputs; it returns a list of the output tensors, flattened."""
  return convert_to_constants.convert_variables_to_constants_v2(function)


def frozen_model(model):
  """fn([N, H, W, C] float32 tensor) -> [N, H, W, C] float32 tensor
  ([N, D, H, W, C] for a 3D model): model(batch, training=False) over any N and
  spatial size, its weights frozen as they are now."""
  spec = tf.TensorSpec([None] * (len(model.input_shape) - 1) + [model.input_shape[-1]],
                       tf.float32)
  traced = tf.function(lambda batch: model(batch, training=False),
                       autograph=False).get_concrete_function(spec)
  frozen = freeze(traced)
  return lambda batch: frozen(batch)[0]
