"""Spatially correlated noise and the learning runs on it: what pixel-shuffle
(tests/methods/test_pixel_shuffle_learning.py), recorruptions
(tests/methods/test_recorrupted_learning.py) and structN2V lines
(tests/methods/test_structn2v_learning.py) gain over their plain methods."""

import numpy as np

from bench.recipes import images
from n2n import config as config_lib
from n2n import noise_model
from n2n.data import native_images
from n2n.data import scene_writer
from n2n.training import distribute
from n2n.training import train_lib


def row_noise(rng, shape, sigma, span=5):
  """[H, W, C] Gaussian noise of standard deviation sigma averaged over `span`
  pixels along each row (and rescaled): correlated along x up to lag span - 1
  (0.8, 0.6, 0.4, 0.2 for 5), independent along y; the diagnosis reads it as rows."""
  height, width, channels = shape
  white = rng.normal(0.0, sigma, (height, width + span - 1, channels))
  return sum(white[:, shift:shift + width] for shift in range(span)) / np.sqrt(span)


def correlated_noise(rng, shape, sigma):
  """[H, W, C] Gaussian noise of standard deviation sigma averaged over 2x2
  pixels (and rescaled to sigma): correlation 0.5 at lag 1 along x and y, 0
  from lag 2, as demosaicing's (bench/diagnosis_accuracy.py reads 0.48-0.49)."""
  height, width, channels = shape
  white = rng.normal(0.0, sigma, (height + 1, width + 1, channels))
  return (white[:-1, :-1] + white[1:, :-1] + white[:-1, 1:] + white[1:, 1:]) / 2.0


def write_correlated_data(root, rng, count=4, size=192, sigma=25.0, noise=None):
  """root/scenes/sN/{capture_00,capture_01,reference}.png (scored on the first
  capture) and root/records: the first captures alone as single noisy images."""
  noise = noise or correlated_noise
  capture = lambda clean: np.clip(np.round(clean + noise(rng, clean.shape, sigma)), 0, 255)
  for index in range(count):
    clean = images.smooth_image(rng, size, size).astype(np.float64)
    noisy = capture(clean)
    scene = root / 'scenes' / f's{index}'
    scene.mkdir(parents=True)
    (root / 'captures').mkdir(exist_ok=True)
    for path, image in ((scene / 'capture_00.png', noisy), (scene / 'capture_01.png', capture(clean)),
                        (scene / 'reference.png', clean),
                        (root / 'captures' / f's{index}.png', noisy)):
      path.write_bytes(native_images.encode_pages([image.astype(np.uint8)], 'png'))
  scene_writer.write_scene_dataset(str(root / 'captures'), str(root / 'records'),
                                   noisy_images=True)


def gain(root, name, steps, seed, crop_size=128, batch_size=4, **flags):
  """dB the run's network gains over the noisy captures it trained on."""
  config = config_lib.train_config(
      train_data=str(root / 'records'), val_data=str(root / 'scenes'),
      model_dir=str(root / name), noise='none', crop_size=crop_size, batch_size=batch_size,
      train_steps=steps, learning_rate=1e-3, steps_per_loop=25, log_every=steps,
      eval_every=steps, checkpoint_every=steps, eval_image_summaries=0, precision='float32',
      seed=seed, **flags)
  scores, = train_lib.train_and_evaluate(config, distribute.create_strategy('default')).results
  return scores.mean_psnr - scores.mean_input_psnr


# Pixel-shuffle: crop 128, batch 4, float32, on 4 images of 192 x 192 (data seed 0), at
# half the paper's network width, 450 steps: at width 24 a step of this batch took 3.96x
# less time than at 48 (docs/bench/network_width.json); the spread of the outcome over
# seeds at these settings and others: test_pixel_shuffle_learning.py, by its margin.
PIXEL_SHUFFLE_STEPS = 450
PIXEL_SHUFFLE_WIDTH = 24


def write_pixel_shuffle_data(root):
  """The pixel-shuffle run's data under root: 2x2-correlated noise (data seed 0)."""
  write_correlated_data(root, np.random.default_rng(0))


def stride_gains(root, seed, steps=PIXEL_SHUFFLE_STEPS, network_width=PIXEL_SHUFFLE_WIDTH):
  """(gain without the scheme, gain through a stride-2 pixel-shuffle) in dB of
  two Neighbor2Neighbor runs on write_pixel_shuffle_data's data (bench/learning_test_spread.py
  runs it at other seeds)."""
  plain = gain(root, f'plain_{seed}', steps, seed, method='neighbor2neighbor',
               neighbor2neighbor_stride=1, neighbor2neighbor_inference_stride=1,
               network_width=network_width)
  shuffled = gain(root, f'shuffled_{seed}', steps, seed, method='neighbor2neighbor',
                  neighbor2neighbor_stride=2, neighbor2neighbor_inference_stride=2,
                  network_width=network_width)
  return plain, shuffled


def correlated_noise_model(sigma=25.0):
  """correlated_noise's own model, worked out by hand (n2n.noise_model.NoiseModel): the
  mean of 2 x 2 white pixels is correlated 0.5 at lag 1 along x or y and 0.25 at (1, 1),
  0 farther; its 3 channels are drawn apart; its level is sigma / 255 at every signal."""
  lag = noise_model.MAX_LAG
  correlation = np.zeros((2 * lag + 1, 2 * lag + 1))
  for dy in (-1, 0, 1):
    for dx in (-1, 0, 1):
      correlation[lag + dy, lag + dx] = (2 - abs(dy)) * (2 - abs(dx)) / 4.0
  return noise_model.NoiseModel(correlation, np.eye(3), np.array([0.5]),
                                np.full((1, 3), sigma / 255.0))


def recorrupted_gain(root, seed, steps=PIXEL_SHUFFLE_STEPS, network_width=PIXEL_SHUFFLE_WIDTH):
  """Gain in dB of Recorrupted-to-Recorrupted on write_pixel_shuffle_data's data, given
  the noise's own model (correlated_noise_model) at its own level (level scale 1: the
  default's shrink is for estimated models), at the pixel-shuffle run's budget
  (bench/learning_test_spread.py runs it at other seeds). The diagnosis cannot read this
  data's noise from the single images (smooth random images, textured everywhere and
  clipped at black and white): the run would refuse without a model."""
  return gain(root, f'recorrupted_{seed}', steps, seed, method='recorrupted',
              recorrupted_inference_orientations=1,
              recorrupted_noise_model=correlated_noise_model().to_json(),
              recorrupted_level_scale=1.0, network_width=network_width)


# StructN2V lines: blind-spot, crop 64, batch 8, 5% masked, float32, at half the paper's
# network width (24: about a quarter of its convolution cost, docs/bench/network_width.json),
# 300 steps; the spread over seeds: test_structn2v_learning.py, by its margin.
LINE_STEPS = 300
LINE_WIDTH = 24


def write_row_noise_data(root):
  """The structN2V run's data under root: noise correlated along rows (data seed 0)."""
  write_correlated_data(root, np.random.default_rng(0), noise=row_noise)


def line_gains(root, seed, steps=LINE_STEPS, network_width=LINE_WIDTH):
  """(gain of plain blind-spot, gain with 9-pixel structN2V lines) in dB on
  write_row_noise_data's data (bench/learning_test_spread.py runs it at other seeds)."""
  common = dict(method='blind_spot', crop_size=64, batch_size=8, blind_spot_fraction=0.05,
                blind_spot_stride=1, blind_spot_inference_stride=1, network_width=network_width)
  plain = gain(root, f'plain_{seed}', steps, seed, blind_spot_line='none', **common)
  lines = gain(root, f'lines_{seed}', steps, seed, blind_spot_line='rows',
               blind_spot_line_span=9, **common)
  return plain, lines
