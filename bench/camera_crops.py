"""Pictures of a shadow and a highlight crop of each held-out photograph through a
calibrated camera, denoised by what needs no training on them: the shipped model
camera_srgb (as is, and with --tta) and CBM3D at the level diagnose reads; and by the
single-image default diagnose recommends for them, --method=recorrupted, and the one it
recommended before, --method=neighbor2neighbor, each trained --train_steps steps on the
two noisy captures alone (crop 128, batch 8, defaults otherwise: what a photographer with
these two photographs would run); the noisy capture and its noise-free rendering beside
them, each crop's PSNR under it.

  python -m bench.camera_crops --picture=docs/results/camera_crops.png \
      --output=docs/bench/camera_crops.json

The captures are the shipped model's learning test's (bench/recipes/camera.py: the
demo's chelsea and coffee, which it never trained on, through a camera of the
calibrated profile 1, seed --seed). The crops are CROP pixels square, on a grid of
CROP/4: in the noise-free rendering's luminance (the mean of its sRGB channels, 0-1),
the darkest whose mean is at least SHADOW_FLOOR and the brightest whose mean is at most
HIGHLIGHT_CEILING. Shown at 2x, nearest neighbour. Needs bm3d
(pip install bm3d). A few minutes on 2 cores (CBM3D on each photograph), and about 5 more per trained method.
"""

import json
import os
import tempfile

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
from PIL import Image  # pylint: disable=g-import-not-at-top
from PIL import ImageDraw  # pylint: disable=g-import-not-at-top

import n2n  # pylint: disable=g-import-not-at-top
from n2n import shipped  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import classical  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.recipes import camera as camera_recipe  # pylint: disable=g-import-not-at-top

flags.DEFINE_integer('seed', 3, 'The camera and noise seed of each held-out capture.')
flags.DEFINE_string('picture', '', 'Write the picture here (PNG).')
flags.DEFINE_string('output', '', 'Write the crops\' places and PSNRs here as JSON.')
flags.DEFINE_integer('train_steps', 1200, 'Training steps of the trained column.')
FLAGS = flags.FLAGS

CROP = 96
SHADOW_FLOOR = 0.1
HIGHLIGHT_CEILING = 0.9
SCALE = 2
LABEL_HEIGHT = 16
TRAINED_METHODS = ('recorrupted', 'neighbor2neighbor')
COLUMNS = ('noisy', f'{shipped.CAMERA_SRGB}', f'{shipped.CAMERA_SRGB} --tta',
           'CBM3D, diagnosed level') + tuple(f'{method}, trained on both'
                                             for method in TRAINED_METHODS) + ('noise-free',)


def crop_corners(reference):
  """{'shadow': (y, x), 'highlight': (y, x)}: the crops' top-left corners in reference
  ([H, W, 3] uint8), chosen as the module docstring says."""
  luminance = reference.astype(np.float64).mean(axis=2) / 255.0
  step = CROP // 4
  means = {(y, x): luminance[y:y + CROP, x:x + CROP].mean()
           for y in range(0, luminance.shape[0] - CROP + 1, step)
           for x in range(0, luminance.shape[1] - CROP + 1, step)}
  shadows = {corner: mean for corner, mean in means.items() if mean >= SHADOW_FLOOR}
  highlights = {corner: mean for corner, mean in means.items() if mean <= HIGHLIGHT_CEILING}
  return {'shadow': min(shadows, key=shadows.get),
          'highlight': max(highlights, key=highlights.get)}


def trained_denoiser(method, captures, folder):
  """n2n.Denoiser of method trained FLAGS.train_steps steps on the [H, W, 3] uint8
  captures alone, in folder; and its config.json's method settings."""
  config = n2n.train_config(model_dir=folder, noise='none', method=method, crop_size=128,
                            batch_size=8, train_steps=FLAGS.train_steps)
  n2n.train(config, noisy=captures, progress_bar=False)
  with open(os.path.join(folder, 'config.json')) as saved:
    settings = json.load(saved)['method'][method]
  return n2n.Denoiser.load(folder), settings


def denoised_versions(capture, trained):
  """[len(COLUMNS) - 1] uint8 images: the capture, then each way of denoising it
  (trained: the trained columns' n2n.Denoiser, in TRAINED_METHODS' order)."""
  model = n2n.Denoiser.load(shipped.folder(shipped.CAMERA_SRGB))
  level = camera_recipe.diagnosed_level(capture.astype(np.float32) / 255.0)
  cbm3d = classical.bm3d_8_bit_denoiser(level)(capture)
  return [capture, model(capture), model(capture, tta=True), cbm3d] + [
      denoiser(capture) for denoiser in trained]


def tile(image, text):
  """The crop at SCALE x with text on a strip beneath: a PIL image."""
  enlarged = Image.fromarray(image).resize((CROP * SCALE, CROP * SCALE), Image.NEAREST)
  canvas = Image.new('RGB', (CROP * SCALE, CROP * SCALE + LABEL_HEIGHT), (255, 255, 255))
  canvas.paste(enlarged, (0, 0))
  ImageDraw.Draw(canvas).text((4, CROP * SCALE + 2), text, fill=(0, 0, 0))
  return canvas


def main(argv):
  del argv
  results = {**provenance.stamp(REPO_ROOT), 'seed': FLAGS.seed, 'crop': CROP,
             'shadow_floor': SHADOW_FLOOR, 'highlight_ceiling': HIGHLIGHT_CEILING,
             'scale': SCALE, 'label_height': LABEL_HEIGHT, 'bm3d': classical.bm3d_version(),
             'profile': camera_recipe.PROFILE, 'columns': list(COLUMNS), 'crops': []}
  rows = []
  held_out = [camera_recipe.held_out_capture(path, FLAGS.seed) for path in camera_recipe.HELD_OUT]
  folder = tempfile.TemporaryDirectory()
  trained, settings = [], {}
  for method in TRAINED_METHODS:
    denoiser, settings[method] = trained_denoiser(
        method, [capture for capture, _ in held_out], os.path.join(folder.name, method))
    trained.append(denoiser)
  results.update(train_steps=FLAGS.train_steps, trained_methods=list(TRAINED_METHODS),
                 trained_settings=settings)
  for path, (capture, reference) in zip(camera_recipe.HELD_OUT, held_out):
    versions = denoised_versions(capture, trained) + [reference]
    for kind, (y, x) in crop_corners(reference).items():
      crops = [version[y:y + CROP, x:x + CROP] for version in versions]
      truth = crops[-1]
      psnrs = [round(camera_recipe.psnr(crop, truth), 2) for crop in crops[:-1]]
      name = f'{os.path.splitext(os.path.basename(path))[0]}, {kind}'
      results['crops'].append({'crop': name, 'corner_yx': [y, x],
                               'mean_luminance': round(float(truth.mean()) / 255.0, 3),
                               'psnr_db': dict(zip(COLUMNS[:-1], psnrs))})
      print(results['crops'][-1], flush=True)
      labels = [f'{column}: {value:.2f} dB' for column, value in zip(COLUMNS, psnrs)]
      rows.append([tile(crop, label)
                   for crop, label in zip(crops, labels + [f'{COLUMNS[-1]} ({name})'])])
  folder.cleanup()
  json_output.write_results(FLAGS.output, results)
  if FLAGS.picture:
    width, height = rows[0][0].size
    picture = Image.new('RGB', (width * len(COLUMNS), height * len(rows)), (255, 255, 255))
    for row, tiles in enumerate(rows):
      for column, image in enumerate(tiles):
        picture.paste(image, (column * width, row * height))
    picture.save(FLAGS.picture)
    print('wrote', FLAGS.picture)


if __name__ == '__main__':
  app.run(main)
