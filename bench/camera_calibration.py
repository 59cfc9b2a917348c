"""How the camera simulator's noise reads beside real photographs' (issue 52, part 1).

For each camera setting asked, the demo's photographs (datasets/demo/train and
val, grayscale ones as RGB) go through n2n/data/camera_pipeline.py's camera
(captures_of: unprocess, mosaic, raw noise, demosaic, processing, 8 bits,
optionally JPEG), two captures each, and the noise of the result is read three
ways:
- as diagnose.py reads single noisy photographs (n2n.diagnose(images=...)):
  correlation at lags 1-4 along x and y, the level against signal;
- as diagnose.py reads two captures of each scene (n2n.diagnose(captures=...));
- the truth: each first capture minus the camera's noise-free rendering, its
  correlation at lags 1-4 (mean over channels and photographs);
and the input PSNR of the first captures against that rendering.

Beside them, the figures the issue measured on two public real-noise benchmarks
(REAL_PHOTOGRAPHS): what a calibrated camera should read like.

  python -m bench.camera_calibration --shots=0.0003,0.0015 --chroma_blur=0,1,2 \
      --luma_blur=0,0.45 --sharpen=0 --jpeg_quality=0,90 --output=docs/bench/camera_calibration.json

About a second per photograph and setting on 2 CPU cores. With --train_steps it also
trains --methods on each setting and scores them (the calibrated profiles, about 18
minutes each on 2 cores with the five methods below):

  python -m bench.camera_calibration --shots=0.0015 --chroma_blur=2 --luma_blur=0.45 \
      --sharpen=0 --jpeg_quality=0 --optics_blur=0.65 --train_steps=1200 \
      --methods=neighbor2neighbor,blind_spot,pairs,bm3d,bm3d_estimated \
      --variants=inference_orientations=1 \
      --output=docs/bench/camera_profile_noise_reduced_trained.json
  (and --shots=0.0003 --chroma_blur=0 --luma_blur=0 ... camera_profile_plain_trained.json)

--methods=bm3d,bm3d_estimated scores the classical peer beside them (pip install bm3d, an
optional extra: bench/classical.py; --variants do not apply to it). Every method's cost is
recorded in seconds per megapixel of denoising, on the host the run names. BM3D runs on
several threads; two runs of profile 1 gave the same gains to 0.01 dB.

--methods=clean_targets trains Noise2Clean on the same two captures of each scene as pairs,
against the camera's noise-free renderings, and denoises the first captures (whose
renderings it trained on):

  python -m bench.camera_calibration --shots=0.0015 --chroma_blur=2 --luma_blur=0.45 \
      --sharpen=0 --jpeg_quality=0 --optics_blur=0.65 --train_steps=1200 \
      --methods=clean_targets --output=docs/bench/camera_profile_noise_reduced_clean.json
  (and --shots=0.0003 --chroma_blur=0 --luma_blur=0 ... camera_profile_plain_clean.json)

--methods=model:camera_srgb scores the model n2n ships (bench/camera_model.py) as it is, on
the same captures (the same --seed draws the same cameras and noise), with and without the
mean over the 8 orientations; it never saw the validation photographs (the last two):

  python -m bench.camera_calibration --shots=0.0015 --chroma_blur=2 --luma_blur=0.45 \
      --sharpen=0 --jpeg_quality=0 --optics_blur=0.65 --methods=model:camera_srgb \
      --output=docs/bench/camera_model_noise_reduced.json
  (and --shots=0.0003 --chroma_blur=0 --luma_blur=0 ... camera_model_plain.json; outside its
  training cameras: --shots=0.0001,0.005 --chroma_blur=1 --luma_blur=0 --sharpen=0.8
  --jpeg_quality=80 --optics_blur=0.65 --output=docs/bench/camera_model_outside_training.json)
"""

import glob
import itertools
import json
import os
import tempfile
import time

from absl import app
from absl import flags
import imageio.v3 as imageio
import numpy as np

from bench import REPO_ROOT
from bench import classical
from bench import json_output
from bench import provenance
from bench import recorruption_draws
from bench.recipes import camera as camera_recipe
import n2n
from n2n import config as config_lib
from n2n import settings as settings_lib

flags.DEFINE_list('shots', ['0.0003', '0.001', '0.003'], 'Raw shot-noise variances per unit '
                  'signal to try (the read noise follows Brooks et al.\'s line through each).')
flags.DEFINE_list('sharpen', ['0', '0.5'], 'Unsharp-mask amounts to try.')
flags.DEFINE_list('jpeg_quality', ['0', '90'], 'JPEG qualities to try (0: none).')
flags.DEFINE_list('chroma_blur', ['0'], 'Chroma noise reductions to try: the Gaussian blur of the '
                  'colour differences, its standard deviation in pixels (0: none).')
flags.DEFINE_list('luma_blur', ['0'], 'Luma noise reductions to try, the same for the luma.')
flags.DEFINE_list('optics_blur', ['0'], 'Lens blurs of the scene to try: the Gaussian\'s standard '
                  'deviation in pixels, before the mosaic (0: none).')
flags.DEFINE_integer('train_steps', 0, 'Also train each --methods method on each setting\'s '
                     'first captures as single noisy images (n2n.train(noisy=...), crop 128, '
                     'batch 8, the defaults otherwise: issue 52\'s outside check), denoise them '
                     'and score them against the noise-free rendering (0: no training).',
                     lower_bound=0)
flags.DEFINE_list('methods', ['neighbor2neighbor'], 'Methods to train: single-image ones on the '
                  'first captures; pairs (Noise2Noise) on both captures of each scene; '
                  'clean_targets (Noise2Clean: both captures against their noise-free '
                  'rendering); each '
                  'optionally with train.py flags after a colon, joined by semicolons: '
                  'blind_spot:blind_spot_stride=2;blind_spot_inference_stride=1, '
                  'recorrupted:init_from=camera_srgb;learning_rate=0.0001. '
                  'And classical peers, untrained (needs pip install bm3d): '
                  'bm3d (CBM3D given each capture\'s true level per channel), bm3d_estimated '
                  '(given the level diagnose.py reads from that capture alone). And trained '
                  'models as they are, untrained on these captures (no --train_steps needed): '
                  'model:NAME, a name n2n ships (camera_srgb), a run folder or an export.')
flags.DEFINE_list('variants', [], 'Also denoise each trained run these other ways: tta (the '
                  'eight orientations over the whole image), NAME=VALUE (the run\'s method '
                  'setting of that name changed: inference_stride=1, refinement_passes=8, '
                  'inference_orientations=1...), joined by + (tta+refinement_passes=8); pairs, '
                  'which has no such settings, skips them. recorruption_draws=T (recorrupted '
                  'runs only): the mean over T recorrupted inputs, as R2R\'s paper denoises.')
flags.DEFINE_string('precision', 'auto', 'Training and denoising precision (train.py\'s '
                    '--precision; auto: bfloat16 where the CPU has it).')
flags.DEFINE_integer('seed', 0, 'Seed of the cameras, the noise and the training runs.')
flags.DEFINE_string('output', '', 'Write the results as JSON here.')
FLAGS = flags.FLAGS

MAX_LAG = 4
# Issue 52's measurements of two public real-noise benchmarks (512 x 512 sRGB crops of real
# photographs, ISO 1600-12800), diagnose.py on the noisy photographs alone, and the lag-1
# correlation of the noisy photograph minus its many-shot mean ("truth"; lag 2 about 0.4).
REAL_PHOTOGRAPHS = {
    'benchmark 1': {'input_psnr': 33.41, 'x': [0.68, 0.30, 0.11, 0.03],
                    'y': [0.66, 0.24, 0.05, -0.02], 'truth_lag1': [0.72, 0.68]},
    'benchmark 2': {'input_psnr': 35.88, 'x': [0.63, 0.19, 0.02, 0.03],
                    'y': [0.59, 0.13, -0.01, -0.01], 'truth_lag1': [0.69, 0.63]},
}


# The demo's training photographs, then its validation ones (which bench/camera_model.py's
# network never sees).
PHOTOGRAPH_PATHS = sorted(glob.glob(os.path.join(REPO_ROOT, 'datasets', 'demo', '*', '*.png')))


def demo_photographs():
  """[H, W, 3] float64 in [0, 1] of the demo's photographs (grayscale as RGB), cut to
  whole Bayer cells."""
  return [camera_recipe.clean_photograph(path) for path in PHOTOGRAPH_PATHS]


def lag_correlations(noise):
  """([MAX_LAG] along x, [MAX_LAG] along y) of [H, W, C] noise: at each lag, the
  correlation of each pixel with the one that far along the axis, per channel,
  averaged over the channels."""
  noise = noise - noise.mean(axis=(0, 1))
  variance = np.mean(noise ** 2, axis=(0, 1))
  along_x = [np.mean(np.mean(noise[:, lag:] * noise[:, :-lag], axis=(0, 1)) / variance)
             for lag in range(1, MAX_LAG + 1)]
  along_y = [np.mean(np.mean(noise[lag:] * noise[:-lag], axis=(0, 1)) / variance)
             for lag in range(1, MAX_LAG + 1)]
  return along_x, along_y


def measure(photographs, shot, sharpen, jpeg_quality, chroma_blur, luma_blur, optics_blur,
            seed):
  """The three readings and the input PSNR of one camera setting (see the module
  docstring); each photograph gets its own camera (colour matrix, white balance)."""
  scenes, references = camera_recipe.camera_scenes(photographs, shot, sharpen, jpeg_quality,
                                                   chroma_blur, luma_blur, optics_blur, seed)
  truths = [lag_correlations(first.astype(np.float64) - reference)
            for (first, _), reference in zip(scenes, references)]
  inputs = [camera_recipe.psnr(first, reference)
            for (first, _), reference in zip(scenes, references)]
  single = n2n.diagnose([first for first, _ in scenes])
  pairs = n2n.diagnose(captures=scenes)
  reading = lambda report: {
      'x': [round(float(v), 3) for v in report.correlation_x],
      'y': [round(float(v), 3) for v in report.correlation_y],
      'signal': [round(float(v), 3) for v in report.profile.signal],
      'sigma': [round(float(np.nanmean(row)), 4) for row in report.profile.sigma]}
  trained = []
  with tempfile.TemporaryDirectory() as folder:
    for method in FLAGS.methods:
      if method in CLASSICAL_METHODS:
        trained.append(classical_gain(scenes, references, method))
      elif method.startswith(MODEL_PREFIX):
        trained.append(model_gain(scenes, references, method.removeprefix(MODEL_PREFIX)))
      elif FLAGS.train_steps:
        trained.append(train_gain(scenes, references, method, FLAGS.train_steps, folder))
  return {'trained': trained, 'shot': shot, 'sharpen': sharpen, 'jpeg_quality': jpeg_quality,
          'chroma_blur': chroma_blur, 'luma_blur': luma_blur, 'optics_blur': optics_blur,
          'input_psnr': float(np.mean(inputs)), 'single_images': reading(single),
          'two_captures': reading(pairs),
          'truth': {'x': [round(float(v), 3) for v in np.mean([x for x, _ in truths], axis=0)],
                    'y': [round(float(v), 3) for v in np.mean([y for _, y in truths], axis=0)]}}


def timed_gains(denoisers, noisy, references):
  """([PSNR gain in dB per photograph], seconds per megapixel) of denoisers (one
  fn([H, W, 3] uint8) -> uint8 per photograph) on the noisy photographs against their
  references (0-255). The cost is the median over the photographs after the first
  (whose call also traces a network)."""
  gains, seconds_per_megapixel = [], []
  for denoise, image, reference in zip(denoisers, noisy, references):
    start = time.perf_counter()
    denoised = denoise(image)
    seconds_per_megapixel.append((time.perf_counter() - start) / (image.shape[0] * image.shape[1]
                                                                   / 1e6))
    gains.append(camera_recipe.psnr(denoised, reference) - camera_recipe.psnr(image, reference))
  return gains, float(np.median(seconds_per_megapixel[1:] or seconds_per_megapixel))


# Classical peers, untrained: the level BM3D is given, from ([H, W, 3] capture and
# rendering, 0-1).
CLASSICAL_METHODS = {
    'bm3d': classical.true_sigma,
    'bm3d_estimated': lambda capture, _: camera_recipe.diagnosed_level(capture),
}


# --methods=model:NAME: a trained model as is, untrained on these captures.
MODEL_PREFIX = 'model:'


def model_gain(scenes, references, model):
  """{'gain_db': the mean PSNR gain, ...} of the model `model` (a name n2n ships, a run
  folder or an export) denoising each first capture as is, with no training on them,
  and with the mean over the 8 orientations (variant tta)."""
  denoiser = n2n.Denoiser.load(model, precision=FLAGS.precision)
  noisy = [first for first, _ in scenes]
  gains, cost = timed_gains([denoiser] * len(noisy), noisy, references)
  tta_gains, tta_cost = timed_gains([lambda image: denoiser(image, tta=True)] * len(noisy),
                                    noisy, references)
  return {'method': f'{MODEL_PREFIX}{model}', 'precision': FLAGS.precision,
          'variants': {'tta': {'gains_db': [float(gain) for gain in tta_gains],
                               'gain_db': float(np.mean(tta_gains)),
                               'seconds_per_megapixel': tta_cost}},
          'seconds_per_megapixel': cost, 'gains_db': [float(gain) for gain in gains],
          'gain_db': float(np.mean(gains))}


def classical_gain(scenes, references, method):
  """{'gain_db': the mean PSNR gain, ...} of CBM3D on each first capture given the
  level CLASSICAL_METHODS[method] gives, written to 8 bits as a file would be."""
  version = classical.bm3d_version()
  noisy = [first for first, _ in scenes]
  levels = [CLASSICAL_METHODS[method](image / 255.0, reference / 255.0)
            for image, reference in zip(noisy, references)]
  gains, cost = timed_gains([classical.bm3d_8_bit_denoiser(level) for level in levels],
                            noisy, references)
  return {'method': method, 'peer': f'BM3D {version}', 'variants': {},
          'sigma': [[round(float(value), 4) for value in level] for level in levels],
          'seconds_per_megapixel': cost, 'gains_db': [float(gain) for gain in gains],
          'gain_db': float(np.mean(gains))}


# --methods=clean_targets: Noise2Clean, each capture against the camera's noise-free
# rendering (train.py --target=clean on scenes with a reference; a scene holds both
# captures, as pairs trains on). It trains on the renderings it is scored against: an
# optimistic bound. --variants do not apply to it.
CLEAN_TARGETS = 'clean_targets'


def clean_target_records(scenes, references, folder):
  """TFRecords of one scene per photograph: its two captures and, as reference.png, its
  noise-free rendering (8-bit already: the rounding only keeps it so) (n2n/data/scenes.py's
  layout)."""
  from n2n.data import scene_writer  # pylint: disable=g-import-not-at-top
  scenes_dir = os.path.join(folder, 'clean_target_scenes')
  for index, (captures, reference) in enumerate(zip(scenes, references)):
    scene = os.path.join(scenes_dir, f'photograph_{index:02d}')
    os.makedirs(scene)
    for number, capture in enumerate(captures):
      imageio.imwrite(os.path.join(scene, f'capture_{number}.png'), capture)
    imageio.imwrite(os.path.join(scene, 'reference.png'),
                    np.round(np.clip(reference, 0, 255)).astype(np.uint8))
  records = os.path.join(folder, 'clean_target_records')
  scene_writer.write_scene_dataset(scenes_dir, records)
  return records


# The train.py flags every trained run here sets itself: --methods settings may not.
_SET_HERE = ('model_dir', 'noise', 'method', 'crop_size', 'batch_size', 'train_steps',
             'precision', 'seed')


def trained_run(scenes, references, method_and_settings, steps, folder):
  """Trains one --methods entry `steps` steps in a folder under folder: a single-image
  method on the first captures, pairs on both captures of each scene, CLEAN_TARGETS
  (train.py's pairs with --target=clean) on both against their noise-free renderings.
  Returns (the method train.py ran, its TrainConfig)."""
  if method_and_settings == CLEAN_TARGETS:
    config = n2n.train_config(model_dir=os.path.join(folder, CLEAN_TARGETS),
                              train_data=clean_target_records(scenes, references, folder),
                              noise='none', method='pairs', target='clean', crop_size=128,
                              batch_size=8, train_steps=steps, precision=FLAGS.precision,
                              seed=FLAGS.seed)
    n2n.train(config, progress_bar=False)
    return 'pairs', config
  method, _, settings = method_and_settings.partition(':')
  overrides = {}
  specs = {spec.flag: spec for spec in settings_lib.settings_of(config_lib.TrainConfig)}
  for pair in filter(None, settings.split(';')):
    name, _, value = pair.partition('=')
    if not value or name not in specs or name in _SET_HERE:
      raise ValueError(f'--methods={method_and_settings}: {pair!r} is not NAME=VALUE of a '
                       f'train.py flag other than {", ".join(_SET_HERE)} (set by this tool)')
    field_type = specs[name].field_type
    overrides[name] = value.lower() == 'true' if field_type is bool else field_type(value)
  config = n2n.train_config(model_dir=os.path.join(folder, method_and_settings.replace(':', ' ')),
                            noise='none', method=method, crop_size=128, batch_size=8,
                            train_steps=steps, precision=FLAGS.precision, seed=FLAGS.seed,
                            **overrides)
  if method == 'pairs':
    # The two-capture baseline: Noise2Noise on both captures of each scene.
    n2n.train(config, captures=scenes, progress_bar=False)
  else:
    n2n.train(config, noisy=[first for first, _ in scenes], progress_bar=False)
  return method, config


def train_gain(scenes, references, method_and_settings, steps, folder):
  """{'scheme': the method's settings as the run saved them (what the diagnosis chose),
  'gain_db': the mean PSNR gain, ...} of `method_and_settings` trained `steps` steps
  (trained_run) and denoising the first captures (as issue 52's outside check does)."""
  method, config = trained_run(scenes, references, method_and_settings, steps, folder)
  noisy = [first for first, _ in scenes]
  denoiser = n2n.Denoiser.load(config.run.model_dir, precision=FLAGS.precision)
  with open(os.path.join(config.run.model_dir, 'config.json')) as saved_file:
    saved = json.load(saved_file)
  gains, cost = timed_gains([denoiser] * len(noisy), noisy, references)
  variants = {}
  for variant in FLAGS.variants:
    parts = [part.partition('=') for part in variant.split('+') if part != 'tta']
    if any(not value or not name for name, _, value in parts):
      raise ValueError(f'--variants={variant}: parts are tta or NAME=VALUE, joined by +')
    changed = {name: value for name, _, value in parts}
    draws = int(changed.pop(RECORRUPTION_DRAWS, 0))
    own = saved['method'].get(method)
    if own is None or (draws and method != 'recorrupted'):
      continue  # a method without settings of its own (pairs has no inference scheme)
    unknown = [name for name in changed if name not in own]
    if unknown:
      raise ValueError(f'--variants={variant}: {method} has no setting {unknown[0]!r}')
    run = (changed_run(config.run.model_dir, method, changed,
                       os.path.join(folder, f'{method_and_settings} {variant}'.replace(':', ' ')))
           if changed else config.run.model_dir)
    if draws:
      other = recorruption_draws.draws_denoiser(run, draws, FLAGS.precision, FLAGS.seed)
    else:
      loaded = n2n.Denoiser.load(run, precision=FLAGS.precision)
      tta = 'tta' in variant.split('+')
      other = lambda image, loaded=loaded, tta=tta: loaded(image, tta=tta)
    variant_gains, variant_cost = timed_gains([other] * len(noisy), noisy, references)
    variants[variant] = {'gains_db': [float(gain) for gain in variant_gains],
                         'gain_db': float(np.mean(variant_gains)),
                         'seconds_per_megapixel': variant_cost}
  return {'variants': variants, 'method': method_and_settings, 'steps': steps, 'crop_size': 128,
          'batch_size': 8,
          'precision': FLAGS.precision,
          'learning_rate': config_lib.peak_learning_rate(config_lib.read_train_config(saved)),
          'seed': saved['run']['seed'], 'scheme': saved['method'].get(method, {}),
          'seconds_per_megapixel': cost, 'gains_db': [float(gain) for gain in gains],
          'gain_db': float(np.mean(gains))}


# --variants part recorruption_draws=T (recorrupted runs only): the mean over T
# recorrupted inputs, as R2R's paper denoises (bench/recorruption_draws.py).
RECORRUPTION_DRAWS = 'recorruption_draws'


def changed_run(model_dir, method, changed, folder):
  """A copy of a run's folder (its checkpoints linked, not copied) whose saved
  settings of `method` have `changed` ({name: value as text}) in place: how the
  same weights denoise through another inference setting."""
  os.makedirs(folder)
  for name in os.listdir(model_dir):
    if name.startswith('ckpt-') or name == 'checkpoint':
      os.symlink(os.path.join(model_dir, name), os.path.join(folder, name))
  with open(os.path.join(model_dir, 'config.json')) as saved_file:
    saved = json.load(saved_file)
  for name, value in changed.items():
    saved['method'][method][name] = type(saved['method'][method][name])(value)
  with open(os.path.join(folder, 'config.json'), 'w') as saved_file:
    json.dump(saved, saved_file)
  return folder


def _lags(values):
  return ' '.join(f'{value:5.2f}' for value in values)


def main(argv):
  del argv
  photographs = demo_photographs()
  results = {**provenance.stamp(REPO_ROOT), 'photographs': len(photographs),
             'photograph_names': [os.path.relpath(path, REPO_ROOT) for path in PHOTOGRAPH_PATHS],
             'real_photographs': REAL_PHOTOGRAPHS, 'settings': []}
  for name, real in REAL_PHOTOGRAPHS.items():
    print(f"{name:34s} input {real['input_psnr']:.2f} dB  single x {_lags(real['x'])}  "
          f"y {_lags(real['y'])}  truth lag 1 x/y {real['truth_lag1'][0]:.2f}/"
          f"{real['truth_lag1'][1]:.2f}, lag 2 about 0.4")
  for shot, sharpen, quality, chroma, luma, optics in itertools.product(
      FLAGS.shots, FLAGS.sharpen, FLAGS.jpeg_quality, FLAGS.chroma_blur, FLAGS.luma_blur,
      FLAGS.optics_blur):
    row = measure(photographs, float(shot), float(sharpen), int(quality), float(chroma),
                  float(luma), float(optics), FLAGS.seed)
    results['settings'].append(row)
    single, truth = row['single_images'], row['truth']
    print(f"shot {float(shot):g} sharpen {float(sharpen):g} jpeg {int(quality):3d} "
          f"chroma {float(chroma):g} luma {float(luma):g} optics {float(optics):g}  "
          f"input {row['input_psnr']:.2f} dB  single x {_lags(single['x'])}  "
          f"y {_lags(single['y'])}  truth x {_lags(truth['x'])}  y {_lags(truth['y'])}")
    for run in row['trained']:
      what = (f"{run['peer']}, mean level {np.mean(run['sigma']):.4f}" if 'peer' in run else
              'as is' if run['method'].startswith(MODEL_PREFIX) else
              f"{run['steps']} steps (scheme {run['scheme']})")
      print(f"    {run['method']}: {run['gain_db']:+.2f} dB, "
            f"{run['seconds_per_megapixel']:.1f} s per megapixel, {what}" + ''.join(
                f"; {name} {variant['gain_db']:+.2f}" for name, variant in run['variants'].items()))
    print(f"    level by signal (single images): " + ', '.join(
        f'{signal:.2f}: {sigma:.4f}' for signal, sigma in zip(single['signal'],
                                                              single['sigma'])))
  if FLAGS.output:
    json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
