"""The shipped camera model's training cameras (bench/camera_model.py, and the results
page that names them), its learning test (tests/test_shipped_models.py) and the spread
of that test's figure over seeds (python -m bench.camera_model --held_out_seeds=6): a
photograph the model never saw, through a camera of the calibrated profile 1."""

import glob
import os

import imageio.v3 as iio
import numpy as np

from bench import REPO_ROOT
import n2n
from n2n.data import camera_pipeline

# The cameras the model learns, each drawn per scene: uniform in each range (the shot
# variance log-uniform), read noise on Brooks et al.'s line through the shot. They
# bracket the calibrated profiles (bench/camera_calibration.py: shot 0.0015 with chroma
# 2 and luma 0.45 noise reduction; shot 0.0003 without; optics 0.65), whose output
# diagnose.py reads within 0.06 of two real-noise DSLR benchmarks at lags 1-4
# (docs/diagnosis.md). The shot reaches Brooks et al.'s upper end (0.012), four times the
# variance of camera_srgb's cameras (0.003): chosen by looking at real_dev's smartphone
# photographs (sidd24, noisy 23.5 dB on average), noisier than those benchmarks, on which
# camera_srgb left noise. The model this trains ships as camera_srgb_high_iso
# (bench/camera_model.py says which commit trained which).
TRAINING_CAMERAS = {
    'shot': (0.0002, 0.012),
    'chroma_blur': (0.0, 2.5),
    'luma_blur': (0.0, 0.6),
    'sharpen': (0.0, 0.5),
    'optics_blur': (0.45, 0.85),
    'jpeg_quality': (0, 90, 95),  # one of these (0: no JPEG)
}
# The demo's validation photographs: bench/camera_model.py trains on datasets/demo/train only.
HELD_OUT = ('datasets/demo/val/chelsea.png', 'datasets/demo/val/coffee.png')
# bench/camera_calibration.py's profile 1 (noise reduction), calibrated to real photographs.
PROFILE = {'shot_range': (0.0015, 0.0015), 'chroma_blur': 2.0, 'luma_blur': 0.45,
           'optics_blur': 0.65}


def demo_photograph_paths():
  """The demo's photographs (datasets/demo/train and val), absolute paths, sorted."""
  return sorted(glob.glob(os.path.join(REPO_ROOT, 'datasets', 'demo', '*', '*.png')))


def clean_photograph(path):
  """[H, W, 3] float64 in [0, 1] of the 8-bit PNG at path (absolute, or relative to the
  repository; grayscale as RGB, alpha dropped), cut to whole Bayer cells: what the
  camera simulator takes."""
  image = iio.imread(os.path.join(REPO_ROOT, path))
  image = np.stack([image] * 3, axis=-1) if image.ndim == 2 else image[..., :3]
  return camera_pipeline.even_crop(image.astype(np.float64) / 255.0)


def camera_scenes(photographs, shot, sharpen, jpeg_quality, chroma_blur, luma_blur,
                  optics_blur, seed):
  """(scenes, references) of one camera setting: two captures ([H, W, 3] uint8) of each
  photograph, each through its own camera (colour matrix, white balance) drawn from
  `seed`, and each one's noise-free rendering (uint8)."""
  rng = np.random.default_rng(seed)
  scenes, references = [], []
  for clean in photographs:
    settings = camera_pipeline.random_settings(rng, (shot, shot), sharpen, jpeg_quality,
                                               chroma_blur, luma_blur, optics_blur)
    captures, reference = camera_pipeline.captures_of(clean, settings, 2, rng)
    scenes.append(tuple(captures))
    references.append(reference)
  return scenes, references


def held_out_capture(path, seed):
  """(capture, reference): [H, W, 3] uint8 of the photograph at path (relative to the
  repository) through a camera of PROFILE drawn with seed (colour matrix, white
  balance, read noise, the capture's noise), and its noise-free rendering."""
  rng = np.random.default_rng(seed)
  settings = camera_pipeline.random_settings(rng, **PROFILE)
  captures, reference = camera_pipeline.captures_of(clean_photograph(path), settings, 1, rng)
  return captures[0], reference


def diagnosed_level(capture):
  """[C] the level n2n.diagnose reads from one capture ([H, W, C], 0-1), mean over its
  signal bins; ValueError where a channel has no flat patch to read it from."""
  level = np.nanmean(n2n.diagnose([capture]).profile.sigma, axis=0)
  if not np.all(np.isfinite(level)):
    raise ValueError(f'diagnose read no level in some channel of a capture: {level}')
  return level


def psnr(image, reference):
  """PSNR in dB of two images on a 0-255 scale (uint8, or float)."""
  error = np.mean((image.astype(np.float64) - reference.astype(np.float64)) ** 2)
  return float(10 * np.log10(255.0 ** 2 / error))


def gain(denoiser, path, seed):
  """The PSNR gain in dB of denoiser (fn(uint8 image) -> uint8 image, e.g. an
  n2n.Denoiser) on held_out_capture(path, seed), against its rendering."""
  capture, reference = held_out_capture(path, seed)
  return psnr(denoiser(capture), reference) - psnr(capture, reference)
