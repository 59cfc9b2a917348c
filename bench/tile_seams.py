"""How far tiled denoising departs from whole-image denoising, per tile size and overlap.

  python -m bench.tile_seams --model=runs/demo

Takes a 1024x1024 noisy image that also fits whole (the demo's Hubble
photograph, reflect-padded, plus Gaussian noise of sigma 25, seed 0),
denoises it whole and in tiles, and prints the largest per-pixel difference
in 8-bit steps (1/255) and the seconds each took.
"""

import os
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import imageio.v3 as iio  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('model', os.path.join(REPO_ROOT, 'runs', 'demo'), 'A trained run.')
flags.DEFINE_string('settings', '512:32,512:64,512:96,256:64', 'TILE:OVERLAP pairs to try.')
flags.DEFINE_integer('size', 1024, 'Side of the square test image.')
FLAGS = flags.FLAGS


def test_image(size):
  """[size, size, 3] float32: the Hubble photograph padded, plus sigma-25 noise."""
  clean = iio.imread(os.path.join(REPO_ROOT, 'datasets', 'demo', 'train',
                                  'hubble_deep_field.png')).astype(np.float32) / 255.0
  clean = np.pad(clean, ((0, max(0, size - clean.shape[0])), (0, max(0, size - clean.shape[1])),
                         (0, 0)), mode='reflect')[:size, :size]
  return clean + np.random.default_rng(0).normal(0, 25 / 255, clean.shape).astype(np.float32)


def main(argv):
  del argv
  model = restore.restore_model(FLAGS.model).model
  image = test_image(FLAGS.size)
  started = time.perf_counter()
  whole = whole_images.make_denoiser(model, tile_size=FLAGS.size)(image)
  print(f'whole {FLAGS.size}x{FLAGS.size}: {time.perf_counter() - started:.1f} s')
  for setting in FLAGS.settings.split(','):
    tile, overlap = (int(value) for value in setting.split(':'))
    started = time.perf_counter()
    tiled = whole_images.make_denoiser(model, tile_size=tile, overlap=overlap)(image)
    seconds = time.perf_counter() - started
    # Compared as written: clipped to [0, 1] and rounded to 8 bits.
    as_written = lambda values: np.round(np.clip(values, 0, 1) * 255)
    difference = np.abs(as_written(tiled) - as_written(whole))
    print(f'tile {tile} overlap {overlap}: max {np.abs(tiled - whole).max() * 255:.3f}/255 '
          f'before rounding, {difference.max():.0f}/255 written '
          f'({(difference > 0).mean() * 100:.3f}% of values differ), {seconds:.1f} s')


if __name__ == '__main__':
  app.run(main)
