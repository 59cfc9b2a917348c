"""How well the noise diagnosis reads noise whose truth is known, on the demo
photographs (train and val, 11 images): the basis of the tolerances in
docs/diagnosis.md.

  python -m bench.diagnosis_accuracy --output=docs/bench/diagnosis_accuracy.json \
      --markdown=docs/bench/diagnosis_accuracy.md

For each kind of noise it compares the single-image estimate (flattest patches
of the first capture of each photograph) with the truth: set by hand for
Gaussian noise (the level; no correlation) and for box-filtered noise
(correlation 0.5 at lag 1, 0 beyond), and measured from two captures on every
pixel for the simulators (camera, sCMOS-like), whose own settings have no
closed form in sRGB. The level is compared bin by bin: the estimate's sigma in
each signal bin against the truth's at the same signal. Then, for denoise.py's
per-file check (512 patches of one file), each photograph alone with Gaussian
noise and with camera noise, and the check's time on a 12-megapixel image.
Pure numpy on one core.
"""

import glob
import json
import os
import time

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import imageio.v3 as iio  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.data import camera_pipeline  # pylint: disable=g-import-not-at-top
from n2n.data import microscope_noise  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import noise_statistics  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import report  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.recipes import camera as camera_recipe  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('output', '', 'Write the results here as JSON.')
flags.DEFINE_string('markdown', '', 'Write the results here as a Markdown table.')
flags.DEFINE_integer('seed', 0, 'Noise seed.')
flags.DEFINE_string('render', '', 'Measure nothing: write --markdown from this JSON, which this '
                    'tool wrote.')
FLAGS = flags.FLAGS

# What remakes the committed JSON and its page.
REMAKE = ('python -m bench.diagnosis_accuracy --output=docs/bench/diagnosis_accuracy.json '
          '--markdown=docs/bench/diagnosis_accuracy.md')


def photographs():
  """The demo photographs, [H, W, 3] float in [0, 1] (grayscale ones repeated)."""
  images = []
  for path in camera_recipe.demo_photograph_paths():
    image = iio.imread(path).astype(np.float64) / 255.0
    image = image[..., :3] if image.ndim == 3 else np.repeat(image[..., None], 3, axis=2)
    images.append(camera_pipeline.even_crop(image))
  return images


def quantised(values, levels=255.0):
  return np.round(np.clip(values, 0.0, 1.0) * levels) / levels


def _box(white):
  """Averaged over 2 neighbours along y and x: correlation 0.5 at lag 1 along
  each axis, 0 beyond (worked out by hand)."""
  noise = (white[:-1] + white[1:]) / np.sqrt(2)
  return (noise[:, :-1] + noise[:, 1:]) / np.sqrt(2)


def cases(images, rng):
  """(name, first captures, second captures or None, truth dict or None)."""
  for sigma in (2, 5, 15, 30):
    yield (f'gaussian sigma {sigma}/255, independent',
           [quantised(image + sigma / 255 * rng.standard_normal(image.shape)) for image in images],
           None, {'sigma': sigma / 255, 'correlation_x': [0.0] * 4, 'correlation_y': [0.0] * 4})
  noisy = []
  for image in images:
    noise = _box(10 / 255 * rng.standard_normal(image.shape))
    noisy.append(quantised(image[:noise.shape[0], :noise.shape[1]] + noise))
  yield ('box-filtered gaussian sigma 10/255', noisy, None,
         {'sigma': 10 / 255, 'correlation_x': [0.5, 0, 0, 0], 'correlation_y': [0.5, 0, 0, 0]})
  for title, shot, sharpen, quality in (('camera, raw shot 0.002-0.01, no JPEG', (0.002, 0.01),
                                         0.0, 0),
                                        ('camera, raw shot 0.0005-0.002, sharpened, JPEG 90',
                                         (0.0005, 0.002), 0.5, 90)):
    firsts, seconds = [], []
    for index, image in enumerate(images):
      settings = camera_pipeline.random_settings(np.random.default_rng(index), shot, sharpen,
                                                 quality)
      captures, _ = camera_pipeline.captures_of(image, settings, 2, rng)
      firsts.append(captures[0] / 255.0)
      seconds.append(captures[1] / 255.0)
    yield title, firsts, seconds, None
  settings = microscope_noise.ScmosSettings()
  firsts, seconds = [], []
  for image in images:
    luma = image.mean(axis=2)
    firsts.append(microscope_noise.capture(luma, settings, rng)[..., None] / 65535.0)
    seconds.append(microscope_noise.capture(luma, settings, rng)[..., None] / 65535.0)
  yield 'sCMOS-like, row sigma 3 counts', firsts, seconds, None


def per_file(images, rng):
  """denoise.py's check (512 patches) on each photograph alone: its lag-1
  correlation (the larger of x and y) under Gaussian noise of sigma 25/255 and
  under camera noise, against the threshold it warns from."""
  paths = camera_recipe.demo_photograph_paths()
  rows = []
  for path, image in zip(paths, images):
    gaussian = quantised(image + 25 / 255 * rng.standard_normal(image.shape))
    settings = camera_pipeline.random_settings(np.random.default_rng(1), (0.002, 0.01))
    (camera,), _ = camera_pipeline.captures_of(image, settings, 1, rng)
    read = []
    for noisy in (gaussian, camera / 255.0):
      try:
        read.append(round(noise_statistics.estimate_single([noisy], max_patches=512)
                          .correlation_lag1, 3))
      except ValueError:  # no patch shows noise (clipped everywhere): the check is silent
        read.append(None)
    rows.append({'image': os.path.basename(path), 'gaussian_25': read[0], 'camera': read[1]})
    print(f'  {rows[-1]["image"]}: one file reads {read[0]} (Gaussian) and {read[1]} '
          f'(camera); denoise.py warns from {report.CLEARLY_CORRELATED}', flush=True)
  return rows


def check_seconds(repeats=5):
  """Median seconds of denoise.py's check on a 12-megapixel 8-bit RGB image."""
  image = np.random.default_rng(0).integers(1, 255, (3000, 4000, 3), dtype=np.uint8)
  times = []
  for _ in range(repeats):
    started = time.perf_counter()
    noise_statistics.estimate_single([image], max_patches=512)
    times.append(time.perf_counter() - started)
  print(f'  the check on 12 megapixels: {np.median(times):.2f} s (median of {repeats})')
  return round(float(np.median(times)), 3)


def rounded(values):
  return [round(float(value), 4) for value in values]


def main(argv):
  del argv
  if FLAGS.render:
    with open(FLAGS.render) as source:
      result = json.load(source)
    print(markdown(result))
    if FLAGS.markdown:
      with open(FLAGS.markdown, 'w') as output:
        output.write(markdown(result))
    return
  stamp = provenance.stamp(REPO_ROOT)
  images = photographs()
  rng = np.random.default_rng(FLAGS.seed)
  rows = []
  for name, firsts, seconds, truth in cases(images, rng):
    started = time.perf_counter()
    single = noise_statistics.estimate_single(firsts)
    seconds_taken = time.perf_counter() - started
    if truth is None:
      measured = noise_statistics.measure_pairs(list(zip(firsts, seconds)))
      # The truth's sigma at the estimate's bin centres, per channel.
      true_sigma = np.stack([np.interp(single.signal, measured.signal, measured.sigma[:, channel])
                             for channel in range(single.channels)], axis=1)
      truth = {'correlation_x': rounded(measured.correlation_x),
               'correlation_y': rounded(measured.correlation_y), 'from': 'two captures'}
    else:
      true_sigma = np.full(single.sigma.shape, truth['sigma'])
    ratios = (single.sigma / true_sigma)[~np.isnan(single.sigma)]
    estimate = {'correlation_x': rounded(single.correlation_x),
                'correlation_y': rounded(single.correlation_y)}
    errors = np.abs(np.concatenate([np.subtract(estimate['correlation_x'], truth['correlation_x']),
                                    np.subtract(estimate['correlation_y'],
                                                truth['correlation_y'])]))
    row = {'noise': name, 'truth': truth, 'estimate': estimate,
           'sigma_ratio_median': round(float(np.median(ratios)), 3),
           'sigma_ratio_range': [round(float(ratios.min()), 3), round(float(ratios.max()), 3)],
           'max_correlation_error': round(float(errors.max()), 3),
           'kind_read': report.kind_of(single), 'pixels_kept': single.samples,
           'seconds': round(seconds_taken, 2)}
    rows.append(row)
    print(f'{name}: sigma x{row["sigma_ratio_median"]} (bins {row["sigma_ratio_range"]}), '
          f'correlation error <= '
          f'{row["max_correlation_error"]}, read as {row["kind_read"]}, lag 1 x/y '
          f'{estimate["correlation_x"][0]:.2f}/{estimate["correlation_y"][0]:.2f} against '
          f'{truth["correlation_x"][0]:.2f}/{truth["correlation_y"][0]:.2f} '
          f'({seconds_taken:.1f} s)', flush=True)
  result = {**stamp, 'images': len(images),
            'megapixels': round(sum(image.shape[0] * image.shape[1] for image in images) / 1e6, 2),
            'rows': rows, 'per_file': per_file(images, rng), 'check_seconds': check_seconds()}
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      json.dump(result, output, indent=2)
  if FLAGS.markdown:
    with open(FLAGS.markdown, 'w') as output:
      output.write(markdown(result))


def markdown(result):
  """The rows as a Markdown table, with what made them."""
  # Files written before the tool recorded its stamp have no commit.
  note = provenance.remake_note(result.get('commit'), REMAKE)
  lines = ['# Noise diagnosis accuracy', '',
           f'*Written by `python -m bench.diagnosis_accuracy` on {result["images"]} demo '
           f'photographs ({result["megapixels"]} Mpixels), {result["machine"]}, commit '
           f'{result.get("commit", "not recorded")}; do not edit by hand.* Truth: set by hand '
           '(Gaussian levels, no correlation; box-filtered noise 0.5 at lag 1), or measured '
           'from two captures on every pixel (the simulators).', '',
           *([note, ''] if note else []),
           '| noise | lag-1 correlation x / y: truth | single-image estimate | largest '
           'correlation error, lags 1-4 | sigma, estimate / truth: median (range over bins) | '
           'read as | patch pixels kept |', '|---|---|---|---|---|---|---|']
  for row in result['rows']:
    truth, estimate = row['truth'], row['estimate']
    lines.append(
        f'| {row["noise"]} | {truth["correlation_x"][0]:.2f} / {truth["correlation_y"][0]:.2f} '
        f'| {estimate["correlation_x"][0]:.2f} / {estimate["correlation_y"][0]:.2f} '
        f'| {row["max_correlation_error"]:.2f} | {row["sigma_ratio_median"]:.2f} '
        f'({row["sigma_ratio_range"][0]:.2f}-{row["sigma_ratio_range"][1]:.2f}) '
        f'| {row["kind_read"]} | {row["pixels_kept"]:,} |')
  lines += ['', f'denoise.py\'s check of one file (512 patches; it warns from a lag-1 '
            f'correlation of {report.CLEARLY_CORRELATED}), on each photograph alone:', '',
            '| photograph | Gaussian sigma 25/255 | camera (raw shot 0.002-0.01) |', '|---|---|---|']
  shown = lambda value: 'no usable patch' if value is None else f'{value:.2f}'
  lines += [f'| {row["image"]} | {shown(row["gaussian_25"])} | {shown(row["camera"])} |'
            for row in result['per_file']]
  lines += ['', f'The check takes {result["check_seconds"]:.2f} s on a 12-megapixel image '
            '(median of 5).']
  return '\n'.join(lines) + '\n'


if __name__ == '__main__':
  app.run(main)
