"""The "Real (spatially correlated) noise" section of docs/results.md: its data,
runs and scores (issue 30).

python -m bench.results.grid --rows=correlated_camera,correlated_jpeg,correlated_scmos
calls run_dataset for each; page.correlated_section renders what it
stores.

Three simulated datasets of the demo photographs (datasets/make_noisy_scenes.py),
each two captures of every photograph with the clean image as reference:
  correlated_camera  the camera pipeline: raw shot and read noise, demosaiced,
                     colour-corrected and tone-mapped (correlated over ~2 pixels)
  correlated_jpeg    the same, saved as JPEG at quality 90
  correlated_scmos   the sCMOS-like microscope: Poisson-Gaussian noise and an
                     offset per row (correlated along whole rows)
On each the same U-Net trains as configs/cpu/correlated_<dataset>_<variant>.cfg
says (configs/cpu/correlated_base.cfg's budget):
  n2nb, blind_spot     the single-image methods on the first capture, their
                       correlated-noise scheme turned off (strides 1, no line)
  n2nb_scheme,         the same with the scheme: what train.py chooses from the
  blind_spot_scheme    diagnosis where no flag gives it (blind-spot's strides on
                       the camera are given, the same as chosen: 4/1)
  n2n2                 Noise2Noise on the two captures
  n2c                  the captures against the reference, for reference
Each run is scored twice: during training on the dataset's validation scenes
(the demo's two validation photographs, their curves and held-out loss), and at
its end on the nine training photographs' first captures, the images a
single-image user trains on and then denoises (own_capture_scores).
"""

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from bench import REPO_ROOT
from bench import reference_free_correlation
from bench.results import single_image as results_single_image

DATA_ROOT = os.path.join(REPO_ROOT, 'data', 'correlated')

REFERENCE = 'n2n2'
# Each single-image method without its scheme, and with it.
SCHEME_PAIRS = (('n2nb', 'n2nb_scheme'), ('blind_spot', 'blind_spot_scheme'))
SINGLE_IMAGE_VARIANTS = ('n2nb', 'n2nb_scheme', 'blind_spot', 'blind_spot_scheme')
ALL_VARIANTS = SINGLE_IMAGE_VARIANTS + ('n2n2', 'n2c')
VARIANT_TITLES = {
    'n2nb': 'Neighbor2Neighbor, no scheme',
    'n2nb_scheme': 'Neighbor2Neighbor, with scheme',
    'blind_spot': 'blind-spot, no scheme',
    'blind_spot_scheme': 'blind-spot, with scheme',
    'n2n2': 'N2N (2 captures)',
    'n2c': 'N2C (clean target)',
}
# Issue 30's goal, on the camera pipeline: the best single-image method at
# least GOAL_GAIN_DB over the input and within GOAL_GAP_DB of N2N on two captures.
GOAL_DATASET = 'correlated_camera'
GOAL_GAIN_DB = 3.0
GOAL_GAP_DB = 1.5
# The seeds of the simulated noise: training scenes, validation scenes.
TRAIN_SEED = 3
VAL_SEED = 1
# The classical peer's scores (bench/correlated_peers.py), shown where present.
PEERS_JSON = os.path.join(REPO_ROOT, 'docs', 'bench', 'correlated_peers.json')


@dataclasses.dataclass(frozen=True)
class Dataset:
  """One simulated dataset: its name (the configs' prefix), title, the
  simulator's flags and the variants trained on it."""
  name: str
  title: str
  simulator_flags: tuple
  variants: tuple = ALL_VARIANTS

  @property
  def folder(self):
    """data/correlated/<name without 'correlated_'>."""
    return os.path.join(DATA_ROOT, self.name[len('correlated_'):])


DATASETS = (
    Dataset('correlated_camera', 'Camera pipeline (demosaiced raw noise)',
            ('--pipeline=camera',)),
    Dataset('correlated_jpeg', 'Camera pipeline, saved as JPEG (quality 90)',
            ('--pipeline=camera', '--jpeg_quality=90')),
    # NO_SCHEME_NOTES says why Neighbor2Neighbor has no scheme run here.
    Dataset('correlated_scmos', 'sCMOS-like microscope (Poisson-Gaussian noise, row offsets)',
            ('--pipeline=microscope',),
            ('n2nb', 'blind_spot', 'blind_spot_scheme', 'n2n2', 'n2c')),
)
DATASET_NAMES = tuple(dataset.name for dataset in DATASETS)
# Why a dataset lacks a method's scheme run, for the page.
NO_SCHEME_NOTES = {
    ('correlated_scmos', 'n2nb'): (
        'Neighbor2Neighbor has no scheme for row noise: an offset shared by a whole row is as '
        'correlated 30 pixels apart as one, so no stride separates it, and train.py chooses '
        'none.'),
}
# A held-out loss "ranks the evaluations as the true error does" from this Spearman rho.
RANKS_SPEARMAN = 0.8


def data_commands(dataset):
  """The commands (argv after python) making dataset's data, in order; the
  first captures are copied between the third and the fourth
  (results_single_image.copy_first_captures)."""
  folder = os.path.relpath(dataset.folder, REPO_ROOT)
  return (
      ['datasets/make_noisy_scenes.py', '--clean_dir=datasets/demo/train',
       f'--output_dir={folder}/train_raw', '--captures=2', f'--seed={TRAIN_SEED}',
       *dataset.simulator_flags],
      ['datasets/make_noisy_scenes.py', '--clean_dir=datasets/demo/val',
       f'--output_dir={folder}/val', '--captures=2', f'--seed={VAL_SEED}',
       *dataset.simulator_flags],
      ['datasets/make_tfrecords.py', '--scenes', f'--input_dir={folder}/train_raw',
       f'--output_dir={folder}/train'],
      ['datasets/make_tfrecords.py', '--noisy_images', f'--input_dir={folder}/first_raw',
       f'--output_dir={folder}/first'],
  )


def prepare_data(dataset):
  """Makes dataset.folder's data unless data made by the same commands is there.

  Raises:
    SystemExit: naming the command that failed and its last line of error.
  """
  stamp = os.path.join(dataset.folder, 'made_by.json')
  commands = [list(command) for command in data_commands(dataset)]
  if os.path.exists(stamp):
    with open(stamp) as made_by:
      if json.load(made_by) == commands:
        return
  shutil.rmtree(dataset.folder, ignore_errors=True)
  for index, command in enumerate(commands):
    if index == 3:
      results_single_image.copy_first_captures(os.path.join(dataset.folder, 'train_raw'),
                          os.path.join(dataset.folder, 'first_raw'))
    print(' '.join(command), flush=True)
    made = subprocess.run([sys.executable] + command, cwd=REPO_ROOT, capture_output=True,
                          text=True)
    if made.returncode:
      last = (made.stderr.strip().splitlines() or ['(no output)'])[-1]
      raise SystemExit(f'{" ".join(command)} exited with {made.returncode}: {last}')
  with open(stamp, 'w') as made_by:
    json.dump(commands, made_by)


def scene_counts(dataset):
  """{'own_captures': training scenes, 'validation': validation scenes} of dataset's data."""
  return {part: len(os.listdir(os.path.join(dataset.folder, folder)))
          for part, folder in (('own_captures', 'train_raw'), ('validation', 'val'))}


def diagnose(dataset):
  """What diagnose.py reads of dataset's training data: from the first captures
  alone (what a single-image user has) and from both captures (the truth the
  simulator made, measured directly).

  Returns:
    {'single': {...}, 'pairs': {...}}, each the profile's lag-1..4 correlations,
    sigma and the kind of noise; 'single' also the flags recommended.
  """
  # pylint: disable=g-import-not-at-top  (TensorFlow only where diagnosed)
  from n2n.diagnosis import noisy_data
  from n2n.diagnosis import report
  firsts = os.path.join(dataset.folder, 'first_raw')
  single, images = noisy_data.diagnose_images(
      [os.path.join(firsts, name) for name in sorted(os.listdir(firsts))])
  pairs, scenes = noisy_data.diagnose_scenes(os.path.join(dataset.folder, 'train_raw'))
  out = {}
  for source, profile, count in (('single', single, images), ('pairs', pairs, scenes)):
    out[source] = {'images': count, 'kind': report.kind_of(profile),
                   'correlation_x': [round(float(v), 3) for v in profile.correlation_x],
                   'correlation_y': [round(float(v), 3) for v in profile.correlation_y],
                   'sigma': round(float(np.nanmean(profile.sigma)), 5)}
  out['single']['recommended'] = list(report.recommend(single).flags)
  return out


def scheme_of(config):
  """What correlated-noise scheme a run's TrainConfig trained with, in words:
  'pixel-shuffle 2/2', 'structN2V rows, span 63', 'none' or '-' (a method without one)."""
  # pylint: disable=g-import-not-at-top
  from n2n import config as config_lib
  from n2n.methods import single_image
  name = config.method.name
  if name not in ('neighbor2neighbor', 'blind_spot'):
    return '-'
  parts = []
  stride = single_image.stride_of(config_lib.flag_value(config, f'{name}_stride'))
  inference = single_image.stride_of(config_lib.flag_value(config, f'{name}_inference_stride'))
  if stride > 1 or inference > 1:
    parts.append(f'pixel-shuffle {stride}/{inference}')
  if name == 'blind_spot':
    line = config_lib.flag_value(config, 'blind_spot_line')
    if line in ('rows', 'columns'):
      parts.append(f'structN2V {line}, span {config_lib.flag_value(config, "blind_spot_line_span")}')
  passes = config_lib.flag_value(config, f'{name}_refinement_passes')
  if passes:
    parts.append(f'{passes} refinement passes')
  if config_lib.flag_value(config, f'{name}_inference_orientations') == 8:
    parts.append('8 orientations')
  return ', '.join(parts) or 'none'


def own_capture_scores(model_dir, dataset):
  """The run's model on the first capture of each training scene, the images a
  single-image method trained on, against the references, scored as the
  evaluation during training scores the validation scenes (scoring.evaluate_scenes,
  the same precision and units).

  Returns:
    {'psnr', 'input': mean dB over the scenes, 'images': [{'name', 'psnr',
    'input_psnr', 'colour_error': [C] mean error per channel}]}.
  """
  # pylint: disable=g-import-not-at-top
  from n2n import hardware
  from n2n.evaluation import eval_data
  from n2n.evaluation import scoring
  from n2n.inference import restore
  from n2n.inference import whole_images
  # denoise.py's default precision, which the evaluation during training uses too.
  restored = restore.restore_model(model_dir, hardware.resolve_precision('auto'))
  scenes = eval_data.load_eval_scenes(os.path.join(dataset.folder, 'train_raw'),
                                      restored.run_config, flag_name='scenes')
  level, = scoring.evaluate_scenes(whole_images.make_denoiser(restored.model), scenes)
  return summary(level.images)


def summary(image_scores):
  """{'psnr', 'input': mean dB, 'images': [{'name', 'psnr', 'input_psnr',
  'colour_error'}]} of scoring.ImageScores (of images with references)."""
  images = [{'name': image.name, 'psnr': image.psnr, 'input_psnr': image.input_psnr,
             'colour_error': list(image.colour_error)} for image in image_scores]
  return {'psnr': float(np.mean([image['psnr'] for image in images])),
          'input': float(np.mean([image['input_psnr'] for image in images])),
          'images': images}


def run_dataset(dataset, train_and_read, runs_dir):
  """Trains (or reads back) every run of one dataset and scores it.

  Args:
    dataset: Dataset (its data made: prepare_data).
    train_and_read: fn(run name, config name, extra flags) -> the run's result
      dict (grid.run_result), training it first unless complete.
    runs_dir: the folder of the runs (runs_dir/<run name>).

  Returns:
    {run name: result}; each result also carries 'scheme' (scheme_of) and
    'own_captures' (own_capture_scores), single-image runs 'correlation'
    (their held-out loss against the true error over their evaluations).
  """
  # pylint: disable=g-import-not-at-top
  from n2n.inference import restore
  results = {}
  for variant in dataset.variants:
    name = f'{dataset.name}_{variant}'
    result = train_and_read(name, name, [])
    model_dir = os.path.join(runs_dir, name)
    result['scheme'] = scheme_of(restore.read_run_config(model_dir))
    result['own_captures'] = own_capture_scores(model_dir, dataset)
    for level in result['levels'].values():
      if level.get('held_out_curve'):
        level['correlation'] = reference_free_correlation.correlations(level['curve'],
                                                                       level['held_out_curve'])
    results[name] = result
  return results


def best_single_image(results, dataset_name):
  """(variant, result) of the single-image run scoring best on its own captures
  against the references (a choice only a simulation can make); None before any."""
  found = [(variant, results[f'{dataset_name}_{variant}']) for variant in SINGLE_IMAGE_VARIANTS
           if f'{dataset_name}_{variant}' in results]
  if not found:
    return None
  return max(found, key=lambda pair: pair[1]['own_captures']['psnr'])


def goal(results):
  """(gain over the input, gap to N2N on two captures) in dB of the best
  single-image run on GOAL_DATASET's own captures, and whether each meets its
  goal; None before those runs exist."""
  best = best_single_image(results, GOAL_DATASET)
  reference = results.get(f'{GOAL_DATASET}_{REFERENCE}')
  if best is None or reference is None:
    return None
  scores = best[1]['own_captures']
  gain = scores['psnr'] - scores['input']
  gap = scores['psnr'] - reference['own_captures']['psnr']
  # Judged at the page's 0.01 dB, so a verdict never contradicts the figure beside it.
  return {'variant': best[0], 'gain': gain, 'gap': gap,
          'gain_met': round(gain, 2) >= GOAL_GAIN_DB, 'gap_met': round(gap, 2) >= -GOAL_GAP_DB}


def read_peers(path=PEERS_JSON):
  """bench/correlated_peers.py's JSON, or None where it was not run."""
  if not os.path.exists(path):
    return None
  with open(path) as peers:
    return json.load(peers)
