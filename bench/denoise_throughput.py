"""Denoising a 24-megapixel photograph: megapixels/s against the arithmetic
floor, peak RSS, and time to the first output file.

  python bench/denoise_throughput.py --model=runs/demo --output=denoise_bench.json
  python bench/denoise_throughput.py --tiny          # seconds: checks it runs

The test image is the demo's Hubble photograph reflect-tiled to --width x
--height plus Gaussian noise of sigma 25, written as an 8-bit RGB PNG. Speed
does not depend on the weights, so without --model an untrained U-Net is
saved as a run and used.

Sections:
  network  in process, no file I/O: the tiled denoiser on the image as a
           float32 array, per precision and tile size, repetitions interleaved
           so that host drift hits every setting alike. Megapixels/s, the
           pixels the tiles make the network run (over the image's), and the
           float32 time over the floor (bench/floor.py).
  process  denoise.py as a user runs it, one subprocess per precision and
           tile size: wall time, seconds from launch to the finished output
           file, and the subprocess's peak RSS.
"""

import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order,unused-import
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from bench import floor  # pylint: disable=g-import-not-at-top
from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n import run_dir  # pylint: disable=g-import-not-at-top
from n2n.data import native_images  # pylint: disable=g-import-not-at-top
from n2n.inference import denoiser  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from n2n.inference import tiling  # pylint: disable=g-import-not-at-top
from n2n.training import trainer as trainer_lib  # pylint: disable=g-import-not-at-top

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHOTOGRAPH = os.path.join(REPO_ROOT, 'datasets', 'demo', 'train', 'hubble_deep_field.png')

flags.DEFINE_string('model', '', 'A trained run (default: an untrained U-Net saved as a run).')
flags.DEFINE_integer('width', 6000, 'Test image width.')
flags.DEFINE_integer('height', 4000, 'Test image height.')
flags.DEFINE_string('precisions', 'float32,mixed_bfloat16', 'Inference precisions to time.')
flags.DEFINE_string('tile_sizes', f'{tiling.DEFAULT_TILE_SIZE}', 'Comma list of tile sizes '
                    'timed in the network section.')
flags.DEFINE_integer('tile_overlap', tiling.DEFAULT_OVERLAP, 'Overlap for every tile size.')
flags.DEFINE_integer('repeats', 3, 'Timed repetitions per figure.')
flags.DEFINE_string('sections', 'network,process', 'Comma list of sections to run.')
flags.DEFINE_boolean('tiny', False, 'A seconds-long smoke run: a small image, 1 repetition.')
flags.DEFINE_string('output', '', 'Write all results as JSON here.')
FLAGS = flags.FLAGS


def write_test_image(path, width, height):
  """Writes the noisy test photograph as an 8-bit RGB PNG; returns it as
  [height, width, 3] float32 in [0, 1] (as denoise.py will read it)."""
  photograph = native_images.read_pages(PHOTOGRAPH)[0][:, :, :3].astype(np.float32) / 255.0
  repeats_h = -(-height // photograph.shape[0])
  repeats_w = -(-width // photograph.shape[1])
  mirrored = np.concatenate([photograph, photograph[::-1]], axis=0)
  mirrored = np.concatenate([mirrored, mirrored[:, ::-1]], axis=1)
  clean = np.tile(mirrored, (repeats_h, repeats_w, 1))[:height, :width]
  noisy = clean + np.random.default_rng(0).normal(0, 25 / 255, clean.shape)
  pixels = np.round(np.clip(noisy, 0, 1) * 255).astype(np.uint8)
  with open(path, 'wb') as output:
    output.write(native_images.encode_pages([pixels], 'png'))
  return pixels.astype(np.float32) / 255.0


def untrained_run(folder):
  """Saves a seeded, untrained RGB U-Net as a run in folder; returns folder."""
  config = config_lib.TrainConfig(train_data='unused', model_dir=folder, seed=0,
                                  precision='float32')
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32',
                                checkpoint_dir=folder)
  trainer.save(0)
  run_dir.write_config(folder, config)
  return folder


def pixels_run(height, width, tile_size, overlap):
  """Pixels the tiled denoiser feeds the network, over the image's pixels."""
  total = 1.0
  for size in (height, width):
    tile = tiling.balanced_tile(size, tile_size, overlap)
    total *= tile * len(tiling.tile_starts(max(size, tile), tile, overlap)) / size
  return total


def time_network(model_dir, image, precisions, tile_sizes):
  """Seconds per image in process, per (precision, tile size), interleaved."""
  height, width, channels = image.shape
  denoisers = {}
  for precision in precisions:
    run_batch = denoiser.model_function(restore.restore_model(model_dir, precision).model)
    for tile_size in tile_sizes:
      tile_h = tiling.balanced_tile(height, tile_size, FLAGS.tile_overlap)
      tile_w = tiling.balanced_tile(width, tile_size, FLAGS.tile_overlap)
      run_batch(np.zeros([1, tile_h, tile_w, channels], np.float32))  # traces and warms up
      denoisers[(precision, tile_size)] = denoiser.tiled_denoiser(run_batch, tile_size,
                                                                  FLAGS.tile_overlap)
  times = {key: [] for key in denoisers}
  for _ in range(FLAGS.repeats):
    for key, denoise in denoisers.items():
      started = time.perf_counter()
      denoise(image)
      times[key].append(time.perf_counter() - started)
  per_pixel = floor.unet_multiply_adds_per_pixel(channels)
  rate, _ = floor.matmul_rate((128, 256) if FLAGS.tiny else (1024, 2048, 4096), FLAGS.repeats)
  floor_seconds = per_pixel * height * width / rate
  rows = []
  for (precision, tile_size), seconds in times.items():
    stats = floor.summarize(seconds)
    rows.append({'precision': precision, 'tile_size': tile_size, 'seconds': stats,
                 'megapixels_per_second': height * width / 1e6 / stats['median'],
                 'pixels_run_over_image': pixels_run(height, width, tile_size,
                                                     FLAGS.tile_overlap),
                 'over_floor': stats['median'] / floor_seconds})
  return {'rows': rows, 'floor_seconds_float32': floor_seconds,
          'multiply_adds_per_pixel': per_pixel, 'matmul_multiply_adds_per_second': rate}


def run_denoise_process(model_dir, input_path, output_dir, precision, tile_size):
  """denoise.py in a subprocess: {'seconds', 'seconds_to_first_output', 'peak_rss_gib'}."""
  expected = os.path.join(output_dir, os.path.basename(input_path))
  command = [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={model_dir}',
             f'--input={input_path}', f'--output_dir={output_dir}', f'--precision={precision}',
             f'--tile_size={tile_size}', f'--tile_overlap={FLAGS.tile_overlap}']
  started = time.perf_counter()
  # Output to a file, not a pipe: a full pipe would stall the child.
  with tempfile.TemporaryFile() as log_file:
    process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
    first_output, peak_kib = None, 0
    while process.poll() is None:
      # The child's own high-water mark. Not getrusage/wait4: Linux carries the
      # parent's peak RSS at fork into the child's ru_maxrss, and this process
      # holds the test image and a model.
      peak_kib = max(peak_kib, _high_water_kib(process.pid))
      if first_output is None and os.path.exists(expected):
        first_output = time.perf_counter() - started
      time.sleep(0.02)
    seconds = time.perf_counter() - started
    log_file.seek(0)
    log = log_file.read().decode(errors='replace')
  if process.returncode != 0:
    raise RuntimeError(f'denoise.py failed:\n{log[-2000:]}')
  return {'precision': precision, 'tile_size': tile_size, 'seconds': seconds,
          'seconds_to_first_output': first_output if first_output is not None else seconds,
          'peak_rss_gib': peak_kib / 2**20}


def _high_water_kib(pid):
  """VmHWM of a running process in KiB (0 once it has gone)."""
  try:
    with open(f'/proc/{pid}/status') as status:
      for line in status:
        if line.startswith('VmHWM:'):
          return int(line.split()[1])
  except OSError:
    pass
  return 0


def main(argv):
  del argv
  if FLAGS.tiny:
    FLAGS.width, FLAGS.height, FLAGS.repeats, FLAGS.tile_sizes = 160, 96, 1, '64'
    FLAGS.tile_overlap = 16
  precisions = FLAGS.precisions.split(',')
  tile_sizes = [int(value) for value in FLAGS.tile_sizes.split(',')]
  sections = FLAGS.sections.split(',')
  report = {'machine': {'platform': platform.platform(), 'processor': platform.processor(),
                        'cpu_count': os.cpu_count(),
                        'cpu_bfloat16': hardware.cpu_supports_bfloat16(),
                        'tensorflow': tf.__version__},
            'image': f'{FLAGS.width}x{FLAGS.height} RGB 8-bit PNG',
            'tile_overlap': FLAGS.tile_overlap, 'repeats': FLAGS.repeats}
  with tempfile.TemporaryDirectory() as scratch:
    model_dir = FLAGS.model or untrained_run(os.path.join(scratch, 'run'))
    report['model'] = FLAGS.model or 'untrained U-Net (speed does not depend on weights)'
    os.makedirs(os.path.join(scratch, 'input'))
    input_path = os.path.join(scratch, 'input', 'noisy.png')
    image = write_test_image(input_path, FLAGS.width, FLAGS.height)
    if 'network' in sections:
      report['network'] = time_network(model_dir, image, precisions, tile_sizes)
      for row in report['network']['rows']:
        print(f"network {row['precision']:>15} tile {row['tile_size']:>4}: "
              f"{row['seconds']['median']:.1f} s ({row['seconds']['min']:.1f}-"
              f"{row['seconds']['max']:.1f}), {row['megapixels_per_second']:.3f} MP/s, "
              f"tiles run {row['pixels_run_over_image']:.2f}x the pixels, "
              f"{row['over_floor']:.2f}x the float32 floor", flush=True)
    if 'process' in sections:
      report['process'] = []
      for precision in precisions:
        for tile_size in tile_sizes:
          row = run_denoise_process(model_dir, input_path,
                                    os.path.join(scratch, f'{precision}_{tile_size}'), precision,
                                    tile_size)
          report['process'].append(row)
          print(f"denoise.py {precision:>15} tile {tile_size:>4}: {row['seconds']:.1f} s, first "
                f"output after {row['seconds_to_first_output']:.1f} s, peak RSS "
                f"{row['peak_rss_gib']:.2f} GiB", flush=True)
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      json.dump(report, output, indent=2)


if __name__ == '__main__':
  app.run(main)
