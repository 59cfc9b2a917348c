"""Scoring a denoiser on whole images with fixed, reproducible noise.

Shared by the periodic evaluation in training, validate.py and its --follow
sidecar, so all report the same number for the same checkpoint.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from n2n.corruptions import noise as noise_lib
from n2n.inference import metrics


@dataclasses.dataclass(frozen=True)
class ImageScore:
  """One image at one level.

  Attributes:
    name: the image's name (path below the evaluation folder).
    psnr: dB, of the output clipped and rounded to 8 bits.
    input_psnr: dB, of the unclipped noisy input the network sees.
    noisy, denoised, clean: [H, W, C] float32 (clean in [0, 1]), kept only
      when asked for, else None.
  """
  name: str
  psnr: float
  input_psnr: float
  noisy: np.ndarray = None
  denoised: np.ndarray = None
  clean: np.ndarray = None


@dataclasses.dataclass(frozen=True)
class LevelScores:
  """Every image scored at one level."""
  noise: str
  level: float
  images: tuple

  @property
  def tag(self):
    """'gaussian_25': the level's name in TensorBoard tags and folder names."""
    return f'{self.noise}_{format_level(self.level)}'

  @property
  def mean_psnr(self):
    """Mean of the per-image output PSNRs, dB."""
    return float(np.mean([image.psnr for image in self.images]))

  @property
  def mean_input_psnr(self):
    """Mean of the per-image input PSNRs, dB."""
    return float(np.mean([image.input_psnr for image in self.images]))


def make_corruption(noise):
  """The evaluation corruption as a traced function pinned to the CPU.

  Returns:
    fn(clean [H, W, C] float32 in [0, 1], level scalar float32, seed [2] int32)
    -> noisy [H, W, C] float32.
  """

  # Traced once: corruptions with loops (text) are slow op by op in eager mode.
  @tf.function(reduce_retracing=True)
  def corrupt(clean, level, seed):
    # On GPUs float32 matmuls may run in TF32 (10-bit mantissa); the Poisson
    # sampler's CDF tables are summed by a matmul and need full float32, which
    # the CPU gives. Training corruption runs in tf.data, on the CPU already.
    with tf.device('/CPU:0'):
      return noise_lib.corrupt(clean, noise, level, seed)

  return corrupt


def evaluate(denoise, images, noise, levels, seed, keep_images=0):
  """Denoises every image at every level and scores it.

  Args:
    denoise: fn([H, W, C] float32) -> [H, W, C] float32, e.g. make_denoiser(model).
    images: list of (name, [H, W, C] uint8).
    noise: corruption name.
    levels: iterable of levels in the corruption's user units.
    seed: int, seed of the fixed evaluation noise.
    keep_images: keep the noisy, denoised and clean arrays for the first this
      many images of each level (all with -1).

  Returns:
    list of LevelScores, one per level, in the order given.
  """
  corrupt = make_corruption(noise)
  results = []
  for level in levels:
    scores = []
    for index, (name, image) in enumerate(images):
      clean = tf.constant(image, tf.float32) / 255.0
      noisy = corrupt(clean, tf.constant(level, tf.float32),
                      noise_lib.evaluation_seed(seed, index, level))
      denoised = denoise(noisy.numpy())
      kept = keep_images < 0 or index < keep_images
      scores.append(ImageScore(
          name=name,
          psnr=float(metrics.psnr(denoised, clean)),
          input_psnr=float(metrics.psnr(noisy, clean, quantize=False)),
          noisy=noisy.numpy() if kept else None,
          denoised=denoised if kept else None,
          clean=clean.numpy() if kept else None))
    results.append(LevelScores(noise, float(level), tuple(scores)))
  return results


def format_level(level):
  """A level as a short string for tags and JSON keys: 25.0 -> '25', 0.5 -> '0.5'."""
  return f'{level:g}'


def format_results(results):
  """One console line: PSNR per level, with the noisy input's PSNR."""
  return '; '.join(f'{scores.noise} {format_level(scores.level)}: {scores.mean_psnr:.2f} dB '
                   f'(input {scores.mean_input_psnr:.2f} dB)' for scores in results)
