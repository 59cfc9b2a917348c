"""Scoring a denoiser on whole images with fixed, reproducible noise.

Shared by the periodic evaluation in training, validate.py and its --follow
sidecar, so all report the same number for the same checkpoint.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.corruptions import noise as noise_lib
from n2n.evaluation import metrics

# The tag of scene evaluations (--noise=none): real captures have no level.
CAPTURES_TAG = 'captures'


@dataclasses.dataclass(frozen=True)
class ImageScore:
  """One image at one level.

  Attributes:
    name: the image's name (path below the evaluation folder).
    psnr: dB, of the output clipped and rounded to the data's bit depth;
      None for a scene without reference.
    input_psnr: dB, of the unclipped noisy input the network sees; None
      likewise.
    noisy, denoised, clean: [H, W, C] float32 (clean in [0, 1]), kept only
      when asked for, else None. For scenes, clean is the reference or, without
      one, the second capture; for volumes, each is the middle xy plane.
    noisy_target_mse: scenes only: mean squared error between the denoised
      first capture and the second capture, on the [0, 1] scale.
    colour_error: per channel, the mean of the output minus the comparison
      image's (the clean image; for scenes the reference, else the second
      capture): tuple of C floats, 0 where colours are kept.
    colour_error_explained: per channel, the part of such a shift the noise
      alone explains (metrics.channel_mean_error_explained).
    held_out_loss: single-image methods only: the method's own loss on the
      noisy input (n2n/evaluation/held_out.py), on the [0, 1] scale.
  """
  name: str
  psnr: float
  input_psnr: float
  noisy: np.ndarray = None
  denoised: np.ndarray = None
  clean: np.ndarray = None
  noisy_target_mse: float = None
  colour_error: tuple = ()
  colour_error_explained: tuple = ()
  held_out_loss: float = None


def colour_scores(noisy, denoised, comparison):
  """ImageScore's colour_error and colour_error_explained, as tuples of floats;
  none without a comparison image (a held-out noisy image on its own)."""
  if comparison is None:
    return {}
  return {'colour_error': tuple(map(float, metrics.channel_mean_error(denoised, comparison))),
          'colour_error_explained': tuple(map(float, metrics.channel_mean_error_explained(
              noisy, comparison)))}


@dataclasses.dataclass(frozen=True)
class LevelScores:
  """Every image scored at one level."""
  noise: str
  level: float
  images: tuple

  @property
  def title(self):
    """'gaussian 25', or 'captures' for scenes: the level as people read it."""
    if self.noise == config_lib.NO_NOISE:
      return CAPTURES_TAG
    return f'{self.noise} {format_level(self.level)}'

  @property
  def tag(self):
    """'gaussian_25': the level's name in TensorBoard tags and folder names."""
    if self.noise == config_lib.NO_NOISE:
      return CAPTURES_TAG
    return f'{self.noise}_{format_level(self.level)}'

  @property
  def mean_psnr(self):
    """Mean of the per-image output PSNRs, dB; None when no image has a reference."""
    return _mean([image.psnr for image in self.images])

  @property
  def mean_input_psnr(self):
    """Mean of the per-image input PSNRs, dB; None likewise."""
    return _mean([image.input_psnr for image in self.images])

  @property
  def largest_colour_error(self):
    """The largest |per-channel mean error| of any image, 0-1 scale."""
    return max((abs(error) for image in self.images for error in image.colour_error),
               default=0.0)

  @property
  def mean_held_out_loss(self):
    """Single-image methods: mean of the per-image held-out losses; None otherwise."""
    return _mean([image.held_out_loss for image in self.images])

  @property
  def mean_noisy_target_mse(self):
    """Scenes: mean of the per-scene noisy-target errors; None for synthetic noise."""
    return _mean([image.noisy_target_mse for image in self.images])


def headline_values(results):
  """{name: value} of an evaluation's means over its levels, as far as it has
  them: 'psnr' (dB, where there are clean images or references),
  'held_out_loss' (single-image methods), 'noisy_target_mse' (scenes with a
  second capture). results: list of LevelScores."""
  values = {}
  for name, attribute in (('psnr', 'mean_psnr'), ('held_out_loss', 'mean_held_out_loss'),
                          ('noisy_target_mse', 'mean_noisy_target_mse')):
    known = _mean([getattr(scores, attribute) for scores in results])
    if known is not None:
      values[name] = known
  return values


def _mean(values):
  known = [value for value in values if value is not None]
  return float(np.mean(known)) if known else None


def evaluate_scenes(denoise, scenes, keep_images=0, held_out_loss=None):
  """Denoises every scene's first capture and scores it.

  Against the reference where there is one (PSNR, the output quantised to the
  data's bit depth), and against the second capture where there is one: the
  noisy-target error. With noise independent between captures and zero-mean,
  its expectation is the true error plus the noise variance, so it ranks
  checkpoints without any clean data. A held-out noisy image on its own
  (EvalScene without second capture) is scored by held_out_loss only.

  Args:
    held_out_loss: held_out.make_held_out_loss's fn, or None.

  Returns:
    [LevelScores] with noise 'none' and level 0.
  """
  scores = []
  for index, scene in enumerate(scenes):
    denoised = denoise(scene.first)
    kept = keep_images < 0 or index < keep_images
    first, output, reference, second = (
        _as_image(array) for array in (scene.first, denoised, scene.reference, scene.second))
    comparison = reference if reference is not None else second
    scores.append(ImageScore(
        name=scene.name,
        psnr=(float(metrics.psnr(output, reference, step=scene.step))
              if reference is not None else None),
        input_psnr=(float(metrics.psnr(first, reference, quantize=False))
                    if reference is not None else None),
        noisy=_shown(scene.first) if kept else None,
        denoised=_shown(denoised) if kept else None,
        clean=_shown(scene.reference if reference is not None else scene.second) if kept
        else None,
        noisy_target_mse=(float(np.mean(np.square(output - second)))
                          if second is not None else None),
        held_out_loss=held_out_loss(scene.first, index) if held_out_loss else None,
        **colour_scores(first, output, comparison)))
  return [LevelScores(config_lib.NO_NOISE, 0.0, tuple(scores))]


def _as_image(array):
  """[H, W, C] as it is; a volume [D, H, W, C] as the image [D * H, W, C], so
  that a volume's PSNR and colour error are over all of its voxels; None stays."""
  if array is None or array.ndim == 3:
    return array
  return array.reshape((-1,) + array.shape[2:])


def _shown(array):
  """What a comparison strip shows: an image as it is, a volume's middle xy plane."""
  return array if array is None or array.ndim == 3 else array[array.shape[0] // 2]


def score(denoise, data, noise, levels, seed, keep_images=0, corrupt=None, held_out_loss=None):
  """evaluate() for synthetic noise, evaluate_scenes() for noise 'none'."""
  if noise == config_lib.NO_NOISE:
    return evaluate_scenes(denoise, data, keep_images, held_out_loss)
  return evaluate(denoise, data, noise, levels, seed, keep_images, corrupt, held_out_loss)


def make_corruption(noise):
  """The evaluation corruption as a traced function pinned to the CPU.

  Returns:
    fn(clean [H, W, C] float32 in [0, 1], level scalar float32, seed [2] int32)
    -> noisy [H, W, C] float32.
  """

  # Traced once: corruptions with loops (text) are slow op by op in eager mode. Their
  # loops are tf.while_loop already: no AutoGraph (n2n/data/traced.py).
  @tf.function(reduce_retracing=True, autograph=False)
  def corrupt(clean, level, seed):
    # On GPUs float32 matmuls may run in TF32 (10-bit mantissa); the Poisson
    # sampler's CDF tables are summed by a matmul and need full float32, which
    # the CPU gives. Training corruption runs in tf.data, on the CPU already.
    with tf.device('/CPU:0'):
      return noise_lib.corrupt(clean, noise, level, seed)

  return corrupt


def evaluation_input(corrupt, image, index, level, seed):
  """One evaluation image with its fixed noise, as every evaluation scores it.

  Args:
    corrupt: make_corruption(noise).
    image: [H, W, C] uint8 clean image; index: its position in the evaluation
      data; level, seed: the evaluation level and seed.

  Returns:
    (noisy [H, W, C] float32, clean [H, W, C] float32 in [0, 1]), numpy.
  """
  clean = tf.constant(image, tf.float32) / 255.0
  noisy = corrupt(clean, tf.constant(level, tf.float32),
                  noise_lib.evaluation_seed(seed, index, level))
  return noisy.numpy(), clean.numpy()


def evaluate(denoise, images, noise, levels, seed, keep_images=0, corrupt=None,
             held_out_loss=None):
  """Denoises every image at every level and scores it.

  Args:
    denoise: fn([H, W, C] float32) -> [H, W, C] float32, e.g. make_denoiser(model).
    images: list of (name, [H, W, C] uint8).
    noise: corruption name.
    levels: iterable of levels in the corruption's user units.
    seed: int, seed of the fixed evaluation noise.
    keep_images: keep the noisy, denoised and clean arrays for the first this
      many images of each level (all with -1).
    corrupt: make_corruption(noise), made once by callers that evaluate
      repeatedly (a new tf.function per call would be traced anew each time).
    held_out_loss: held_out.make_held_out_loss's fn, or None: the
      single-image method's own loss on each noisy image, beside its PSNR.

  Returns:
    list of LevelScores, one per level, in the order given.
  """
  corrupt = corrupt or make_corruption(noise)
  results = []
  for level in levels:
    scores = []
    for index, (name, image) in enumerate(images):
      noisy, clean = evaluation_input(corrupt, image, index, level, seed)
      denoised = denoise(noisy)
      kept = keep_images < 0 or index < keep_images
      scores.append(ImageScore(
          name=name,
          psnr=float(metrics.psnr(denoised, clean)),
          input_psnr=float(metrics.psnr(noisy, clean, quantize=False)),
          noisy=noisy if kept else None,
          denoised=denoised if kept else None,
          clean=clean if kept else None,
          held_out_loss=held_out_loss(noisy, index) if held_out_loss else None,
          **colour_scores(noisy, denoised, clean)))
    results.append(LevelScores(noise, float(level), tuple(scores)))
  return results


def colour_shift_warnings(results, floor):
  """Warning lines for images whose denoised colours moved: a channel whose mean
  error exceeds both floor and what the noise explains.

  Args:
    results: list of LevelScores.
    floor: the smallest shift worth a warning, on the [0, 1] scale; 0: none.

  Returns:
    list of str, one per image that shifted.
  """
  if not floor:
    return []
  warnings = []
  for scores in results:
    for image in scores.images:
      errors = image.colour_error
      shifted = [abs(error) > max(floor, explained)
                 for error, explained in zip(errors, image.colour_error_explained)]
      if any(shifted):
        names = 'RGB' if len(errors) == 3 else 'L'
        values = ', '.join(f'{name} {error:+.3f}' for name, error in zip(names, errors))
        warnings.append(f'{image.name} ({scores.tag}): denoised colours moved ({values} on the '
                        f'0-1 scale; more than the noise explains and more than {floor:g})')
  return warnings


def format_level(level):
  """A level as a short string for tags and JSON keys: 25.0 -> '25', 0.5 -> '0.5'."""
  return f'{level:g}'


def format_scores(scores):
  """'gaussian 25: 30.12 dB (input 20.18 dB)'; for scenes also the noisy-target MSE."""
  parts = []
  if scores.mean_psnr is not None:
    parts.append(f'{scores.mean_psnr:.2f} dB (input {scores.mean_input_psnr:.2f} dB)')
  if scores.mean_noisy_target_mse is not None:
    parts.append(f'noisy-target MSE {scores.mean_noisy_target_mse:.6f}')
  if scores.mean_held_out_loss is not None:
    parts.append(f'held-out loss {scores.mean_held_out_loss:.6f}')
  return f'{scores.title}: {", ".join(parts)}'


def format_results(results):
  """One console line: PSNR per level, with the noisy input's PSNR."""
  return '; '.join(format_scores(scores) for scores in results)
