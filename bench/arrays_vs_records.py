"""Training from numpy arrays (n2n.train(config, noisy=[...])) against the same run from
TFRecords made of the same images as files (datasets/make_tfrecords.py --noisy_images,
then train_data=), and the memory n2n.train takes for a large stack given as an array.

  python -m bench.arrays_vs_records --quick                 # a small check, about 2 minutes
  python -m bench.arrays_vs_records --output=docs/bench/arrays_vs_records.json

speed: --images noisy uint16 images of --size pixels (a smooth scene with Poisson-Gaussian
noise), Neighbor2Neighbor at --network_width, --steps steps. Each trial runs in a fresh
process, alternating arrays and records, --repeats times each. Per trial: the median
seconds per step over the loops after the first (which traces the step), and the seconds
from the call to the first step (for arrays: checking, fingerprinting and writing them;
for records: the files are written as TIFF and converted by the dataset tool beforehand,
timed on their own once). The medians over trials, and arrays over records.

memory: one noisy uint16 stack of --memory_mb MiB (Z planes of a square), given as an array
(noisy=[stack], axes='ZYX') to a 3D Neighbor2Neighbor run of --memory_steps steps, in a
fresh process: the process's peak RSS (VmHWM) before and after n2n.train, and the peak
of the Python allocations during it (tracemalloc: numpy's, not TensorFlow's). The data
are written into the run as blocks whose two captures take at most 256 MiB and
cached in memory when they fit --cache_budget_mb (the default 2048), as any dataset.

Imports n2n as installed; run it from the repository root (python -m) so that `bench` is
found.
"""

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags
import numpy as np

from bench import REPO_ROOT
from bench import json_output
from bench import provenance

flags.DEFINE_boolean('quick', False, 'Tiny sizes, for checking that the bench runs: 4 images of '
                     '128 px, 20 steps, width 8, 2 repeats, a 32 MiB stack (flags given beside '
                     'it win).')
flags.DEFINE_list('sections', ['speed', 'memory'], 'speed, memory.')
flags.DEFINE_integer('images', 16, 'speed: noisy images.', lower_bound=1)
flags.DEFINE_integer('size', 512, 'speed: their side in pixels.', lower_bound=64)
flags.DEFINE_integer('steps', 200, 'speed: training steps per trial.', lower_bound=20)
flags.DEFINE_integer('network_width', 48, 'The U-Net\'s width (48: the paper\'s).')
flags.DEFINE_integer('repeats', 5, 'speed: trials of each kind, interleaved.', lower_bound=1)
flags.DEFINE_integer('memory_mb', 2048, 'memory: the stack\'s size, MiB.', lower_bound=1)
flags.DEFINE_integer('memory_steps', 20, 'memory: training steps.', lower_bound=10)
flags.DEFINE_string('work_dir', '', 'Where data and runs go (removed after); empty: a '
                    'temporary folder.')
flags.DEFINE_string('output', '', 'Also write the results here as JSON.')
# One trial, in the process the parent starts: 'arrays', 'records' or 'memory'.
flags.DEFINE_string('trial', '', 'Internal: run one trial and print its JSON.')
flags.DEFINE_string('records', '', 'Internal: the records of a records trial.')
flags.DEFINE_string('model_dir', '', 'Internal: the trial\'s run folder.')
FLAGS = flags.FLAGS

BATCH_SIZE = 8
CROP_SIZE = 64
STEPS_PER_LOOP = 10
MEMORY_PLANES = 32


def noisy_images(count, size, seed=0):
  """count [size, size] uint16 images: a smooth scene (block means, blurred) of up to
  ~3000 counts with Poisson-Gaussian noise."""
  rng = np.random.default_rng(seed)
  images = []
  for _ in range(count):
    coarse = rng.uniform(300, 3000, (size // 16 + 2, size // 16 + 2))
    signal = np.kron(coarse, np.ones((16, 16)))[:size, :size]
    for axis in (0, 1):
      signal = (signal + np.roll(signal, 4, axis) + np.roll(signal, -4, axis)) / 3
    images.append(np.clip(rng.poisson(signal) + rng.normal(0, 20, signal.shape), 0,
                          65535).astype(np.uint16))
  return images


def noisy_stack(megabytes, seed=0):
  """A [MEMORY_PLANES, S, S] uint16 stack of about megabytes MiB: uniform noise on a ramp
  (what it holds does not change what the memory is)."""
  side = int(np.sqrt(megabytes * 2**20 / (2 * MEMORY_PLANES)))
  rng = np.random.default_rng(seed)
  stack = np.empty((MEMORY_PLANES, side, side), np.uint16)
  ramp = np.linspace(500, 2500, side).astype(np.uint16)
  for plane in stack:
    plane[:] = ramp + rng.integers(0, 400, (side, side), dtype=np.uint16)
  return stack


def _config(model_dir, steps, width, **overrides):
  import n2n  # pylint: disable=g-import-not-at-top
  values = dict(model_dir=model_dir, noise='none', method='neighbor2neighbor',
                crop_size=CROP_SIZE, batch_size=BATCH_SIZE, train_steps=steps,
                network_width=width, steps_per_loop=STEPS_PER_LOOP, log_every=1000,
                checkpoint_every=100000, seed=1)
  values.update(overrides)
  return n2n.train_config(**values)


def _timed_train(config, **arguments):
  """n2n.train with a progress callback: (seconds to the first step, median seconds per
  step over the loops after the first; None with one loop)."""
  import n2n  # pylint: disable=g-import-not-at-top
  started = time.perf_counter()
  times = {}

  def progress(step, unused_total, logs):
    times.setdefault('first', time.perf_counter() - started)
    if 'seconds_per_step' in logs:
      times.setdefault('loops', []).append(logs['seconds_per_step'])

  n2n.train(config, progress=progress, progress_bar=False, **arguments)
  after_first = times['loops'][1:]
  return times['first'], statistics.median(after_first) if after_first else None


def speed_trial(kind):
  """One speed trial in this process; its JSON."""
  config = _config(FLAGS.model_dir, FLAGS.steps, FLAGS.network_width)
  if kind == 'arrays':
    images = noisy_images(FLAGS.images, FLAGS.size)
    first, per_step = _timed_train(config, noisy=images)
  else:
    import n2n  # pylint: disable=g-import-not-at-top
    first, per_step = _timed_train(n2n.replace_settings(config, train_data=FLAGS.records))
  return {'kind': kind, 'seconds_to_first_step': first, 'seconds_per_step': per_step}


def memory_trial():
  """The memory trial in this process; its JSON."""
  import tracemalloc  # pylint: disable=g-import-not-at-top
  stack = noisy_stack(FLAGS.memory_mb)
  before = _peak_rss_mib()
  config = _config(FLAGS.model_dir, FLAGS.memory_steps, FLAGS.network_width, crop_depth=8,
                   batch_size=2)
  tracemalloc.start()
  started = time.perf_counter()
  first, _ = _timed_train(config, noisy=[stack], axes='ZYX')
  seconds = time.perf_counter() - started
  _, traced_peak = tracemalloc.get_traced_memory()
  tracemalloc.stop()
  return {'stack_shape': list(stack.shape), 'stack_mib': stack.nbytes / 2**20,
          'peak_rss_mib_before_train': before, 'peak_rss_mib_after_train': _peak_rss_mib(),
          'python_allocations_peak_mib_during_train': traced_peak / 2**20,
          'seconds_to_first_step': first, 'seconds': seconds}


def _peak_rss_mib():
  """This process's peak RSS, MiB: /proc's VmHWM. ru_maxrss is not used where there is
  /proc: on Linux a child started by fork and exec inherits its parent's peak in it."""
  try:
    with open('/proc/self/status') as status:
      return next(int(line.split()[1]) for line in status if line.startswith('VmHWM')) / 1024
  except (OSError, StopIteration):
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _run_trial(kind, model_dir, records=''):
  """Runs one trial in a fresh process; its JSON."""
  command = [sys.executable, '-m', 'bench.arrays_vs_records', f'--trial={kind}',
             f'--model_dir={model_dir}', f'--records={records}']
  command += [f'--{name}={FLAGS[name].value}' for name in (
      'images', 'size', 'steps', 'network_width', 'memory_mb', 'memory_steps')]
  environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2')
  # The folder that holds the bench package, so that -m finds it as this process did.
  result = subprocess.run(command, capture_output=True, text=True, env=environment,
                          cwd=REPO_ROOT, check=False)
  if result.returncode:
    raise RuntimeError(f'{kind} trial failed: {result.stderr.strip()[-3000:]}')
  return json.loads(result.stdout.strip().splitlines()[-1])


def _write_records(work_dir):
  """The speed images as TIFF files and their records (make_tfrecords.py
  --noisy_images's library); (records folder, seconds to write the files, to convert them)."""
  import tifffile  # pylint: disable=g-import-not-at-top
  from n2n.data import scene_writer  # pylint: disable=g-import-not-at-top
  folder = os.path.join(work_dir, 'files')
  os.makedirs(folder)
  started = time.perf_counter()
  for index, image in enumerate(noisy_images(FLAGS.images, FLAGS.size)):
    tifffile.imwrite(os.path.join(folder, f'image{index:03d}.tif'), image)
  written = time.perf_counter()
  records = os.path.join(work_dir, 'records')
  scene_writer.write_scene_dataset(folder, records, noisy_images=True, seed=1)
  return records, written - started, time.perf_counter() - written


def _summary(values):
  return {'median': statistics.median(values), 'min': min(values), 'max': max(values),
          'runs': len(values)}


def speed(work_dir, results):
  records, file_seconds, convert_seconds = _write_records(work_dir)
  results['speed'] = {'records_tool': {'seconds_to_write_files': file_seconds,
                                       'seconds_to_convert': convert_seconds}}
  trials = {'arrays': [], 'records': []}
  for repeat in range(FLAGS.repeats):
    for kind in ('arrays', 'records'):
      model_dir = os.path.join(work_dir, f'{kind}_{repeat}')
      trial = _run_trial(kind, model_dir, records)
      shutil.rmtree(model_dir, ignore_errors=True)
      trials[kind].append(trial)
      print(f'{kind:8s} repeat {repeat}: {trial["seconds_per_step"] * 1e3:.1f} ms/step, '
            f'{trial["seconds_to_first_step"]:.1f} s to the first step', flush=True)
  for kind, runs in trials.items():
    results['speed'][kind] = {
        name: _summary([run[name] for run in runs])
        for name in ('seconds_per_step', 'seconds_to_first_step')}
  step_ratios = [arrays['seconds_per_step'] / records['seconds_per_step']
                 for arrays, records in zip(trials['arrays'], trials['records'])]
  results['speed']['arrays_over_records_per_step'] = _summary(step_ratios)
  print(f'arrays over records per step: median {statistics.median(step_ratios):.3f} '
        f'({min(step_ratios):.3f}-{max(step_ratios):.3f})', flush=True)


def memory(work_dir, results):
  trial = _run_trial('memory', os.path.join(work_dir, 'memory'))
  results['memory'] = trial
  print(f'memory: a {trial["stack_mib"]:.0f} MiB stack {trial["stack_shape"]}: peak RSS '
        f'{trial["peak_rss_mib_before_train"]:.0f} MiB before n2n.train, '
        f'{trial["peak_rss_mib_after_train"]:.0f} MiB after; Python allocations peaked at '
        f'{trial["python_allocations_peak_mib_during_train"]:.0f} MiB during it; '
        f'{trial["seconds_to_first_step"]:.1f} s to the first step', flush=True)


def main(argv):
  del argv
  if FLAGS.trial:
    result = memory_trial() if FLAGS.trial == 'memory' else speed_trial(FLAGS.trial)
    print(json.dumps(result))
    return
  if FLAGS.quick:
    for name, value in (('images', 4), ('size', 128), ('steps', 20), ('network_width', 8),
                        ('repeats', 2), ('memory_mb', 32), ('memory_steps', 10)):
      if not FLAGS[name].present:  # flags given beside --quick win
        FLAGS[name].value = value
  import n2n  # pylint: disable=g-import-not-at-top
  results = {**provenance.stamp(REPO_ROOT),
             'n2n': os.path.dirname(n2n.__file__),
             'settings': {name: FLAGS[name].value for name in (
                 'images', 'size', 'steps', 'network_width', 'repeats', 'memory_mb',
                 'memory_steps')},
             'batch_size': BATCH_SIZE, 'crop_size': CROP_SIZE}
  work_dir = FLAGS.work_dir or tempfile.mkdtemp(prefix='n2n_arrays_bench_')
  os.makedirs(work_dir, exist_ok=True)
  try:
    if 'speed' in FLAGS.sections:
      speed(work_dir, results)
      json_output.write_results(FLAGS.output, results)
    if 'memory' in FLAGS.sections:
      memory(work_dir, results)
      json_output.write_results(FLAGS.output, results)
  finally:
    shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == '__main__':
  app.run(main)
