"""The arithmetic floor of U-Net inference on this machine: the network's
multiply-adds divided by the best float32 matmul rate TensorFlow reaches here.

Shared by bench/throughput.py and bench/denoise_throughput.py.
"""

import statistics
import time

import tensorflow as tf

from n2n import config as config_lib
from n2n.model import unet as model_lib


def summarize(values):
  """{'median', 'min', 'max'} of a list of numbers."""
  return {'median': float(statistics.median(values)), 'min': float(min(values)),
          'max': float(max(values))}


def unet_multiply_adds_per_pixel(channels=3, probe_size=64, width=config_lib.PAPER_NETWORK_WIDTH):
  """Multiply-adds of one U-Net forward pass per input pixel (convolutions only),
  counted from every convolution's real output size on a probe image; width:
  the network's --network_width."""
  model = model_lib.build_unet(channels, width=width)
  convolutions = [layer for layer in model.layers if hasattr(layer, 'kernel_size')]
  probe = tf.keras.Model(model.input, [layer.output for layer in convolutions])
  outputs = probe(tf.zeros([1, probe_size, probe_size, channels]))
  total = 0
  for layer, output in zip(convolutions, outputs):
    kernel_h, kernel_w = layer.kernel_size
    in_channels = layer.kernel.shape[2]
    total += output.shape[1] * output.shape[2] * kernel_h * kernel_w * in_channels * layer.filters
  return total / probe_size**2


def matmul_rate(sizes=(1024, 2048, 4096), repeats=5):
  """This machine's float32 matmul rate with TensorFlow, multiply-adds per second:
  (the best median over square sizes (small ones underuse the cores),
  {size: rate})."""
  rates = {}
  for size in sizes:
    matrix = tf.random.uniform([size, size], dtype=tf.float32)
    multiply = tf.function(lambda matrix=matrix: tf.matmul(matrix, matrix))
    multiply().numpy()
    times = []
    for _ in range(repeats):
      started = time.perf_counter()
      multiply().numpy()
      times.append(time.perf_counter() - started)
    rates[size] = size**3 / statistics.median(times)
  return max(rates.values()), rates
