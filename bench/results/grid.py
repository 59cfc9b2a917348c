"""Noise2Noise against Noise2Clean for every corruption at one CPU budget, and the
page that shows it: docs/results.md, with pictures and PSNR curves.

  python -m bench.results.grid                    # the whole grid (about 2 hours on 2 cores)
  python -m bench.results.grid --rows=poisson     # one row: poisson N2N and N2C
  python -m bench.results.grid --rows=correlated_camera   # one correlated-noise dataset
  python -m bench.results.grid --render_only      # rewrite the page from docs/results/results.json
  python -m bench.results.grid --tta              # --tta on each row's N2N run, then the page

It trains and measures from a clean checkout only (--allow_dirty overrides):
each run records the commit it was trained at (bench/provenance.py), and the
page marks the runs no commit reproduces.

Each run is `train.py --flagfile=configs/cpu/<row>_<variant>.cfg` in a subprocess
(the command a user types), into --runs_dir/<row>_<variant>; a run whose last
checkpoint already reaches its train_steps is not trained again unless
--retrain. Every number on the page is read back from the runs' TensorBoard
event files (the evaluation during training on datasets/demo/val at the
paper's levels) or measured here (wall time); rows not run by this invocation
keep their numbers from docs/results/results.json. The pictures show one crop
of the first validation image with the evaluation's own noise: noisy | N2N |
N2C | clean. Curves are drawn as SVG by bench/results/svg_plot.py. The Gaussian and
the real-capture rows are also scored on the colour check
(bench/colour_check.py): saturated colours the training photographs lack.
"""

import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.evaluation import summaries  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import colour_check  # pylint: disable=g-import-not-at-top
from bench import tta_gain  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.results import camera_profiles as results_camera_profiles  # pylint: disable=g-import-not-at-top
from bench.results import real_dev as results_real_dev  # pylint: disable=g-import-not-at-top
from bench.results import correlated as results_correlated  # pylint: disable=g-import-not-at-top
from bench.results import single_image as results_single_image  # pylint: disable=g-import-not-at-top
from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
from bench.results import volumes_curve as results_volumes_curve  # pylint: disable=g-import-not-at-top
from bench.results import volumes_width as results_volumes_width  # pylint: disable=g-import-not-at-top
from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top
from bench.results import svg_plot  # pylint: disable=g-import-not-at-top


@dataclasses.dataclass(frozen=True)
class Row:
  """One corruption: its N2N and N2C runs, and ablations beside them.

  Attributes:
    pictured: the variants shown side by side in the row's picture.
    colour_checked: whether every run of the row is also scored on the colour
      check (datasets/colour_check/, bench/colour_check.py).
  """
  name: str
  title: str
  ablations: tuple = ()
  pictured: tuple = ('n2n', 'n2c')
  colour_checked: bool = False


ROWS = (
    Row('gaussian', 'Gaussian', ('n2n_noclip',), colour_checked=True),
    Row('poisson', 'Poisson'),
    Row('text', 'Text', ('n2n_l2',)),
    Row('impulse', 'Random-valued impulse', ('n2n_l2',)),
    Row('bernoulli', 'Bernoulli (pixels dropped)'),
    Row('scenes', 'Real captures', ('n2n_noperm',), ('n2n', 'n2n_noperm', 'n2c'),
        colour_checked=True),
)
ROW_NAMES = tuple(row.name for row in ROWS)
VARIANT_TITLES = {'n2n': 'N2N', 'n2c': 'N2C', 'n2n_noclip': 'N2N, no clipping',
                  'n2n_l2': 'N2N, L2 loss', 'n2n_noperm': 'N2N, no channel permutations'}
# The colour-check photograph pictured: a held-out photograph turned green.
COLOUR_PICTURE = 'cat_green'
# The scene data of configs/cpu/scenes_*.cfg, made as configs/demo_scenes.cfg says.
SCENE_DATA = os.path.join(REPO_ROOT, 'data', 'demo_scenes')
SCENE_DATA_COMMANDS = (
    ['datasets/make_noisy_scenes.py', '--clean_dir=datasets/demo/train',
     '--output_dir=data/demo_scenes/train_raw', '--captures=4'],
    ['datasets/make_noisy_scenes.py', '--clean_dir=datasets/demo/val',
     '--output_dir=data/demo_scenes/val', '--seed=1'],
    ['datasets/make_tfrecords.py', '--scenes', '--input_dir=data/demo_scenes/train_raw',
     '--output_dir=data/demo_scenes/train'],
)
DOCS = os.path.join(REPO_ROOT, 'docs')
RESULTS_DIR = os.path.join(DOCS, 'results')
RESULTS_JSON = os.path.join(RESULTS_DIR, 'results.json')
PICTURE_CROP = 160

flags.DEFINE_list('rows', list(ROW_NAMES + results_single_image.SECTION_NAMES
                               + results_correlated.DATASET_NAMES),
                  f'Rows to run: any of {", ".join(ROW_NAMES)}, the "One noisy image per '
                  f'scene" sections {", ".join(results_single_image.SECTION_NAMES)}, and the '
                  f'"Real (spatially correlated) noise" datasets '
                  f'{", ".join(results_correlated.DATASET_NAMES)}.')
flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'cpu'), 'Where the runs go.')
flags.DEFINE_boolean('retrain', False, 'Delete and retrain runs that are already complete.')
flags.DEFINE_boolean('ablations', True, 'Also run each row\'s ablations.')
flags.DEFINE_boolean('render_only', False, 'Train nothing; rewrite the page from results.json.')
flags.DEFINE_boolean('allow_dirty', False, 'Train and measure even when the checkout has '
                     'uncommitted changes; the results record "<commit>+changes" and the page '
                     'marks them as not reproducible from any commit.')
flags.DEFINE_boolean('tta', False, 'Instead of the grid: measure test-time augmentation '
                     '(bench/tta_gain.py) on the N2N run of each of --rows (training it first if '
                     'it is missing) and on the single-image sections\' equal-step runs that '
                     'exist, then rewrite the page.')
FLAGS = flags.FLAGS


def config_path(run_name):
  return os.path.join(REPO_ROOT, 'configs', 'cpu', f'{run_name}.cfg')


def is_complete(model_dir):
  """True when model_dir's config.json and newest checkpoint reach train_steps."""
  latest = tf.train.latest_checkpoint(model_dir) if os.path.isdir(model_dir) else None
  if not latest:
    return False
  return restore.checkpoint_step(latest) >= restore.read_run_config(
      model_dir).optimisation.train_steps


def train(run_name, model_dir, config_name=None, extra_flags=()):
  """Runs train.py for one configs/cpu/ run; returns its wall time in seconds.

  config_name: the configs/cpu/ file (default run_name); extra_flags follow it
  on the command line (another precision or step count of the same run).
  """
  if FLAGS.retrain and os.path.isdir(model_dir):
    shutil.rmtree(model_dir)
  command = [sys.executable, os.path.join(REPO_ROOT, 'train.py'),
             f'--flagfile={config_path(config_name or run_name)}', f'--model_dir={model_dir}',
             *extra_flags]
  print(f'{run_name}: {" ".join(command[1:])}', flush=True)
  started = time.perf_counter()
  log_path = os.path.join(FLAGS.runs_dir, f'{run_name}.log')
  with open(log_path, 'w') as log:
    finished = subprocess.run(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
  if finished.returncode:
    raise SystemExit(f'{run_name}: train.py exited with {finished.returncode}; see {log_path}')
  return time.perf_counter() - started


def run_result(run_name, model_dir, wall_seconds, trained):
  """What the page shows of one run, read from its events and config.json;
  trained: the stamp of its training (commit label, machine, date: training_stamp)."""
  config = restore.read_run_config(model_dir)
  evaluations = summaries.read_scalars(os.path.join(model_dir, summaries.EVAL_SUBDIR))
  training = summaries.read_scalars(os.path.join(model_dir, 'train'))
  levels = {}
  for tag, curve in evaluations.items():
    if not tag.startswith('psnr/'):
      continue
    level_tag = tag[len('psnr/'):]
    final_step, final = curve[-1]
    best_step, best = max(curve, key=lambda point: point[1])
    levels[level_tag] = {'final': final, 'final_step': final_step, 'best': best,
                         'best_step': best_step,
                         'input': evaluations[f'input_psnr/{level_tag}'][-1][1],
                         'curve': curve,
                         'held_out_curve': evaluations.get(f'held_out_loss/{level_tag}', [])}
  return {
      'run': run_name,
      'noise': config.corruption.noise,
      'target': config.method.target,
      'loss': config.method.loss,
      'method': config.method.name,
      'levels': levels,
      'train_steps': config.optimisation.train_steps,
      'batch_size': config.optimisation.batch_size,
      'crop_size': config.data.crop_size,
      'precision': config.run.precision,
      'gradient_clip_multiple': config.optimisation.gradient_clip_multiple,
      'wall_seconds': wall_seconds,
      'images_per_second': statistics.median(v for _, v in training['images_per_second']),
      'clipped_steps': int(sum(v for _, v in training.get('clipped_steps', []))),
      **trained,
  }


# Beside each run the grid trained: its provenance.stamp, taken when its training started.
STAMP_FILE = 'grid_provenance.json'
# What the grid wrote before it kept the whole stamp: the commit label alone.
OLD_COMMIT_FILE = 'grid_commit.txt'


def training_stamp(model_dir):
  """{'commit', 'machine', 'date'} of the run's training, as the grid recorded it then;
  'unknown' for what a run trained before the grid recorded it does not say (never the
  commit, host or day of this reading)."""
  path = os.path.join(model_dir, STAMP_FILE)
  if os.path.exists(path):
    with open(path) as source:
      return json.load(source)
  trained = {'commit': 'unknown', 'machine': 'unknown', 'date': 'unknown'}
  path = os.path.join(model_dir, OLD_COMMIT_FILE)
  if os.path.exists(path):
    with open(path) as source:
      trained['commit'] = source.read().strip()
  return trained


def prepare_scene_data():
  """Makes the scene data of configs/cpu/scenes_*.cfg unless it is there."""
  if os.path.exists(os.path.join(SCENE_DATA, 'train', 'manifest.json')):
    return
  for command in SCENE_DATA_COMMANDS:
    print(' '.join(command), flush=True)
    subprocess.run([sys.executable] + command, cwd=REPO_ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def write_strip(panels, output_path):
  """The centre PICTURE_CROP square of each [H, W, 3 or 1] panel, side by side, as RGB PNG.

  Returns:
    [top, left, size] of the crop.
  """
  height, width = panels[0].shape[:2]
  top, left = (height - PICTURE_CROP) // 2, (width - PICTURE_CROP) // 2
  gap = np.ones([PICTURE_CROP, 4, 3], np.float32)
  strip = []
  for panel in panels:
    crop = np.clip(panel[top:top + PICTURE_CROP, left:left + PICTURE_CROP], 0, 1)
    # Grayscale data (sCMOS) shows as gray RGB beside the gaps.
    strip += [np.repeat(crop, 3, axis=2) if crop.shape[2] == 1 else crop, gap]
  pixels = np.round(np.concatenate(strip[:-1], axis=1) * 255).astype(np.uint8)
  tf.io.write_file(output_path, tf.io.encode_png(pixels))
  return [top, left, PICTURE_CROP]


def picture(pictured, model_dirs, output_path):
  """noisy | the pictured variants | clean on one crop of the first validation
  image at the first evaluation level, with the evaluation's fixed noise (for
  scenes: the first capture of the first validation scene and its reference);
  written as PNG."""
  restored = {variant: restore.restore_model(model_dirs[variant]) for variant in pictured}
  config = restored[pictured[0]].run_config
  if config.corruption.noise == config_lib.NO_NOISE:
    scene = eval_data.load_eval_scenes(config.data.val_data, config, max_scenes=1)[0]
    name, level, noisy, clean = scene.name, None, scene.first, scene.reference
  else:
    name, image = eval_data.load_eval_images(config.data.val_data, max_images=1)[0]
    level = config.corruption.eval_noise_levels[0]
    noisy, clean = scoring.evaluation_input(scoring.make_corruption(config.corruption.noise), image,
                                            0, level, config.run.seed)
  panels = [noisy] + [whole_images.make_denoiser(restored[variant].model)(noisy)
                      for variant in pictured] + [clean]
  return {'image': name, 'level': level, 'variants': list(pictured),
          'crop': write_strip(panels, output_path)}


def colour_check_results(row, model_dirs, output_path):
  """Scores every run of the row on the colour check; pictures COLOUR_PICTURE.

  Returns:
    ({run name: [per-image dicts]}, picture dict).
  """
  checked, panels = {}, {}
  for variant, model_dir in model_dirs.items():
    scores = colour_check.score_model(restore.restore_model(model_dir), keep_images=True)
    checked[f'{row.name}_{variant}'] = [
        {'name': os.path.splitext(verdict.score.name)[0], 'input_psnr': verdict.score.input_psnr,
         'psnr': verdict.score.psnr, 'colour_error': list(verdict.score.colour_error),
         'meets_bar': verdict.passed} for verdict in colour_check.verdicts(scores)]
    pictured = next(score for score in scores
                    if os.path.splitext(score.name)[0] == COLOUR_PICTURE)
    panels[variant] = pictured
  first = panels[row.pictured[0]]
  strip = ([first.noisy] + [panels[variant].denoised for variant in row.pictured]
           + [first.clean])
  return checked, {'image': COLOUR_PICTURE, 'variants': list(row.pictured),
                   'crop': write_strip(strip, output_path)}


def curves_svg(row, results, output_path):
  """PSNR over training at the first evaluation level, every run of the row."""
  runs = [results[f'{row.name}_{variant}'] for variant in ('n2n', 'n2c') + row.ablations
          if f'{row.name}_{variant}' in results]
  tag = next(iter(runs[0]['levels']))
  series = [(VARIANT_TITLES[run['run'][len(row.name) + 1:]], run['levels'][tag]['curve'])
            for run in runs]
  where = f'level {tag.split("_", 1)[1]}' if '_' in tag else tag  # 'captures': no level
  with open(output_path, 'w') as svg:
    svg.write(svg_plot.line_chart(series, f'{row.title}, {where}: validation PSNR',
                                  'training step', 'PSNR (dB)',
                                  ('noisy input', runs[0]['levels'][tag]['input'])))


def train_and_read(run_name, config_name=None, extra_flags=()):
  """One run's result dict: trained first (train) unless complete, then read
  back (run_result) with the wall time its training took and the stamp of its
  training (training_stamp), both written beside it when it trained."""
  model_dir = os.path.join(FLAGS.runs_dir, run_name)
  timing_path = os.path.join(model_dir, 'grid_wall_seconds.txt')
  if FLAGS.retrain or not is_complete(model_dir):
    started = provenance.stamp(REPO_ROOT)
    wall = train(run_name, model_dir, config_name, extra_flags)
    # The tree changed during training: train.py may have imported either version.
    if provenance.commit(REPO_ROOT) != started['commit']:
      started['commit'] = started['commit'].split('+')[0] + provenance.DIRTY_SUFFIX
    with open(timing_path, 'w') as timing:
      timing.write(f'{wall:.1f}\n')
    with open(os.path.join(model_dir, STAMP_FILE), 'w') as stamp_file:
      json.dump(started, stamp_file)
  with open(timing_path) as timing:
    wall = float(timing.read())
  result = run_result(run_name, model_dir, wall, training_stamp(model_dir))
  print(f'{run_name}: {format_run(result)}', flush=True)
  return result


def single_image_section(section, results):
  """Runs one "One noisy image per scene" comparison (bench/results/single_image.py)
  and draws its picture and curves into results."""
  if section.name == 'single_captures':
    prepare_scene_data()  # its validation scenes
    results_single_image.prepare_capture_data()
  runs = results_single_image.run_section(section, train_and_read)
  results.update(runs)
  variants = results_single_image.VARIANTS
  model_dirs = {variant: os.path.join(FLAGS.runs_dir, f'{section.name}_{variant}')
                for variant in variants}
  results[section.name] = {'picture': picture(
      variants, model_dirs, os.path.join(RESULTS_DIR, f'{section.name}.png'))}
  equal_steps = [runs[f'{section.name}_{variant}'] for variant in variants]
  tag = next(iter(equal_steps[0]['levels']))
  titles = results_single_image.VARIANT_TITLES
  with open(os.path.join(RESULTS_DIR, f'{section.name}_psnr.svg'), 'w') as svg:
    svg.write(svg_plot.line_chart(
        [(titles[variant], run['levels'][tag]['curve']) for variant, run in
         zip(variants, equal_steps)], f'{section.title}: validation PSNR (equal steps)',
        'training step', 'PSNR (dB)', ('noisy input', equal_steps[0]['levels'][tag]['input'])))
  with open(os.path.join(RESULTS_DIR, f'{section.name}_held_out.svg'), 'w') as svg:
    svg.write(svg_plot.line_chart(
        [(titles[variant], runs[f'{section.name}_{variant}']['levels'][tag]['held_out_curve'])
         for variant in results_single_image.SINGLE_IMAGE_VARIANTS],
        f'{section.title}: held-out loss (no reference)', 'training step',
        'held-out loss (0-1 scale)'))


def correlated_dataset(dataset, results):
  """Runs one "Real (spatially correlated) noise" dataset (bench/results/correlated.py):
  its data, diagnosis, runs and scores; draws its picture and curves into results."""
  results_correlated.prepare_data(dataset)
  runs = results_correlated.run_dataset(dataset, train_and_read, FLAGS.runs_dir)
  results.update(runs)
  variants = dataset.variants
  model_dirs = {variant: os.path.join(FLAGS.runs_dir, f'{dataset.name}_{variant}')
                for variant in variants}
  results[dataset.name] = {
      'diagnosis': results_correlated.diagnose(dataset),
      'scenes': results_correlated.scene_counts(dataset),
      'picture': picture(variants, model_dirs, os.path.join(RESULTS_DIR, f'{dataset.name}.png'))}
  titles = results_correlated.VARIANT_TITLES
  ordered = [runs[f'{dataset.name}_{variant}'] for variant in variants]
  tag = next(iter(ordered[0]['levels']))
  with open(os.path.join(RESULTS_DIR, f'{dataset.name}_psnr.svg'), 'w') as svg:
    svg.write(svg_plot.line_chart(
        [(titles[variant], run['levels'][tag]['curve']) for variant, run in
         zip(variants, ordered)], f'{dataset.title}: validation PSNR', 'training step',
        'PSNR (dB)', ('noisy input', ordered[0]['levels'][tag]['input'])))
  with open(os.path.join(RESULTS_DIR, f'{dataset.name}_held_out.svg'), 'w') as svg:
    svg.write(svg_plot.line_chart(
        [(titles[variant], run['levels'][tag]['held_out_curve'])
         for variant, run in zip(variants, ordered)
         if variant in results_correlated.SINGLE_IMAGE_VARIANTS],
        f'{dataset.title}: held-out loss (no reference)', 'training step',
        'held-out loss (0-1 scale)'))


def measure_tta(results):
  """results['tta'][run]: bench/tta_gain.measure of the N2N run of each of --rows
  (trained first if missing) and of the single-image sections' equal-step runs."""
  measured = results.setdefault('tta', {})
  names = [f'{row.name}_n2n' for row in ROWS if row.name in FLAGS.rows]
  names += [f'{section.name}_{variant}' for section in results_single_image.SECTIONS
            for variant in ('n2nb', 'blind_spot', 'n2n2')
            if is_complete(os.path.join(FLAGS.runs_dir, f'{section.name}_{variant}'))]
  for name in names:
    model_dir = os.path.join(FLAGS.runs_dir, name)
    if name.startswith('scenes'):
      prepare_scene_data()
    if not is_complete(model_dir):
      train(name, model_dir)
    measured[name] = {**provenance.stamp(REPO_ROOT), **tta_gain.measure(model_dir)}
    level = next(iter(measured[name]['levels'].values()))
    print(f'{name}: TTA {level["tta"]:.2f} dB against {level["plain"]:.2f} dB, '
          f'{measured[name]["cost"]:.2f}x the time', flush=True)


def save(results):
  """Writes results to RESULTS_JSON (after each row, so a stopped grid keeps what it measured)."""
  with open(RESULTS_JSON, 'w') as results_file:
    json.dump(results, results_file, indent=1)


def main(argv):
  del argv
  known = ROW_NAMES + results_single_image.SECTION_NAMES + results_correlated.DATASET_NAMES
  unknown = set(FLAGS.rows) - set(known)
  if unknown:
    raise app.UsageError(f'--rows: unknown {", ".join(sorted(unknown))}; choose from '
                         f'{", ".join(known)}')
  if not FLAGS.render_only:
    try:
      provenance.require_clean_tree(REPO_ROOT, FLAGS.allow_dirty)
    except ValueError as error:
      raise app.UsageError(str(error)) from error
  os.makedirs(RESULTS_DIR, exist_ok=True)
  results = {}
  if os.path.exists(RESULTS_JSON):
    with open(RESULTS_JSON) as results_file:
      results = json.load(results_file)
  grid = not (FLAGS.render_only or FLAGS.tta)
  rows = [row for row in ROWS if row.name in FLAGS.rows] if grid else []
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  for row in rows:
    if row.name == 'scenes':
      prepare_scene_data()
    variants = ('n2n', 'n2c') + (row.ablations if FLAGS.ablations else ())
    model_dirs = {}
    for variant in variants:
      run_name = f'{row.name}_{variant}'
      model_dirs[variant] = os.path.join(FLAGS.runs_dir, run_name)
      results[run_name] = train_and_read(run_name)
    results[row.name] = {'picture': picture(row.pictured, model_dirs,
                                            os.path.join(RESULTS_DIR, f'{row.name}.png'))}
    if row.colour_checked:
      checked, colour_picture = colour_check_results(
          row, model_dirs, os.path.join(RESULTS_DIR, f'{row.name}_colour.png'))
      for run_name, images in checked.items():
        results[run_name]['colour_check'] = images
      results[row.name]['colour_picture'] = colour_picture
    curves_svg(row, results, os.path.join(RESULTS_DIR, f'{row.name}_psnr.svg'))
    save(results)
  sections = [section for section in results_single_image.SECTIONS
              if section.name in FLAGS.rows] if grid else []
  for section in sections:
    single_image_section(section, results)
    save(results)
  datasets = [dataset for dataset in results_correlated.DATASETS
              if dataset.name in FLAGS.rows] if grid else []
  for dataset in datasets:
    correlated_dataset(dataset, results)
    save(results)
  if FLAGS.tta:
    measure_tta(results)
    save(results)
  from bench.results import page as results_page  # pylint: disable=g-import-not-at-top
  with open(os.path.join(DOCS, 'results.md'), 'w') as page:
    page.write(results_page.render(ROWS, VARIANT_TITLES, results,
                                   colour_bar=colour_check.MAX_CHANNEL_ERROR,
                                   single_image=results_single_image,
                                   correlated=results_correlated,
                                   peers=results_correlated.read_peers(),
                                   real=results_real_dev.section(results_real_dev.read_results()),
                                   camera=results_camera_profiles.section(
                                       results_camera_profiles.read_results(),
                                       results_camera_profiles.read_results(
                                           results_camera_profiles.model_json_path)),
                                   volumes=results_volumes.section(
                                       results_volumes.read_results()) +
                                   results_volumes_curve.section(
                                       results_volumes_curve.read_results(),
                                       results_volumes.GOAL_DB) +
                                   results_volumes_z_context.section(
                                       results_volumes_z_context.read_results(),
                                       results_volumes.read_results()) +
                                   results_volumes_width.section(
                                       results_volumes_width.read_results())))
  print(f'wrote {os.path.join(DOCS, "results.md")}')


def format_run(run):
  levels = ', '.join(f'{tag}: {scores["final"]:.2f} dB (input {scores["input"]:.2f})'
                     for tag, scores in run['levels'].items())
  return (f'{levels}; {run["wall_seconds"]:.0f} s, {run["images_per_second"]:.1f} images/s, '
          f'{run["clipped_steps"]} clipped steps')


if __name__ == '__main__':
  app.run(main)
