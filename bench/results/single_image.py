"""The "One noisy image per scene" section of docs/results.md: its runs and data.

python -m bench.results.grid --rows=single_gaussian,single_captures calls run_section
for each; page.single_image_section renders what it stores.

Each section trains the same U-Net four ways on the demo photographs, with the
budget of configs/cpu/base.cfg:
  n2nb        Neighbor2Neighbor on ONE noisy capture of each photograph
  blind_spot  blind-spot (N2V2's masking and network) on the same one capture
  n2n2        Noise2Noise with pairs of TWO captures of each photograph
  n2c         captures against the clean image (for reference): the one fixed
              capture with synthetic noise, either capture of the scenes
first at equal steps; then each single-image method again at equal training
time: as many steps as its measured images/s buys in the time n2n2 took for
its steps (`_time` runs, the same configuration with --train_steps changed, so
their learning-rate schedule completes); in the Gaussian section also n2nb and
n2n2 in float32 (`_f32` runs), the goal's pair in both precisions.
"""

import dataclasses
import os
import shutil
import subprocess
import sys

from bench import REPO_ROOT
from bench import reference_free_correlation


# The reference run of a section, and the single-image methods timed against it.
REFERENCE = 'n2n2'
SINGLE_IMAGE_VARIANTS = ('n2nb', 'blind_spot')
VARIANTS = ('n2nb', 'blind_spot', 'n2n2', 'n2c')
VARIANT_TITLES = {'n2nb': 'Neighbor2Neighbor (1 capture)', 'blind_spot': 'blind-spot (1 capture)',
                  'n2n2': 'N2N (2 captures)', 'n2c': 'N2C (clean target)'}
# The goal of issue 22: Neighbor2Neighbor within this many dB of N2N with two captures.
GOAL_GAP_DB = 1.0
# --train_steps of an equal-time run is a multiple of this (configs/cpu/base.cfg's steps_per_loop).
STEP_MULTIPLE = 25


@dataclasses.dataclass(frozen=True)
class Section:
  """One comparison: its name (the configs' prefix), title and float32 variants."""
  name: str
  title: str
  float32_variants: tuple = ()


SECTIONS = (
    Section('single_gaussian', 'Gaussian noise, sigma 25', ('n2nb', 'n2n2')),
    Section('single_captures', 'Simulated 16-bit sensor captures'),
)
SECTION_NAMES = tuple(section.name for section in SECTIONS)

# The data of configs/cpu/single_captures_*.cfg: two captures of each demo photograph
# (scene dataset), and the first of them alone (noisy-image dataset). Validation:
# data/demo_scenes/val, which grid.prepare_scene_data makes.
CAPTURE_DATA = os.path.join(REPO_ROOT, 'data', 'single_captures')
SINGLE_CAPTURE_DATA_COMMANDS = (
    ['datasets/make_noisy_scenes.py', '--clean_dir=datasets/demo/train',
     '--output_dir=data/single_captures/train_raw', '--captures=2'],
    ['datasets/make_tfrecords.py', '--scenes', '--input_dir=data/single_captures/train_raw',
     '--output_dir=data/single_captures/train'],
    # (copy_first_captures runs here)
    ['datasets/make_tfrecords.py', '--noisy_images',
     '--input_dir=data/single_captures/first_raw', '--output_dir=data/single_captures/first'],
)


def first_capture(scene_dir):
  """The path of a scene folder's first capture (capture_00.<any extension>)."""
  return os.path.join(scene_dir, next(name for name in sorted(os.listdir(scene_dir))
                                      if os.path.splitext(name)[0] == 'capture_00'))


def copy_first_captures(scenes_dir, output_dir):
  """output_dir/SCENE.<ext>: each scene's first capture, the only capture a
  single-image method may see."""
  os.makedirs(output_dir, exist_ok=True)
  for scene in sorted(os.listdir(scenes_dir)):
    source = first_capture(os.path.join(scenes_dir, scene))
    shutil.copyfile(source, os.path.join(output_dir, scene + os.path.splitext(source)[1]))


def prepare_capture_data():
  """Makes data/single_captures/ unless it is there."""
  if os.path.exists(os.path.join(CAPTURE_DATA, 'first', 'manifest.json')):
    return
  for index, command in enumerate(SINGLE_CAPTURE_DATA_COMMANDS):
    if index == 2:
      copy_first_captures(os.path.join(CAPTURE_DATA, 'train_raw'),
                          os.path.join(CAPTURE_DATA, 'first_raw'))
    print(' '.join(command), flush=True)
    subprocess.run([sys.executable] + command, cwd=REPO_ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def equal_time_steps(reference, run):
  """--train_steps giving run the training time reference took: its steps
  scaled by the two runs' measured images/s, rounded to STEP_MULTIPLE."""
  steps = reference['train_steps'] * run['images_per_second'] / reference['images_per_second']
  return max(STEP_MULTIPLE, int(round(steps / STEP_MULTIPLE)) * STEP_MULTIPLE)


def run_section(section, train_and_read):
  """Trains (or reads back) every run of one section.

  Args:
    section: Section.
    train_and_read: fn(run name, config name, extra flags) -> the run's result
      dict (grid.run_result), training it first unless complete.

  Returns:
    {run name: result}; single-image runs carry 'correlation' (their held-out
    loss against the true error over their evaluations).
  """
  results = {}
  for variant in VARIANTS:
    name = f'{section.name}_{variant}'
    results[name] = train_and_read(name, name, [])
  reference = results[f'{section.name}_{REFERENCE}']
  for variant in section.float32_variants:
    name = f'{section.name}_{variant}'
    results[f'{name}_f32'] = train_and_read(f'{name}_f32', name, ['--precision=float32'])
  for variant in SINGLE_IMAGE_VARIANTS:
    name = f'{section.name}_{variant}'
    steps = equal_time_steps(reference, results[name])
    results[f'{name}_time'] = train_and_read(f'{name}_time', name, [f'--train_steps={steps}'])
  for name, result in results.items():
    for level in result['levels'].values():
      if level.get('held_out_curve'):
        level['correlation'] = reference_free_correlation.correlations(level['curve'],
                                                                 level['held_out_curve'])
  return results
