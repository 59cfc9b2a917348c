"""The large noisy photograph the denoising benches time: the demo's Hubble
photograph mirror-tiled to any size, with Gaussian noise of sigma 25."""

import os

import numpy as np

from bench import REPO_ROOT
from n2n.data import native_images

PHOTOGRAPH = os.path.join(REPO_ROOT, 'datasets', 'demo', 'train', 'hubble_deep_field.png')


def noisy_photograph(height, width):
  """[height, width, 3] uint8: the photograph mirror-tiled, noise of sigma 25 (seed 0)."""
  photograph = native_images.read_pages(PHOTOGRAPH)[0][:, :, :3].astype(np.float32) / 255.0
  mirrored = np.concatenate([photograph, photograph[::-1]], axis=0)
  mirrored = np.concatenate([mirrored, mirrored[:, ::-1]], axis=1)
  repeats = (-(-height // mirrored.shape[0]), -(-width // mirrored.shape[1]), 1)
  clean = np.tile(mirrored, repeats)[:height, :width]
  noisy = clean + np.random.default_rng(0).normal(0, 25 / 255, clean.shape)
  return np.round(np.clip(noisy, 0, 1) * 255).astype(np.uint8)
