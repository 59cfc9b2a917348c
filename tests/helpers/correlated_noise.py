"""Spatially correlated noise for learning tests: simulated data and a short
training run's gain (tests/methods/test_*_learning.py)."""

import numpy as np

from n2n import config as config_lib
from n2n.data import native_images
from n2n.data import scene_writer
from n2n.training import distribute
from n2n.training import train_lib
from tests.conftest import smooth_image


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
    clean = smooth_image(rng, size, size).astype(np.float64)
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
