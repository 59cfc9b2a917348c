"""The Python front door as a new user calls it, on what this checkout holds.

Issue 51's outside check trains and denoises hidden data through `n2n.train`
and `n2n.Denoiser`; this runs the same calls on data anyone can remake:

- photographs: the demo's photographs (datasets/demo/train and val, grayscale
  ones as RGB), each with Gaussian noise of sigma 25 (0-255 units, seed 0,
  rounded to uint8) as its one noisy capture; Neighbor2Neighbor trained on those
  arrays for --photo_steps steps (crop 128, batch 8, the other settings the
  defaults), then every photograph denoised through n2n.Denoiser and scored
  against its clean original;
- stacks: the procedural phantom (n2n/data/phantom.py), two acquisitions of
  --stacks volumes as ZYX uint16 arrays; Noise2Noise pairs trained in 3D for
  --stack_steps steps (crop 64 x 64, 16 planes, batch 2), then a held-out
  phantom's first acquisition denoised and scored against its reference
  (PSNR over the reference's range: the gain does not depend on the peak).

  python -m bench.front_door --output=docs/bench/front_door.json \
      --picture=docs/python_api_front_door.png

About 15 minutes on 2 CPU cores at the defaults (one learning rate, one seed); --quick
checks that it runs.
"""

import glob
import os
import tempfile
import time

from absl import app
from absl import flags
import imageio.v3 as iio
import numpy as np

from bench import REPO_ROOT
from bench import json_output
from bench import provenance
import n2n
from n2n import config as config_lib
from n2n import run_dir
from n2n.data import phantom

flags.DEFINE_integer('photo_steps', 600, 'Neighbor2Neighbor steps on the photographs.',
                     lower_bound=1)
flags.DEFINE_integer('stack_steps', 300, '3D pairs steps on the phantom stacks.', lower_bound=1)
flags.DEFINE_integer('stacks', 3, 'Phantom volumes to train on.', lower_bound=1)
flags.DEFINE_float('sigma', 25.0, 'Gaussian noise of the photographs, 0-255 units.')
flags.DEFINE_list('learning_rates', ['0'], 'Peak learning rates to train each section at (0: the '
                  'default train_config chooses), one run each.')
flags.DEFINE_list('seeds', ['0'], 'Training seeds (initial weights, crops, pairings) to run '
                  'each learning rate at, one run each; the data are the same at every seed.')
flags.DEFINE_boolean('tta', False, 'Also denoise each photograph with test-time augmentation '
                     '(the 8 flips and turns averaged) and score that too.')
flags.DEFINE_list('sections', ['photographs', 'stacks'], 'photographs, stacks.')
flags.DEFINE_boolean('quick', False, 'A few steps of each, to check that the bench runs.')
flags.DEFINE_string('output', '', 'Write the results as JSON here.')
flags.DEFINE_string('picture', '', 'Write a PNG here: a crop of one photograph and the middle '
                    'plane of the held-out stack, noisy | denoised | clean, from the first '
                    'learning rate\'s runs.')
FLAGS = flags.FLAGS

HELD_OUT_SEED = 100
# The photograph and the crop of it the picture shows.
PICTURE_PHOTOGRAPH = 'chelsea.png'
PICTURE_CROP = 192


def psnr(estimate, reference, peak):
  """PSNR in dB of estimate against reference for a signal of that peak."""
  error = np.mean((np.asarray(estimate, np.float64) - np.asarray(reference, np.float64)) ** 2)
  return float(10 * np.log10(peak ** 2 / error))


def trained_learning_rate(model_dir):
  """The peak learning rate the run in model_dir trained at, as its config.json
  (its data resolved) gives it."""
  return config_lib.peak_learning_rate(
      config_lib.read_train_config(run_dir.read_config(model_dir)))


def demo_photographs():
  """(name, [H, W, 3] uint8) of the demo's photographs, grayscale ones as RGB."""
  found = []
  for path in sorted(glob.glob(os.path.join(REPO_ROOT, 'datasets', 'demo', '*', '*.png'))):
    image = iio.imread(path)
    if image.ndim == 2:
      image = np.stack([image] * 3, axis=-1)
    found.append((os.path.basename(path), image[..., :3]))
  return found


def photographs(folder, steps, sigma, learning_rate, seed, tta):
  rng = np.random.default_rng(0)
  clean = demo_photographs()
  noisy = [np.clip(np.round(image + rng.normal(0, sigma, image.shape)), 0, 255).astype(np.uint8)
           for _, image in clean]
  config = n2n.train_config(
      model_dir=os.path.join(folder, f'photos_{learning_rate:g}_seed{seed}'), noise='none',
      method='neighbor2neighbor', crop_size=128, batch_size=8, train_steps=steps,
      learning_rate=learning_rate, seed=seed)
  start = time.time()
  n2n.train(config, noisy=noisy, progress_bar=False)
  seconds = time.time() - start
  denoiser = n2n.Denoiser.load(config.run.model_dir)
  rows, panels = [], None
  for (name, image), capture in zip(clean, noisy):
    denoised = denoiser(capture)
    assert denoised.shape == capture.shape and denoised.dtype == capture.dtype
    if name == PICTURE_PHOTOGRAPH:
      panels = [picture[:PICTURE_CROP, -PICTURE_CROP:] for picture in (capture, denoised, image)]
    rows.append({'image': name, 'shape': list(image.shape),
                 'noisy_psnr': psnr(capture, image, 255.0),
                 'denoised_psnr': psnr(denoised, image, 255.0)})
    if tta:
      rows[-1]['denoised_tta_psnr'] = psnr(denoiser(capture, tta=True), image, 255.0)
  result = {'steps': steps, 'sigma': sigma, 'seed': seed, 'train_seconds': seconds,
            'images': rows, 'learning_rate': trained_learning_rate(config.run.model_dir),
            'mean_noisy_psnr': float(np.mean([row['noisy_psnr'] for row in rows])),
            'mean_denoised_psnr': float(np.mean([row['denoised_psnr'] for row in rows])),
            'mean_gain_db': float(np.mean([row['denoised_psnr'] - row['noisy_psnr']
                                           for row in rows]))}
  if tta:
    result['mean_gain_tta_db'] = float(np.mean([row['denoised_tta_psnr'] - row['noisy_psnr']
                                                for row in rows]))
  return result, panels


def stacks(folder, steps, count, learning_rate, seed):
  spec = phantom.PhantomSpec()
  captures = [tuple(phantom.phantom_scene(spec, seed)[0]) for seed in range(10, 10 + count)]
  config = n2n.train_config(
      model_dir=os.path.join(folder, f'stacks_{learning_rate:g}_seed{seed}'), noise='none',
      method='pairs', crop_size=64, crop_depth=16, batch_size=2, train_steps=steps,
      learning_rate=learning_rate, seed=seed)
  start = time.time()
  n2n.train(config, captures=captures, axes='ZYX', progress_bar=False)
  seconds = time.time() - start
  held_out, reference = phantom.phantom_scene(spec, HELD_OUT_SEED)
  noisy = held_out[0]
  denoised = n2n.Denoiser.load(config.run.model_dir)(noisy, axes='ZYX')
  peak = float(reference.max() - reference.min())
  middle = noisy.shape[0] // 2
  # The middle planes on 8 bits, the reference's range to 0-255.
  panels = [np.clip((plane[middle].astype(np.float64) - reference.min()) / peak * 255, 0, 255)
            .astype(np.uint8)[..., np.newaxis].repeat(3, axis=-1)
            for plane in (noisy, denoised, reference)]
  noisy_psnr = psnr(noisy, reference, peak)
  denoised_psnr = psnr(denoised, reference, peak)
  return {'steps': steps, 'seed': seed, 'volumes': count, 'shape': list(noisy.shape),
          'learning_rate': trained_learning_rate(config.run.model_dir),
          'train_seconds': seconds, 'shape_kept': list(denoised.shape) == list(noisy.shape),
          'dtype_kept': str(denoised.dtype) == str(noisy.dtype), 'noisy_psnr': noisy_psnr,
          'denoised_psnr': denoised_psnr, 'gain_db': denoised_psnr - noisy_psnr}, panels


def main(argv):
  del argv
  photo_steps, stack_steps = ((20, 10) if FLAGS.quick else (FLAGS.photo_steps, FLAGS.stack_steps))
  results = provenance.stamp(REPO_ROOT)
  pictures = {}
  with tempfile.TemporaryDirectory() as folder:
    sections = {
        'photographs': lambda rate, seed: photographs(folder, photo_steps, FLAGS.sigma, rate,
                                                      seed, FLAGS.tta),
        'stacks': lambda rate, seed: stacks(folder, stack_steps, FLAGS.stacks, rate, seed)}
    for section, run in sections.items():
      if section not in FLAGS.sections:
        continue
      results[section] = []
      for rate, seed in [(rate, seed) for rate in FLAGS.learning_rates for seed in FLAGS.seeds]:
        row, panels = run(float(rate), int(seed))
        pictures.setdefault(section, panels)
        results[section].append(row)
        noisy, denoised = ((row['mean_noisy_psnr'], row['mean_denoised_psnr'])
                           if section == 'photographs' else (row['noisy_psnr'],
                                                             row['denoised_psnr']))
        print(f"{section} at learning rate {row['learning_rate']:g}, seed {seed}: {noisy:.2f} -> "
              f"{denoised:.2f} dB ({denoised - noisy:+.2f})"
              + (f"; with TTA {row['mean_gain_tta_db']:+.2f}" if 'mean_gain_tta_db' in row else ''))
  if FLAGS.output:
    json_output.write_results(FLAGS.output, results)
  if FLAGS.picture:
    iio.imwrite(FLAGS.picture, picture_of(pictures))


def picture_of(pictures):
  """[H, W, 3] uint8: each section's panels (noisy, denoised, clean) side by side,
  the sections one under the other, 4 white pixels between."""
  rows = []
  for panels in pictures.values():
    height = max(panel.shape[0] for panel in panels)
    gap = np.full((height, 4, 3), 255, np.uint8)
    row = [np.pad(panel, [(0, height - panel.shape[0]), (0, 0), (0, 0)]) for panel in panels]
    rows.append(np.concatenate([row[0], gap, row[1], gap, row[2]], axis=1))
  width = max(row.shape[1] for row in rows)
  rows = [np.pad(row, [(0, 0), (0, width - row.shape[1]), (0, 0)], constant_values=255)
          for row in rows]
  gap = np.full((4, width, 3), 255, np.uint8)
  return np.concatenate([part for row in rows for part in (row, gap)][:-1], axis=0)


if __name__ == '__main__':
  app.run(main)
