"""Scores on real noise: the development sets of ../shared/data/real_dev (issue 63 §1).

  python -m bench.real_dev --sets=sidd24,w2s80 \
      --outputs=noisy,model:camera_srgb,recommended --train_steps=1200 \
      --output=docs/bench/real_dev.json --pictures=docs/results

Each set is noisy captures with a reference (the set's README says what):
- sidd24: 24 smartphone photographs, 8-bit sRGB; PSNR on 8-bit RGB against `clean/`.
- w2s80: 80 widefield fluorescence fields, 8-bit grey; each image was contrast-stretched on
  its own, so the score is the PSNR (0-255) of a*output + b against `gt/`, a and b the
  per-image least-squares fit (affine_psnr), as CARE-style evaluations score.
A set's score is the mean of its images' PSNRs.

What is scored (--outputs, in order; each becomes a column of the pictures):
- `noisy`: the captures as they are.
- `model:NAME` or `model:NAME:tta`: n2n.Denoiser.load(NAME) as is (a shipped model's name, a
  run folder or an export), with `:tta` the mean over the 8 flips and rotations.
- `recommended`: what a user who follows n2n's advice gets with no clean data: n2n.diagnose on
  the set's noisy images; where it recommends a shipped model as is (Diagnosis.model), that
  model with its flags; else n2n.train with the recommended settings on those images alone
  (--train_steps, --crop_size, --batch_size; every other setting n2n's default, a
  recommended --init_from included), then the trained run denoises them.
- `scratch`: the recommended method trained from scratch as above, whatever diagnose says of
  shipped models (the "from scratch" figure of docs/diagnosis.md's table).
- `train:METHOD`: the same with --method=METHOD instead of the recommended one.
- `tune:MODEL` or `tune:MODEL:METHOD`: fine-tuning: the recommended method (or METHOD)
  trained the same way but starting from MODEL's weights (--init_from=MODEL).
--learning_rate, where given, applies to every trained output, over the rate a
recommendation carries (0: the recommendation's, else n2n's own choice).
Training and denoising seconds are recorded beside each score; they mean something only
on the host named in the stamp.

The data is read from --real_dev (default: ../shared/data/real_dev beside the repository).
It is evaluation data: nothing here copies it into the repository, and the pictures show
crops of a few images only.
"""

import dataclasses
import glob
import os
import tempfile
import time

from absl import app
from absl import flags
import numpy as np
from PIL import Image
from PIL import ImageDraw

import n2n
from n2n import run_dir
from n2n import shipped
from n2n.config import train as train_config
from bench import REPO_ROOT
from bench import json_output
from bench import provenance
from bench import shipping

flags.DEFINE_string('real_dev', os.path.join(os.path.dirname(REPO_ROOT), 'shared', 'data',
                                             'real_dev'),
                    'The folder holding sidd24/ and w2s80/.')
flags.DEFINE_list('sets', ['sidd24', 'w2s80'], 'The sets to score.')
flags.DEFINE_list('outputs', ['noisy', f'model:{shipped.CAMERA_SRGB}', 'recommended'],
                  'What to score (module docstring).')
flags.DEFINE_integer('train_steps', 1200, 'Training steps of `recommended` and `train:`.')
flags.DEFINE_integer('crop_size', 128, 'Training crop of `recommended` and `train:`, unless '
                     'the diagnosis recommends one.')
flags.DEFINE_integer('batch_size', 8, 'Training batch of `recommended` and `train:`.')
flags.DEFINE_integer('seed', 0, 'Training seed.')
flags.DEFINE_float('learning_rate', 0.0, 'Peak learning rate of the trained outputs (0: n2n\'s '
                   'choice).')
flags.DEFINE_integer('max_images', 0, 'Score the first N images of each set only (0: all).')
flags.DEFINE_string('output', '', 'Write the scores here as JSON (rewritten after each output).')
flags.DEFINE_string('pictures', '', 'Write each set\'s crops here as real_dev_SET.png.')
FLAGS = flags.FLAGS


@dataclasses.dataclass(frozen=True)
class RealSet:
  """One set of real_dev: its folder's name, its noisy and reference subfolders, and
  whether it is scored after a per-image affine fit."""
  name: str
  noisy: str
  reference: str
  affine: bool


SETS = {
    'sidd24': RealSet('sidd24', 'noisy', 'clean', affine=False),
    'w2s80': RealSet('w2s80', 'noisy', 'gt', affine=True),
    # Not real: simulated fields in w2s80's layout (bench/fluorescence_sim_set.py writes it
    # under a folder given as --real_dev), for the fine-tuning table on the simulator.
    'fluorescence_sim': RealSet('fluorescence_sim', 'noisy', 'gt', affine=True),
}
# The pictures: crops of PICTURE_IMAGES images of each set (first, middle, last by name),
# CROP pixels square where the reference varies most (its detail), at SCALE x.
PICTURE_IMAGES = 3
CROP = 96
SCALE = 2
LABEL_HEIGHT = 14


def read_pairs(root, real_set, max_images=0):
  """[(name, noisy, reference)] of real_set under root, sorted by name: uint8 arrays
  [H, W, 3] (sidd24) or [H, W] (w2s80), noisy and reference of one shape.

  Raises:
    ValueError: the folder holds no PNG, or a noisy file has no reference of its shape.
  """
  paths = sorted(glob.glob(os.path.join(root, real_set.name, real_set.noisy, '*.png')))
  if not paths:
    raise ValueError(f'--real_dev: no PNG in {os.path.join(root, real_set.name, real_set.noisy)}')
  pairs = []
  for path in paths[:max_images or None]:
    name = os.path.basename(path)
    reference_path = os.path.join(root, real_set.name, real_set.reference, name)
    if not os.path.exists(reference_path):
      raise ValueError(f'--real_dev: {path} has no reference {reference_path}')
    noisy, reference = np.asarray(Image.open(path)), np.asarray(Image.open(reference_path))
    if noisy.shape != reference.shape:
      raise ValueError(f'{path} is {noisy.shape}, its reference {reference_path} '
                       f'{reference.shape}')
    pairs.append((os.path.splitext(name)[0], noisy, reference))
  return pairs


def psnr(output, reference):
  """PSNR in dB of output against reference, both on a 0-255 scale (uint8 or float)."""
  error = np.mean((np.asarray(output, np.float64) - np.asarray(reference, np.float64)) ** 2)
  return float(10 * np.log10(255.0 ** 2 / error))


def affine_fit(output, reference):
  """a * output + b (float64, output's shape) with a, b minimising its squared error
  against reference: the per-image fit that takes out each image's own contrast stretch."""
  x = np.asarray(output, np.float64).ravel()
  design = np.stack([x, np.ones_like(x)], axis=1)
  (a, b), *_ = np.linalg.lstsq(design, np.asarray(reference, np.float64).ravel(), rcond=None)
  return (a * np.asarray(output, np.float64) + b)


def score(real_set, output, reference):
  """The set's PSNR of one output: plain, or after the affine fit (real_set.affine)."""
  return psnr(affine_fit(output, reference) if real_set.affine else output, reference)


def shown(real_set, output, reference):
  """output as a picture shows it: uint8, after the affine fit where the set is scored so."""
  if real_set.affine:
    output = affine_fit(output, reference)
  return np.clip(np.round(output), 0, 255).astype(np.uint8)


def detail_corner(reference):
  """(y, x) of the CROP-square crop on a grid of CROP/4 where reference (uint8, [H, W] or
  [H, W, C]) has the largest standard deviation: where its detail is."""
  grey = reference.astype(np.float64)
  if grey.ndim == 3:
    grey = grey.mean(axis=2)
  step = CROP // 4
  spreads = {(y, x): grey[y:y + CROP, x:x + CROP].std()
             for y in range(0, grey.shape[0] - CROP + 1, step)
             for x in range(0, grey.shape[1] - CROP + 1, step)}
  return max(spreads, key=spreads.get)


def _trained_denoiser(method_settings, noisy, folder):
  """(n2n.Denoiser trained on the noisy arrays alone with method_settings (train_config
  keywords) and FLAGS' budget, what ran: {'settings' as given (learning_rate 0 is n2n's
  default), 'peak_learning_rate' it trained at (the default resolved), 'train_seconds'})."""
  settings = dict(noise='none', crop_size=FLAGS.crop_size, batch_size=FLAGS.batch_size,
                  train_steps=FLAGS.train_steps, seed=FLAGS.seed,
                  learning_rate=FLAGS.learning_rate)
  settings.update(method_settings)
  if FLAGS.learning_rate:  # given: it wins over the rate a recommendation carries
    settings['learning_rate'] = FLAGS.learning_rate
  config = n2n.train_config(model_dir=folder, **settings)
  start = time.perf_counter()
  n2n.train(config, noisy=noisy, progress_bar=False)
  seconds = time.perf_counter() - start
  return n2n.Denoiser.load(folder), {
      'settings': settings, 'peak_learning_rate': train_config.peak_learning_rate(config),
      'train_seconds': round(seconds, 1)}


# The settings a recommendation adds for fine-tuning, left out of `scratch`.
_FINE_TUNING = ('init_from', 'learning_rate')


def refusal(spec, noisy):
  """The one line a shipped model named by a `model:` spec refuses the set's images with
  (n2n/shipped.py; their pixel type and channels are the first image's), else None."""
  name = spec[len('model:'):].partition(':')[0] if spec.startswith('model:') else ''
  if name not in shipped.MODELS:
    return None
  image = noisy[0]
  return shipped.refusal(name, shipped.MODELS[name], image.dtype.name,
                         image.shape[2] if image.ndim == 3 else 1)


def _normalization_of(model):
  """{normalization, percentile_low, percentile_high} of a shipped model's or run's
  config.json, as train_config keywords."""
  data = run_dir.read_config(shipped.resolve(model))['data']
  return {name: data[name] for name in ('normalization', 'percentile_low', 'percentile_high')}


def denoiser_of(spec, noisy, folder):
  """(fn(uint8 array) -> same, what was run as a JSON-able dict) for an --outputs entry."""
  if spec == 'noisy':
    return (lambda image: image), {}
  if spec.startswith('model:'):
    name, _, mode = spec[len('model:'):].partition(':')
    denoiser = n2n.Denoiser.load(name)
    tta = mode == 'tta'
    # Which weights: a shipped model retrained under its name scores anew.
    # (A run of that name in the working folder, which load takes first, is not it.)
    packaged = name in shipped.MODELS and shipped.resolve(name) == shipped.folder(name)
    weights = {'trained_at': shipping.trained_at(name)} if packaged else {}
    return (lambda image: denoiser(image, tta=tta)), {'model': name, 'tta': tta, **weights}
  if spec in ('recommended', 'scratch'):
    diagnosis = n2n.diagnose(noisy)
    advice = {'diagnosis_kind': diagnosis.kind, 'recommended_flags': list(diagnosis.flags),
              'recommended_model': diagnosis.model,
              'recommended_model_flags': list(diagnosis.recommendation.model_flags)}
    if spec == 'recommended' and diagnosis.model:
      denoiser = n2n.Denoiser.load(diagnosis.model)
      tta = '--tta' in diagnosis.recommendation.model_flags
      return (lambda image: denoiser(image, tta=tta)), dict(advice, model=diagnosis.model,
                                                           tta=tta)
    settings = {name: value for name, value in diagnosis.settings.items()
                if spec == 'recommended' or name not in _FINE_TUNING}
    denoiser, ran = _trained_denoiser(settings, noisy, folder)
    return denoiser, dict(advice, **ran)
  if spec.startswith('train:'):
    return _trained_denoiser({'method': spec[len('train:'):]}, noisy, folder)
  if spec.startswith('tune:'):
    model, _, method = spec[len('tune:'):].partition(':')
    diagnosis = n2n.diagnose(noisy)
    # The source's normalisation: its weights learned values mapped that way.
    settings = dict(diagnosis.settings, init_from=model, **_normalization_of(model))
    if method:
      settings['method'] = method
    denoiser, ran = _trained_denoiser(settings, noisy, folder)
    return denoiser, {'diagnosis_kind': diagnosis.kind, **ran}
  raise ValueError(f'--outputs: {spec!r} is none of noisy, model:NAME[:tta], recommended, '
                   'train:METHOD, tune:MODEL[:METHOD]')


def score_output(real_set, pairs, spec, folder):
  """({'mean_psnr_db', 'per_image_db', 'denoise_seconds', ...what ran}, [outputs])."""
  denoise, ran = denoiser_of(spec, [noisy for _, noisy, _ in pairs], folder)
  start = time.perf_counter()
  outputs = [denoise(noisy) for _, noisy, _ in pairs]
  seconds = time.perf_counter() - start
  per_image = {name: round(score(real_set, output, reference), 3)
               for (name, _, reference), output in zip(pairs, outputs)}
  return dict(ran, mean_psnr_db=round(float(np.mean(list(per_image.values()))), 3),
              per_image_db=per_image, denoise_seconds=round(seconds, 1)), outputs


def _tile(image, text):
  """A crop at SCALE x with text on a strip beneath: an RGB PIL image."""
  picture = Image.fromarray(image).convert('RGB').resize(
      (image.shape[1] * SCALE, image.shape[0] * SCALE), Image.NEAREST)
  canvas = Image.new('RGB', (picture.width, picture.height + LABEL_HEIGHT), (255, 255, 255))
  canvas.paste(picture, (0, 0))
  ImageDraw.Draw(canvas).text((3, picture.height + 1), text, fill=(0, 0, 0))
  return canvas


def picture(real_set, pairs, outputs_by_spec):
  """A PIL image: for PICTURE_IMAGES of the pairs, a row of crops (each output in
  outputs_by_spec's order, then the reference), each labelled with its PSNR."""
  chosen = sorted({0, len(pairs) // 2, len(pairs) - 1})[:PICTURE_IMAGES]
  rows = []
  for index in chosen:
    name, _, reference = pairs[index]
    y, x = detail_corner(reference)
    crop = (slice(y, y + CROP), slice(x, x + CROP))
    row = []
    for spec, outputs in outputs_by_spec.items():
      value = score(real_set, outputs[index], reference)
      row.append(_tile(shown(real_set, outputs[index], reference)[crop],
                       f'{spec}: {value:.2f} dB'))
    row.append(_tile(reference[crop], f'reference ({name})'))
    rows.append(row)
  width, height = rows[0][0].size
  canvas = Image.new('RGB', (width * len(rows[0]), height * len(rows)), (255, 255, 255))
  for row_index, row in enumerate(rows):
    for column, tile in enumerate(row):
      canvas.paste(tile, (column * width, row_index * height))
  return canvas


def _precision():
  """The precision 'auto' resolves to here, for training and denoising alike."""
  from n2n import hardware  # pylint: disable=g-import-not-at-top  (loads TensorFlow)
  return hardware.resolve_precision('auto', None)


def main(argv):
  del argv
  # What else ran on the host (its load over 1, 5 and 15 minutes) when this run started and
  # ended: seconds measured beside other jobs say what a run cost there, not n2n's speed.
  results = {**provenance.stamp(REPO_ROOT), 'precision': _precision(),
             'load_average_at_start': [round(value, 2) for value in os.getloadavg()],
             'train_steps': FLAGS.train_steps,
             'crop_size': FLAGS.crop_size, 'batch_size': FLAGS.batch_size, 'seed': FLAGS.seed,
             'max_images': FLAGS.max_images, 'sets': {}}
  for set_name in FLAGS.sets:
    if set_name not in SETS:
      raise app.UsageError(f'--sets: {set_name!r} is none of {", ".join(SETS)}')
    real_set = SETS[set_name]
    pairs = read_pairs(FLAGS.real_dev, real_set, FLAGS.max_images)
    scores = results['sets'].setdefault(set_name, {'images': len(pairs), 'outputs': {}})
    outputs_by_spec = {}
    with tempfile.TemporaryDirectory() as folder:
      for spec in FLAGS.outputs:
        refused = refusal(spec, [noisy for _, noisy, _ in pairs])
        if refused:
          scores['outputs'][spec] = {'refused': refused}
        else:
          scores['outputs'][spec], outputs_by_spec[spec] = score_output(
              real_set, pairs, spec, os.path.join(folder, spec.replace(':', '_')))
        print(set_name, spec, {key: value for key, value in scores['outputs'][spec].items()
                               if key != 'per_image_db'}, flush=True)
        json_output.write_results(FLAGS.output, results)
    results['load_average_at_end'] = [round(value, 2) for value in os.getloadavg()]
    json_output.write_results(FLAGS.output, results)
    if FLAGS.pictures and outputs_by_spec:
      path = os.path.join(FLAGS.pictures, f'real_dev_{set_name}.png')
      picture(real_set, pairs, outputs_by_spec).save(path)
      print('wrote', path)


if __name__ == '__main__':
  app.run(main)
