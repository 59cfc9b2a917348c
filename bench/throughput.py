"""The performance instrument: pipeline, training step, end to end, validation, memory.

  python -m bench.throughput --output=bench.json               # the full suite, ~15 min on 2 cores
  python -m bench.throughput --tiny --output=/tmp/bench.json    # seconds: checks it runs

Every figure is the median of --repeats timed repetitions after warm-up, with
min and max. Runs unchanged on CPU, GPU or TPU hosts (default strategy).
Sections (see docs/performance.md for the method and the latest table):
  pipeline     input pipeline alone, per corruption, crop 64 and 256
  step         training step fed from memory (one constant batch)
  end_to_end   training step fed by the real pipeline, and its ratio to `step`
  validation   seconds per 768x512 image, float32 vs bfloat16, and the
               arithmetic floor from the U-Net's multiply-adds and a measured
               matmul rate
  process      peak RSS of a training run at 256x256 batch 4, and seconds from
               process start to the first finished step
  options      step time at --steps_per_loop 1, 10, 100, and --jit_compile on/off
               (64x64, batch 16, fed from memory)
  methods      each --method (and N2N on two fixed captures) from memory and fed
               by its pipeline, all interleaved: time per step against
               --method=pairs, and each pipeline's ratio to its step from memory
"""

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import floor  # pylint: disable=g-import-not-at-top
from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.corruptions import noise as noise_lib  # pylint: disable=g-import-not-at-top
from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
from n2n.data import input_pipeline  # pylint: disable=g-import-not-at-top
from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.model import unet as model_lib  # pylint: disable=g-import-not-at-top
from n2n.training import train_lib  # pylint: disable=g-import-not-at-top
from n2n.training import trainer as trainer_lib  # pylint: disable=g-import-not-at-top

DEMO = os.path.join(REPO_ROOT, 'datasets', 'demo')
SECTIONS = ('pipeline', 'step', 'end_to_end', 'validation', 'process', 'options', 'methods')
# The training methods timed by the methods section: name -> TrainConfig overrides.
METHODS = (('pairs', {}), ('pairs, 2 fixed captures', {'noise_captures': 2}),
           ('neighbor2neighbor', {'method': 'neighbor2neighbor'}),
           ('blind_spot', {'method': 'blind_spot'}),
           ('blind_spot, N2V2 network', {'method': 'blind_spot', 'downsampling': 'max_blur_pool',
                                         'top_skip': False}))

flags.DEFINE_string('sections', ','.join(SECTIONS), 'Comma list of sections to run.')
flags.DEFINE_string('corruptions', ','.join(sorted(noise_lib.CORRUPTIONS)), 'Comma list.')
flags.DEFINE_string('precisions', 'float32,mixed_bfloat16', 'Training precisions to time.')
flags.DEFINE_string('end_to_end_precisions', 'mixed_bfloat16',
                    'Precisions timed end to end (the bfloat16 step is the harder case).')
flags.DEFINE_integer('repeats', 5, 'Timed repetitions per figure.')
flags.DEFINE_integer('steps', 30, 'Training steps (or pipeline batches) per repetition at '
                     '64x64 batch 16; a quarter of that at 256x256 batch 4.')
flags.DEFINE_integer('pipeline_threads', 0, 'tf.data private thread pool (0: TF default; 1 = '
                     'one core).')
flags.DEFINE_string('checkpoint', '', 'Trained run for the validation PSNR comparison '
                    '(default: runs/demo when it exists).')
flags.DEFINE_boolean('tiny', False, 'A seconds-long smoke run: small sizes, 1 repetition.')
flags.DEFINE_integer('network_width', config_lib.PAPER_NETWORK_WIDTH,
                     'The U-Net width timed (--network_width of train.py; the paper\'s by '
                     'default). The suite\'s smoke run times a narrow one: it checks that '
                     'the tool runs, not the figures.', lower_bound=1)
flags.DEFINE_string('output', '', 'Write all results as JSON here.')
FLAGS = flags.FLAGS


def settings():
  """(crop, batch) pairs timed: the demo's and the paper's."""
  return [(32, 4)] if FLAGS.tiny else [(64, 16), (256, 4)]


def build_records():
  records = tempfile.mkdtemp(prefix='n2n_bench_')
  dataset_writer.write_dataset(os.path.join(DEMO, 'train'), records,
                               min_size=32 if FLAGS.tiny else 256)
  return os.path.join(records, '*.tfrecord')


def steps_per_repetition(crop, batch):
  """--steps at 64x64 batch 16; fewer for larger batches of pixels, so that
  every repetition takes about the same time."""
  if FLAGS.tiny:
    return FLAGS.steps
  return max(1, FLAGS.steps * 64 * 64 * 16 // (crop * crop * batch))


def train_config(train_data, noise, crop, batch, precision='float32', **overrides):
  return config_lib.train_config(train_data=train_data, val_data='', model_dir='',
                                noise=noise, crop_size=crop, batch_size=batch,
                                precision=precision, train_steps=10**6,
                                network_width=FLAGS.network_width, **overrides)


def time_pipeline(train_data, noise, crop, batch):
  dataset = input_pipeline.build_train_dataset(train_config(train_data, noise, crop, batch),
                                               batch, cache=True)
  if FLAGS.pipeline_threads:
    options = tf.data.Options()
    options.threading.private_threadpool_size = FLAGS.pipeline_threads
    dataset = dataset.with_options(options)
  iterator = iter(dataset)
  for _ in range(max(3, FLAGS.steps // 4)):
    next(iterator)
  rates = []
  for _ in range(FLAGS.repeats):
    started = time.perf_counter()
    for _ in range(FLAGS.steps):
      next(iterator)
    rates.append(FLAGS.steps * batch / (time.perf_counter() - started))
  return {'images_per_second': floor.summarize(rates),
          'mpixels_per_second': statistics.median(rates) * crop * crop / 1e6}


def make_timed_loop(train_data, noise, crop, batch, precision, from_memory, steps_per_loop=None,
                    jit_compile=False, **overrides):
  """The real training loop, fed from memory or by the pipeline, traced and warm.

  overrides: further TrainConfig settings (--method, --noise_captures).

  Returns:
    fn() -> images/s of one timed repetition (steps_per_repetition steps).
  """
  steps_per_loop = steps_per_loop or steps_per_repetition(crop, batch)
  config = train_config(train_data, noise, crop, batch, precision,
                        steps_per_loop=steps_per_loop, jit_compile=jit_compile, **overrides)
  strategy = tf.distribute.get_strategy()
  trainer = trainer_lib.Trainer(config, strategy, precision,
                                hardware.filter_gradient_mode(precision, strategy))
  dataset = train_lib.build_dataset(config, batch, cache=True)
  if from_memory:
    dataset = tf.data.Dataset.from_tensors(next(iter(dataset))).repeat()
  trainer.attach_dataset(dataset)
  calls = max(1, steps_per_repetition(crop, batch) // steps_per_loop)
  trainer.train(steps_per_loop)  # trace and warm up
  trainer.train(steps_per_loop)  # the pipeline's buffers fill

  def timed_repetition():
    started = time.perf_counter()
    for _ in range(calls):
      trainer.train(steps_per_loop)
    return calls * steps_per_loop * batch / (time.perf_counter() - started)

  return timed_repetition


def time_training(*args, **kwargs):
  """Images/s of the real training loop: {'median', 'min', 'max'} of FLAGS.repeats."""
  timed_repetition = make_timed_loop(*args, **kwargs)
  return floor.summarize([timed_repetition() for _ in range(FLAGS.repeats)])


def time_alternating(loops):
  """FLAGS.repeats repetitions of each timed loop, interleaved so that drift on
  a shared machine hits all alike. Returns one list of images/s per loop."""
  rates = [[] for _ in loops]
  for _ in range(FLAGS.repeats):
    for loop_rates, loop in zip(rates, loops):
      loop_rates.append(loop())
  return rates


def ratio_summary(numerators, denominators):
  """Median, min and max of the per-repetition ratios of two interleaved series."""
  ratios = [top / bottom for top, bottom in zip(numerators, denominators)]
  return {'ratio': statistics.median(ratios), 'ratio_min': min(ratios), 'ratio_max': max(ratios)}


def time_end_to_end(train_data, noise, crop, batch, precision, from_memory_loop):
  """End to end vs from memory, repetitions alternating; the ratio is the median
  of per-pair ratios."""
  fed_loop = make_timed_loop(train_data, noise, crop, batch, precision, False)
  memory_rates, fed_rates = time_alternating([from_memory_loop, fed_loop])
  return {**floor.summarize(fed_rates), 'from_memory': floor.summarize(memory_rates),
          **ratio_summary(fed_rates, memory_rates)}


def time_validation(checkpoint):
  height, width = (64, 96) if FLAGS.tiny else (512, 768)
  image = np.random.default_rng(0).uniform(size=(height, width, 3)).astype(np.float32)
  result = {}
  for precision in ('float32', 'mixed_bfloat16'):
    denoise = whole_images.make_denoiser(
        model_lib.build_unet(3, precision, width=FLAGS.network_width))
    denoise(image)
    times = []
    for _ in range(FLAGS.repeats):
      started = time.perf_counter()
      denoise(image)
      times.append(time.perf_counter() - started)
    result[f'seconds_per_image_{precision}'] = floor.summarize(times)
  per_pixel = floor.unet_multiply_adds_per_pixel(width=FLAGS.network_width)
  rate, rates_by_size = floor.matmul_rate((128, 256) if FLAGS.tiny else (1024, 2048, 4096),
                                          FLAGS.repeats)
  floor_seconds = per_pixel * height * width / rate
  result.update({'image': f'{width}x{height}', 'multiply_adds_per_pixel': per_pixel,
                 'matmul_multiply_adds_per_second_float32': rate,
                 'matmul_rate_by_size': {str(size): value for size, value in rates_by_size.items()},
                 'floor_seconds_float32': floor_seconds,
                 'achieved_over_floor_float32':
                     result['seconds_per_image_float32']['median'] / floor_seconds})
  if checkpoint:
    from n2n.inference import restore  # pylint: disable=g-import-not-at-top
    images = eval_data.load_eval_images(os.path.join(DEMO, 'val'))
    psnr = {}
    for precision in ('float32', 'mixed_bfloat16'):
      restored = restore.restore_model(checkpoint, precision)
      run_config = restored.run_config
      scored = scoring.evaluate(whole_images.make_denoiser(restored.model), images,
                                run_config.corruption.noise,
                                run_config.corruption.eval_noise_levels[:1], run_config.run.seed)
      psnr[precision] = scored[0].mean_psnr
    result['demo_val_psnr'] = psnr
    result['psnr_bfloat16_minus_float32'] = psnr['mixed_bfloat16'] - psnr['float32']
  return result


def time_process(train_data):
  crop, batch, steps = (32, 4, 4) if FLAGS.tiny else (256, 4, 20)
  with tempfile.TemporaryDirectory() as model_dir:
    started = time.time()
    process = subprocess.Popen(
        [sys.executable, os.path.join(REPO_ROOT, 'train.py'), f'--train_data={train_data}',
         f'--model_dir={model_dir}', f'--crop_size={crop}', f'--batch_size={batch}',
         f'--train_steps={steps}', '--steps_per_loop=1', '--log_every=1', '--precision=auto',
         f'--network_width={FLAGS.network_width}'],
        stderr=subprocess.PIPE, text=True)
    first_step = None
    for line in process.stderr:
      if first_step is None and ' step 1/' in line:
        first_step = time.time() - started
    process.wait()
  import resource  # pylint: disable=g-import-not-at-top
  peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
  return {'crop': crop, 'batch': batch, 'seconds_to_first_step': first_step,
          'peak_rss_mib': peak_kib / 1024, 'exit_status': process.returncode}


def time_methods(train_data, precision):
  """Every METHODS entry from memory and fed by its pipeline, all repetitions
  interleaved; Gaussian noise (sigma 0-50), crop and batch of the demo's setting
  (64x64, batch 16).

  Returns:
    list of {'method', 'crop', 'batch', 'from_memory', 'fed', 'fed_ratio',
    'step_time_vs_pairs'} (images/s summaries; step_time_vs_pairs > 1: a step
    costs more than one of --method=pairs, from memory).
  """
  crop, batch = (64, 2) if FLAGS.tiny else settings()[0]
  # Tiny: pairs (the reference) and one single-image method, each loop a Trainer to trace.
  methods = (METHODS[0], METHODS[2]) if FLAGS.tiny else METHODS
  loops = []
  for _, overrides in methods:
    loops += [make_timed_loop(train_data, 'gaussian', crop, batch, precision, from_memory,
                              **overrides) for from_memory in (True, False)]
  rates = time_alternating(loops)
  pairs_memory = rates[0]
  rows = []
  for index, (name, _) in enumerate(methods):
    memory, fed = rates[2 * index], rates[2 * index + 1]
    row = {'method': name, 'crop': crop, 'batch': batch, 'precision': precision,
           'from_memory': floor.summarize(memory), 'fed': floor.summarize(fed),
           'fed_ratio': ratio_summary(fed, memory),
           'step_time_vs_pairs': ratio_summary(pairs_memory, memory)}
    print(f'methods    {name:24s} crop {crop:3d} batch {batch:2d}: '
          f'{row["from_memory"]["median"]:7.1f} images/s from memory, '
          f'{row["step_time_vs_pairs"]["ratio"]:.2f}x the time per step of pairs; fed by its '
          f'pipeline {row["fed_ratio"]["ratio"]:.3f} x memory '
          f'({row["fed_ratio"]["ratio_min"]:.3f}-{row["fed_ratio"]["ratio_max"]:.3f})', flush=True)
    rows.append(row)
  return rows


def main(argv):
  del argv
  sections = FLAGS.sections.split(',')
  corruptions = FLAGS.corruptions.split(',')
  precisions = FLAGS.precisions.split(',')
  if FLAGS.tiny:
    FLAGS.repeats, FLAGS.steps = 1, 2
  train_data = build_records()
  report = {'machine': {'platform': platform.platform(), 'processor': platform.processor(),
                        'cpu_count': os.cpu_count(), 'tensorflow': tf.__version__,
                        'devices': [d.name for d in tf.config.list_logical_devices()]},
            'repeats': FLAGS.repeats, 'steps': FLAGS.steps,
            'network_width': FLAGS.network_width}
  if 'pipeline' in sections:
    report['pipeline'] = []
    for noise in corruptions:
      for crop, batch in settings():
        row = {'noise': noise, 'crop': crop, 'batch': batch,
               **time_pipeline(train_data, noise, crop, batch)}
        print(f'pipeline   {noise:9s} crop {crop:3d}: '
              f'{row["images_per_second"]["median"]:8.1f} images/s '
              f'{row["mpixels_per_second"]:6.2f} Mpixel/s', flush=True)
        report['pipeline'].append(row)
  if 'step' in sections or 'end_to_end' in sections:
    report['training'], report['precision_speedup'] = [], []
    for crop, batch in settings():
      # All precisions' from-memory repetitions interleave, so their ratio is
      # measured side by side.
      memory_loops = [make_timed_loop(train_data, 'gaussian', crop, batch, precision, True)
                      for precision in precisions]
      memory_rates = dict(zip(precisions, time_alternating(memory_loops)))
      speedup = None
      if {'float32', 'mixed_bfloat16'} <= set(precisions):
        speedup = {'crop': crop, 'batch': batch,
                   **ratio_summary(memory_rates['mixed_bfloat16'], memory_rates['float32'])}
        report['precision_speedup'].append(speedup)
      for precision, memory_loop in zip(precisions, memory_loops):
        memory = floor.summarize(memory_rates[precision])
        row = {'precision': precision, 'crop': crop, 'batch': batch, 'from_memory': memory}
        print(f'step       {precision:14s} crop {crop:3d} batch {batch:2d}: '
              f'{memory["median"]:7.1f} images/s from memory', flush=True)
        if 'end_to_end' in sections and precision in FLAGS.end_to_end_precisions.split(','):
          row['end_to_end'] = {}
          for noise in corruptions:
            fed = time_end_to_end(train_data, noise, crop, batch, precision, memory_loop)
            row['end_to_end'][noise] = fed
            print(f'end_to_end {precision:14s} crop {crop:3d} {noise:9s}: '
                  f'{fed["median"]:7.1f} images/s, {fed["ratio"]:.3f} x memory '
                  f'(alternating; from memory {fed["from_memory"]["median"]:.1f}, ratio '
                  f'{fed["ratio_min"]:.3f}-{fed["ratio_max"]:.3f})', flush=True)
        report['training'].append(row)
      if speedup:
        print(f'speedup    mixed_bfloat16 / float32 crop {crop:3d}: {speedup["ratio"]:.2f}x '
              f'(alternating; {speedup["ratio_min"]:.2f}-{speedup["ratio_max"]:.2f})', flush=True)
  if 'validation' in sections:
    checkpoint = FLAGS.checkpoint or (os.path.join(REPO_ROOT, 'runs', 'demo')
                                      if tf.train.latest_checkpoint(
                                          os.path.join(REPO_ROOT, 'runs', 'demo')) else '')
    report['validation'] = time_validation(checkpoint)
    print('validation', json.dumps(report['validation']), flush=True)
  if 'process' in sections:
    report['process'] = time_process(train_data)
    print('process   ', json.dumps(report['process']), flush=True)
  if 'options' in sections:
    crop, batch = settings()[0]
    precision = precisions[-1]
    report['options'] = {'precision': precision, 'crop': crop, 'batch': batch}
    for steps_per_loop in (1, 10, 100):
      rate = time_training(train_data, 'gaussian', crop, batch, precision, True,
                           steps_per_loop=min(steps_per_loop, max(FLAGS.steps, 1) * 10))
      report['options'][f'steps_per_loop_{steps_per_loop}'] = {
          **rate, 'ms_per_step': 1000 * batch / rate['median']}
      print(f'options    steps_per_loop {steps_per_loop:3d}: {1000 * batch / rate["median"]:6.1f} '
            'ms/step', flush=True)
    for jit_compile in (False, True):
      rate = time_training(train_data, 'gaussian', crop, batch, precision, True,
                           steps_per_loop=10, jit_compile=jit_compile)
      report['options'][f'jit_compile_{jit_compile}'] = rate
      print(f'options    jit_compile={jit_compile}: {rate["median"]:7.1f} images/s', flush=True)
  if 'methods' in sections:
    report['methods'] = time_methods(train_data, precisions[-1])
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      json.dump(report, output, indent=2)


if __name__ == '__main__':
  app.run(main)
