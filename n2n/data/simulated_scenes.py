"""Scene folders of simulated sensor captures, made from clean photographs.

For trying the real-data path (datasets/make_tfrecords.py --scenes, train.py
--noise=none) without a camera, and for its tests. The noise is Gaussian with
a signal-dependent variance, gain * x + read_variance (shot noise plus read
noise, the usual sensor model), clipped to the sensor's range and quantised
to 16 bits: none of n2n's synthetic corruptions produces it, so a model that
denoises it has learnt from the noisy files alone.
"""

import os

import numpy as np

from n2n.data import file_lists
from n2n.data import native_images
from n2n.data import rgb_images


def sensor_noise(clean, gain, read_variance, rng):
  """One noisy capture of a clean image.

  Args:
    clean: [H, W, C] float in [0, 1].
    gain: variance per unit signal (shot noise).
    read_variance: signal-independent variance (read noise).
    rng: numpy Generator.

  Returns:
    [H, W, C] float32 in [0, 1].
  """
  sigma = np.sqrt(gain * clean + read_variance)
  return np.clip(clean + sigma * rng.standard_normal(clean.shape), 0.0, 1.0).astype(np.float32)


def to_uint16(values):
  """[0, 1] float -> uint16 (rounded)."""
  return np.round(np.clip(values, 0.0, 1.0) * 65535).astype(np.uint16)


def write_scenes(clean_dir, output_dir, captures=2, gain=0.01, read_variance=0.0004,
                 grayscale=False, reference=True, crop=0, seed=0):
  """Writes one scene folder per clean image: `captures` noisy 16-bit PNGs
  (capture_00.png, ...) and, if asked, reference.png (the clean image, 16-bit).

  Args:
    clean_dir: folder of clean photographs (any format n2n reads).
    output_dir: where the scene folders go, one per photograph, named after it.
    captures: noisy captures per scene.
    gain, read_variance: see sensor_noise.
    grayscale: write single-channel captures (luma).
    reference: write reference.png.
    crop: if > 0, keep only the top-left crop x crop pixels (small test scenes).
    seed: seed of the noise.

  Returns:
    list of the scene folders written.
  """
  written = []
  rng = np.random.default_rng(seed)
  for path in file_lists.files_below(clean_dir):
    try:
      image = native_images.read_pages(path)[0]
    except rgb_images.ImageDecodeError:
      continue
    colour, _ = native_images.split_alpha(image)
    clean = native_images.to_unit_range(colour)
    if clean.shape[2] == 1 and not grayscale:
      clean = np.repeat(clean, 3, axis=2)
    if grayscale and clean.shape[2] == 3:
      clean = rgb_images.convert_channels(clean, 1)
    if crop:
      clean = clean[:crop, :crop]
    folder = os.path.join(output_dir, os.path.splitext(os.path.basename(path))[0])
    os.makedirs(folder, exist_ok=True)
    pages = [to_uint16(sensor_noise(clean, gain, read_variance, rng)) for _ in range(captures)]
    if reference:
      pages.append(to_uint16(clean))
    names = [f'capture_{index:02d}.png' for index in range(captures)] + ['reference.png'][:reference]
    for name, page in zip(names, pages):
      with open(os.path.join(folder, name), 'wb') as output:
        output.write(native_images.encode_pages([page[:, :, 0] if grayscale else page], 'png'))
    written.append(folder)
  return written
