"""Training from numpy arrays: tests/test_arrays.py's smooth images and its
learning run, which bench/learning_test_spread.py runs over seeds (the basis
of that test's bound)."""

import numpy as np

import n2n

# The learning run's length and width.
STEPS = 100
NETWORK_WIDTH = 16


def clean_image(rng, height, width, scale=8):
  """A smooth [H, W] float image in [0.2, 0.8]: blocks of `scale` pixels, blurred."""
  coarse = rng.uniform(0.2, 0.8, (height // scale + 2, width // scale + 2))
  image = np.kron(coarse, np.ones((scale, scale)))[:height, :width]
  for axis in (0, 1):
    image = (image + np.roll(image, 1, axis) + np.roll(image, -1, axis)) / 3
  return image


def noisy(rng, clean, sigma=0.1):
  """clean with Gaussian noise of sigma, clipped to [0, 1], float32."""
  return np.clip(clean + rng.normal(0.0, sigma, clean.shape), 0.0, 1.0).astype(np.float32)


def captures_gain(model_dir, seed, steps=STEPS, network_width=NETWORK_WIDTH):
  """Noise2Noise on pairs of arrays (4 smooth 96 x 96 images, sigma 0.1, crops
  of 64, batch 4, float32, a constant learning rate of 1e-3), data and network
  drawn at seed; the dB a held-out 96 x 128 image gains through n2n.Denoiser."""
  rng = np.random.default_rng(seed)
  cleans = [clean_image(rng, 96, 96) for _ in range(4)]
  captures = [(noisy(rng, clean), noisy(rng, clean)) for clean in cleans]
  config = n2n.train_config(
      model_dir=str(model_dir), noise='none', method='pairs', crop_size=64, batch_size=4,
      train_steps=steps, network_width=network_width, precision='float32', seed=seed,
      steps_per_loop=10, log_every=10, learning_rate=1e-3, rampdown_fraction=0.0)
  n2n.train(config, captures=captures, progress_bar=False)
  clean = clean_image(rng, 96, 128)
  held_out = noisy(rng, clean)
  denoised = n2n.Denoiser.load(model_dir, precision='float32')(held_out)
  psnr = lambda image: 10 * np.log10(1.0 / np.mean((image.astype(np.float64) - clean) ** 2))
  return float(psnr(denoised) - psnr(held_out))
