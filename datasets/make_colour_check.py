"""The colour check: saturated-colour photographs unlike the demo's training set.

  python datasets/make_colour_check.py --skimage_data=PATH/skimage/data \
      --output_dir=datasets/colour_check/photos

The nine demo training photographs are grey, orange, brown and sky blue: a model
that learnt their colours and nothing else turns saturated greens olive
(issue 20). These images hold colours the demo set lacks, on structures partly
held out from it: the two validation photographs with their hues turned, and
grayscale photographs (four not in the demo set, four of its own) tinted
with one saturated colour each. Every source is public domain or CC0
(datasets/colour_check/SOURCES.md). The outputs are committed; this script
says exactly how they were made (it reads scikit-image's sample files, which
`pip download scikit-image` brings, and the demo folder).
"""

import os

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.data import native_images  # pylint: disable=g-import-not-at-top

DEMO = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'demo')

# (output name, source, how): 'hue DEGREES' turns the hue in YIQ space (luma kept)
# and doubles the chroma; 'tint R,G,B' stretches the luma's 1st-99th percentiles to
# 0.05-0.95 and multiplies it by a saturated colour.
RECIPES = (
    ('cat_green', 'demo:val/chelsea.png', 'hue 240'),
    ('coffee_violet', 'demo:val/coffee.png', 'hue 100'),
    ('coins_green', 'skimage:coins.png', 'tint 0.15,1.0,0.1'),
    ('clock_magenta', 'skimage:clock_motion.png', 'tint 1.0,0.1,0.85'),
    ('text_cyan', 'skimage:text.png', 'tint 0.0,0.8,1.0'),
    ('camera_yellow', 'demo:train/camera.png', 'tint 1.0,0.85,0.0'),
    ('cell_violet', 'skimage:cell.png', 'tint 0.55,0.0,1.0'),
    ('meadow_green', 'demo:train/grass.png', 'tint 0.3,1.0,0.05'),
    ('brick_red', 'demo:train/brick.png', 'tint 1.0,0.08,0.05'),
    ('gravel_blue', 'demo:train/gravel.png', 'tint 0.05,0.3,1.0'),
)
# Larger sources are cropped to this (centre), to keep the files small.
MAX_SIDE = 256
# YIQ: luma and two chroma axes (NTSC 1953 matrix).
RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])

flags.DEFINE_string('skimage_data', None, "scikit-image's skimage/data folder.")
flags.DEFINE_string('output_dir', os.path.join(os.path.dirname(DEMO), 'colour_check', 'photos'),
                    'Where the PNGs go.')
flags.mark_flags_as_required(['skimage_data'])
FLAGS = flags.FLAGS


def turn_hue(rgb, degrees, chroma_gain=2.0):
  """[H, W, 3] float in [0, 1] -> the same with its hue turned, luma kept, clipped."""
  yiq = rgb @ RGB_TO_YIQ.T
  angle = np.deg2rad(degrees)
  rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
  yiq[..., 1:] = chroma_gain * (yiq[..., 1:] @ rotation.T)
  return np.clip(yiq @ np.linalg.inv(RGB_TO_YIQ).T, 0.0, 1.0)


def tint(gray, colour):
  """[H, W] float in [0, 1] -> [H, W, 3]: the luma times one saturated colour."""
  return gray[..., np.newaxis] * np.asarray(colour, np.float64)


def centre_crop(image, side):
  top = max(0, (image.shape[0] - side) // 2)
  left = max(0, (image.shape[1] - side) // 2)
  return image[top:top + side, left:left + side]


def make(source, how):
  """One colour-check image, [H, W, 3] uint8."""
  colour, _ = native_images.split_alpha(native_images.read_pages(source)[0])
  values = native_images.to_unit_range(colour).astype(np.float64)
  kind, argument = how.split(' ')
  if kind == 'hue':
    values = turn_hue(np.repeat(values, 3, -1) if values.shape[-1] == 1 else values,
                      float(argument))
  else:
    gray = values[..., 0] if values.shape[-1] == 1 else values @ RGB_TO_YIQ[0]
    low, high = np.percentile(gray, [1, 99])
    gray = np.clip(0.05 + 0.9 * (gray - low) / max(high - low, 1e-6), 0.0, 1.0)
    values = tint(gray, [float(part) for part in argument.split(',')])
  return np.round(centre_crop(values, MAX_SIDE) * 255).astype(np.uint8)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  os.makedirs(FLAGS.output_dir, exist_ok=True)
  for name, source, how in RECIPES:
    where, file_name = source.split(':')
    path = os.path.join(DEMO if where == 'demo' else FLAGS.skimage_data, file_name)
    with open(os.path.join(FLAGS.output_dir, f'{name}.png'), 'wb') as output:
      output.write(native_images.encode_pages([make(path, how)], 'png'))
    print(f'{name}.png <- {source} ({how})')


if __name__ == '__main__':
  app.run(main)
