"""Recorrupted-to-Recorrupted on the calibrated cameras: how far single images go when
the noise's covariance is known, and when it is read from the images (issue 52, part 2).

Recorrupted-to-Recorrupted (R2R; Pang et al., CVPR 2021) makes a Noise2Noise pair of
one noisy image y: input y + alpha * n, target y - n / alpha, where n is drawn with the
noise's own covariance (spatial, between channels, and its level against the signal).
The two noises (noise + alpha * n and noise - n / alpha) are then uncorrelated, and
independent for Gaussian noise, as two captures' are. Everything rests on n's
covariance: a part of the noise's covariance that n lacks stays shared between input and
target, and the network learns to keep that part.

Here the photographs, cameras and training budget are bench/camera_calibration.py's
(bench/recipes/camera.py camera_scenes: the demo's 11 photographs, each through its own
camera of the profile asked, the first capture of each the single noisy image), and the
noise model comes from one of:
- truth: each first capture minus its camera's noise-free rendering, pooled over the
  photographs (an oracle: only a simulation has it);
- single: n2n's single-image estimate (noise_statistics.estimate_single, what diagnose.py
  reads from the noisy photographs alone), with its channel correlation;
- corrected: the same, the plane fit of its patches undone
  (NoiseProfile.corrected_correlation and level_correction);
- first_records: the single-image estimate from the first 8 photographs only, as train.py
  reads its first records (n2n/diagnosis/training_data.py MAX_RECORDS) for
  --method=recorrupted.
The noise model and its draws are --method=recorrupted's (n2n/noise_model.py,
n2n/pipelines/recorrupted.py). Its channels share one spatial correlation, the mean over
channels, which the chroma noise reduction of profile 1 does not.

Unlike --method=recorrupted (bench/camera_calibration.py --methods=recorrupted measures it),
which draws n afresh at every step from the model of its first 8 images, each photograph
here gets --recorruptions fixed draws of n, and the pairs train train.py's Noise2Noise
(method pairs, through n2n.train's captures) at calibration's settings (1200 steps,
crop 128, batch 8, defaults otherwise). y + alpha * n leaves 0-1, which n2n's arrays must
not: every value v is trained and denoised as (v + 0.25) / 1.5, clipped to 0-1, and
mapped back. The first captures are denoised as they are (the network trained on the
noisier y + alpha * n), and with the mean over the 8 orientations (tta).

  python -m bench.recorrupted --shot=0.0015 --chroma_blur=2 --luma_blur=0.45 \
      --noise_models=truth,single --output=docs/bench/recorrupted_noise_reduced.json
  python -m bench.recorrupted --shot=0.0003 --chroma_blur=0 --luma_blur=0 \
      --noise_models=truth,single --output=docs/bench/recorrupted_plain.json
  python -m bench.recorrupted --noise_models=corrected \
      --output=docs/bench/recorrupted_noise_reduced_corrected.json
  python -m bench.recorrupted --noise_models=single --recorruptions=24 \
      --output=docs/bench/recorrupted_noise_reduced_k24.json
  python -m bench.recorrupted --noise_models=first_records --recorruptions=24 \
      --output=docs/bench/recorrupted_noise_reduced_first_records.json

With --train_steps=0 it only reads each noise model's level against the truth's (the
model's sigma over the truth's at each of its signal bins, the mean over channels):

  python -m bench.recorrupted --train_steps=0 --noise_models=single,first_records \
      --output=docs/bench/noise_model_levels_noise_reduced_mean.json
  python -m bench.recorrupted --train_steps=0 --noise_models=single,first_records \
      --shot=0.0003 --chroma_blur=0 --luma_blur=0 \
      --output=docs/bench/noise_model_levels_plain_mean.json

  python -m bench.recorrupted --train_steps=0 --noise_models=single,first_records \
      --output=docs/bench/noise_model_levels_noise_reduced_median.json
  (and the plain profile's flags, --output=docs/bench/noise_model_levels_plain_median.json)

(the _mean JSONs at 990daa9, before estimate_single's selection measured patches against
the median level; the _median ones at 885efec, after it). The truth is pooled over all 11
photographs' cameras, the first_records model over the first 8 (each photograph has its
own camera of the profile's ranges). The fixed draws here are at the model's own level:
--method=recorrupted draws a model estimated from single images at 0.85 of it.

(the first two JSONs were made at e9d02f8 and ffb1b4a, whose draws were this script's own
numpy code, not yet --method=recorrupted's; the others draw as the method does).
About 6 minutes per noise model on 2 CPU cores.
"""

import dataclasses
import os
import tempfile
import time

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf

from bench import REPO_ROOT
from bench import json_output
from bench import provenance
from bench.recipes import camera as camera_recipe
import n2n
from n2n import noise_model as n2n_noise_model
from n2n.diagnosis import noise_statistics
from n2n.diagnosis import training_data
from n2n.pipelines import recorrupted

FLAGS = flags.FLAGS

flags.DEFINE_float('shot', 0.0015, 'The camera\'s raw shot-noise variance per unit signal.')
flags.DEFINE_float('chroma_blur', 2.0, 'The camera\'s chroma noise reduction (pixels).')
flags.DEFINE_float('luma_blur', 0.45, 'The camera\'s luma noise reduction (pixels).')
flags.DEFINE_float('optics_blur', 0.65, 'The lens blur (pixels).')
flags.DEFINE_list('noise_models', ['truth', 'single', 'corrected'], 'Where n\'s covariance '
                  'comes from: truth (the captures minus their renderings), single (the '
                  'single-image estimate), corrected (the same, its plane fit undone) or '
                  'first_records (the estimate from the first 8 photographs).')
flags.DEFINE_integer('recorruptions', 8, 'Draws of n per photograph (pairs trained on).')
flags.DEFINE_float('alpha', 1.0, 'R2R\'s alpha: input y + alpha n, target y - n / alpha.')
flags.DEFINE_integer('train_steps', 1200, 'Training steps (0: the noise models\' readings only).')
flags.DEFINE_integer('seed', 0, 'Seed of the cameras and the noise (camera_calibration\'s).')
flags.DEFINE_string('output', '', 'Write the results as JSON here.')

# n2n's arrays hold 0-1; y + alpha * n does not: values are trained and denoised as
# (v + OFFSET) / SPAN.
OFFSET, SPAN = 0.25, 1.5


def noise_model(name, noisy, references):
  """(n2n.noise_model.NoiseModel, the profile it came from) of the first captures noisy
  and their renderings ([H, W, 3] float64, 0-1): 'truth', 'single' or 'corrected'."""
  if name == 'truth':
    profile = noise_statistics.measure_pairs(list(zip(noisy, references)))
    model = n2n_noise_model.model_of_profile(profile)
    # measure_pairs reads (a - b) / sqrt(2): a capture minus its rendering holds one noise.
    return dataclasses.replace(model, sigma=model.sigma * np.sqrt(2.0)), profile
  if name in ('single', 'corrected'):
    profile = noise_statistics.estimate_single(noisy)
    return n2n_noise_model.model_of_profile(profile, corrected=name == 'corrected'), profile
  if name == 'first_records':
    # What train.py reads for --method=recorrupted: its first records only.
    profile = noise_statistics.estimate_single(noisy[:training_data.MAX_RECORDS])
    return n2n_noise_model.model_of_profile(profile), profile
  raise ValueError(f'--noise_models: {name!r} is not truth, single, corrected or '
                   'first_records')


def level_ratio(model, truth):
  """[bins] float: model's sigma over truth's (interpolated at model's signal bins),
  each the mean over the channels."""
  true_sigma = np.stack([np.interp(model.signal, truth.signal, truth.sigma[:, channel])
                         for channel in range(truth.sigma.shape[1])], axis=1)
  return np.mean(model.sigma / true_sigma, axis=1)


def draw(image, model, seed):
  """[H, W, C] float64 noise drawn like the model's for image ([H, W, C], 0-1), as
  --method=recorrupted draws it (n2n/pipelines/recorrupted.py)."""
  batch = tf.constant(image[np.newaxis], tf.float32)
  return recorrupted.draw(batch, model, tf.constant([seed, FLAGS.seed], tf.int32))[0].numpy()


def to_range(values):
  """float32 values as trained and denoised: (v + OFFSET) / SPAN, clipped to 0-1."""
  return np.clip((values + OFFSET) / SPAN, 0.0, 1.0).astype(np.float32)


def from_range(values):
  """to_range's inverse on 0-1 output, clipped to 0-1."""
  return np.clip(values * SPAN - OFFSET, 0.0, 1.0)


def run(name, noisy8, references8, folder):
  """{'gain_db', 'tta_gain_db', ...} of R2R with noise model `name` on the first
  captures noisy8 ([H, W, 3] uint8) scored against references8."""
  noisy = [image.astype(np.float64) / 255.0 for image in noisy8]
  renderings = [ref.astype(np.float64) / 255.0 for ref in references8]
  model, profile = noise_model(name, noisy, renderings)
  readings = {'noise_model': name, 'signal': [round(float(v), 3) for v in model.signal],
              'level_ratio': [round(float(v), 3)
                              for v in level_ratio(model, noise_model('truth', noisy, renderings)[0])]}
  if not FLAGS.train_steps:
    return readings
  pairs = []
  for index, image in enumerate(noisy):
    for draw_index in range(FLAGS.recorruptions):
      drawn = draw(image, model, index * FLAGS.recorruptions + draw_index)
      pairs.append((to_range(image + FLAGS.alpha * drawn), to_range(image - drawn / FLAGS.alpha)))
  config = n2n.train_config(model_dir=os.path.join(folder, name), noise='none', method='pairs',
                            crop_size=128, batch_size=8, train_steps=FLAGS.train_steps)
  start = time.perf_counter()
  n2n.train(config, captures=pairs, progress_bar=False)
  seconds = time.perf_counter() - start
  denoiser = n2n.Denoiser.load(config.run.model_dir)
  result = {**readings, 'train_seconds': round(seconds, 1),
            'correlation_x': [round(float(v), 3) for v in profile.correlation_x],
            'correlation_y': [round(float(v), 3) for v in profile.correlation_y],
            'corrected_x': [round(float(v), 3) for v in profile.corrected_correlation[
                noise_statistics.MAX_LAG, noise_statistics.MAX_LAG + 1:]],
            'level_correction': [round(float(v), 3) for v in profile.level_correction],
            'channel_correlation': np.round(profile.channel_correlation, 3).tolist()}
  for label, tta in (('', False), ('tta_', True)):
    gains = [camera_recipe.psnr(from_range(denoiser(to_range(image), tta=tta)) * 255.0, ref)
             - camera_recipe.psnr(image8, ref)
             for image, image8, ref in zip(noisy, noisy8, references8)]
    result[f'{label}gains_db'] = [round(float(gain), 3) for gain in gains]
    result[f'{label}gain_db'] = float(np.mean(gains))
  return result


def main(argv):
  del argv
  photographs = [camera_recipe.clean_photograph(path)
                 for path in camera_recipe.demo_photograph_paths()]
  scenes, references = camera_recipe.camera_scenes(
      photographs, FLAGS.shot, 0.0, 0, FLAGS.chroma_blur, FLAGS.luma_blur, FLAGS.optics_blur,
      FLAGS.seed)
  noisy8 = [first for first, _ in scenes]
  results = {**provenance.stamp(REPO_ROOT), 'shot': FLAGS.shot, 'chroma_blur': FLAGS.chroma_blur,
             'luma_blur': FLAGS.luma_blur, 'optics_blur': FLAGS.optics_blur,
             'recorruptions': FLAGS.recorruptions, 'alpha': FLAGS.alpha,
             'train_steps': FLAGS.train_steps, 'crop_size': 128, 'batch_size': 8,
             'seed': FLAGS.seed, 'photographs': len(photographs),
             'input_psnr': float(np.mean([camera_recipe.psnr(image, ref)
                                          for image, ref in zip(noisy8, references)])),
             'runs': []}
  with tempfile.TemporaryDirectory() as folder:
    for name in FLAGS.noise_models:
      row = run(name, noisy8, references, folder)
      results['runs'].append(row)
      print(f"{name}: level over the truth's {row['level_ratio']} at signal {row['signal']}")
      if not FLAGS.train_steps:
        json_output.write_results(FLAGS.output, results)
        continue
      print(f"{name}: {row['gain_db']:+.2f} dB, 8 orientations {row['tta_gain_db']:+.2f} dB "
            f"(trained {row['train_seconds']:.0f} s); read x {row['correlation_x']} "
            f"y {row['correlation_y']}")
      json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
