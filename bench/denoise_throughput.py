"""Denoising a 24-megapixel photograph: megapixels/s against the arithmetic
floor, peak RSS, and time to the first output file.

  python -m bench.denoise_throughput --model=runs/demo --output=denoise_bench.json
  python -m bench.denoise_throughput --tiny          # seconds: checks it runs

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
  folder   many small files (--folder_files of --folder_size squared, the
           photograph's crops with their own noise): the network alone on
           them in process, against denoise.py over the folder with its I/O
           read ahead and written behind (--prefetch=2) and one stage after
           the other (--prefetch=0), repetitions interleaved. MP/s of the
           batch loop (denoise.py's own timing, without start-up) and of the
           whole process.
  shards   the same folder split by --shard over 1, 2, ... --max_shards
           denoise.py processes started together, as a job array would on
           one host: wall time until the last finishes.
  devices  the large image through denoise.py on 1 and 2 logical CPU devices
           (--logical_cpu_devices, tf.distribute): batch-loop MP/s.
"""

import json
import os
import platform
import re
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
from bench import noisy_photograph  # pylint: disable=g-import-not-at-top
from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n import run_dir  # pylint: disable=g-import-not-at-top
from n2n.data import native_images  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from n2n.inference import tiling  # pylint: disable=g-import-not-at-top
from n2n.training import trainer as trainer_lib  # pylint: disable=g-import-not-at-top

PHOTOGRAPH = noisy_photograph.PHOTOGRAPH

flags.DEFINE_string('model', '', 'A trained run (default: an untrained U-Net saved as a run).')
flags.DEFINE_integer('width', 6000, 'Test image width.')
flags.DEFINE_integer('height', 4000, 'Test image height.')
flags.DEFINE_string('precisions', 'float32,mixed_bfloat16', 'Inference precisions to time.')
flags.DEFINE_string('tile_sizes', f'{tiling.DEFAULT_TILE_SIZE}', 'Comma list of tile sizes '
                    'timed in the network section.')
flags.DEFINE_integer('tile_overlap', tiling.DEFAULT_OVERLAP, 'Overlap for every tile size.')
flags.DEFINE_integer('repeats', 3, 'Timed repetitions per figure.')
flags.DEFINE_string('sections', 'network,process', 'Comma list of sections to run.')
flags.DEFINE_integer('folder_files', 200, 'Files in the folder and shards sections.')
flags.DEFINE_integer('folder_size', 512, 'Side of each file in the folder and shards sections.')
flags.DEFINE_integer('max_shards', 2, 'Largest shard count in the shards section.')
flags.DEFINE_string('folder_precision', 'auto', 'Precision of the folder, shards and devices '
                    'sections.')
flags.DEFINE_boolean('tiny', False, 'A seconds-long smoke run: a small image, 1 repetition.')
flags.DEFINE_string('output', '', 'Write all results as JSON here.')
FLAGS = flags.FLAGS


def write_test_image(path, width, height):
  """Writes the noisy test photograph as an 8-bit RGB PNG; returns it as
  [height, width, 3] float32 in [0, 1] (as denoise.py will read it)."""
  pixels = noisy_photograph.noisy_photograph(height, width)
  with open(path, 'wb') as output:
    output.write(native_images.encode_pages([pixels], 'png'))
  return pixels.astype(np.float32) / 255.0


def untrained_run(folder):
  """Saves a seeded, untrained RGB U-Net as a run in folder; returns folder."""
  config = config_lib.train_config(train_data='unused', model_dir=folder, seed=0,
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
    run_batch = whole_images.model_function(restore.restore_model(model_dir, precision).model)
    for tile_size in tile_sizes:
      tile_h = tiling.balanced_tile(height, tile_size, FLAGS.tile_overlap)
      tile_w = tiling.balanced_tile(width, tile_size, FLAGS.tile_overlap)
      run_batch(np.zeros([1, tile_h, tile_w, channels], np.float32))  # traces and warms up
      denoisers[(precision, tile_size)] = whole_images.tiled_denoiser(run_batch, tile_size,
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


def write_folder(folder, count, size):
  """Writes count noisy size x size crops of the photograph as 8-bit PNGs;
  returns them as a list of [size, size, 3] float32 in [0, 1]."""
  os.makedirs(folder)
  photograph = native_images.read_pages(PHOTOGRAPH)[0][:, :, :3].astype(np.float32) / 255.0
  mirrored = np.pad(photograph, [(0, max(0, size - photograph.shape[0])),
                                 (0, max(0, size - photograph.shape[1])), (0, 0)], 'reflect')
  rng = np.random.default_rng(0)
  images = []
  for index in range(count):
    top = int(rng.integers(0, mirrored.shape[0] - size + 1))
    left = int(rng.integers(0, mirrored.shape[1] - size + 1))
    clean = mirrored[top:top + size, left:left + size]
    noisy = np.round(np.clip(clean + rng.normal(0, 25 / 255, clean.shape), 0, 1) * 255)
    pixels = noisy.astype(np.uint8)
    with open(os.path.join(folder, f'{index:05d}.png'), 'wb') as output:
      output.write(native_images.encode_pages([pixels], 'png'))
    images.append(pixels.astype(np.float32) / 255.0)
  return images


def time_network_on(model_dir, images, precision):
  """Seconds per pass of the tiled denoiser over images, in process (the
  network alone: no file I/O), one per repetition."""
  run_batch = whole_images.model_function(restore.restore_model(model_dir, precision).model)
  denoise = whole_images.tiled_denoiser(run_batch)
  denoise(images[0])  # traces and warms up
  times = []
  for _ in range(FLAGS.repeats):
    started = time.perf_counter()
    for image in images:
      denoise(image)
    times.append(time.perf_counter() - started)
  return times


def loop_seconds(log):
  """The batch loop's seconds from denoise.py's summary line."""
  found = re.search(r'denoised \d+ of \d+ files.*\) in ([\d.]+) s with', log)
  if not found:
    raise RuntimeError(f'no summary line in denoise.py\'s output:\n{log[-2000:]}')
  return float(found.group(1))


def run_folder(model_dir, folder, output_dir, prefetch):
  """denoise.py over a folder: (batch-loop seconds, wall seconds)."""
  row = run_denoise_process(model_dir, folder, output_dir, FLAGS.folder_precision,
                            tiling.DEFAULT_TILE_SIZE, [f'--prefetch={prefetch}'])
  return row['loop_seconds'], row['seconds']


def time_folder(model_dir, scratch, folder, images):
  """The folder section: network-only against denoise.py at prefetch 0 and 2."""
  megapixels = sum(image.shape[0] * image.shape[1] for image in images) / 1e6
  precision = hardware.resolve_precision(FLAGS.folder_precision)
  network = time_network_on(model_dir, images, precision)
  runs = {0: [], 2: []}
  for repeat in range(FLAGS.repeats):
    for prefetch in runs:
      runs[prefetch].append(run_folder(model_dir, folder,
                                       os.path.join(scratch, f'folder_{prefetch}_{repeat}'),
                                       prefetch))
  network_rate = megapixels / floor.summarize(network)['median']
  result = {'files': len(images), 'megapixels': megapixels, 'precision': precision,
            'network_only_mp_per_s': network_rate, 'network_seconds': floor.summarize(network)}
  for prefetch, timings in runs.items():
    loop = floor.summarize([loop for loop, _ in timings])
    wall = floor.summarize([wall for _, wall in timings])
    result[f'prefetch_{prefetch}'] = {
        'loop_seconds': loop, 'wall_seconds': wall,
        'loop_mp_per_s': megapixels / loop['median'], 'wall_mp_per_s': megapixels / wall['median'],
        'loop_over_network': megapixels / loop['median'] / network_rate}
  return result


def time_shards(model_dir, scratch, folder, megapixels):
  """The shards section: wall seconds of N shard processes started together."""
  rows = []
  for count in range(1, FLAGS.max_shards + 1):
    walls = []
    for repeat in range(FLAGS.repeats):
      output_dir = os.path.join(scratch, f'shards_{count}_{repeat}')
      command = lambda index: [
          sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={model_dir}',
          f'--input={folder}', f'--output_dir={output_dir}',
          f'--precision={FLAGS.folder_precision}'] + ([f'--shard={index}/{count}']
                                                      if count > 1 else [])
      started = time.perf_counter()
      processes = [subprocess.Popen(command(index), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for index in range(count)]
      if any(process.wait() for process in processes):
        raise RuntimeError(f'a shard of {count} failed')
      walls.append(time.perf_counter() - started)
    wall = floor.summarize(walls)
    rows.append({'shards': count, 'wall_seconds': wall,
                 'wall_mp_per_s': megapixels / wall['median']})
  return rows


def time_devices(model_dir, scratch, input_path, megapixels):
  """The devices section: batch-loop MP/s of the large image on 1 and 2 logical CPU devices."""
  loops = {1: [], 2: []}
  for repeat in range(FLAGS.repeats):
    for count in loops:
      row = run_denoise_process(model_dir, input_path,
                                os.path.join(scratch, f'devices_{count}_{repeat}'),
                                FLAGS.folder_precision, int(FLAGS.tile_sizes.split(',')[0]),
                                [f'--logical_cpu_devices={count}', '--batch_tiles=1'])
      loops[count].append(row['loop_seconds'])
  return [{'logical_devices': count, 'loop_seconds': floor.summarize(seconds),
           'loop_mp_per_s': megapixels / floor.summarize(seconds)['median']}
          for count, seconds in loops.items()]


def run_denoise_process(model_dir, input_path, output_dir, precision, tile_size, extra=()):
  """denoise.py in a subprocess: {'seconds', 'seconds_to_first_output', 'peak_rss_gib',
  'loop_seconds'}."""
  expected = os.path.join(output_dir, os.path.basename(input_path))
  command = [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={model_dir}',
             f'--input={input_path}', f'--output_dir={output_dir}', f'--precision={precision}',
             f'--tile_size={tile_size}', f'--tile_overlap={FLAGS.tile_overlap}', *extra]
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
          'peak_rss_gib': peak_kib / 2**20, 'loop_seconds': loop_seconds(log)}


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
    FLAGS.folder_files, FLAGS.folder_size = 4, 64
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
    if {'folder', 'shards'} & set(sections):
      folder = os.path.join(scratch, 'folder')
      images = write_folder(folder, FLAGS.folder_files, FLAGS.folder_size)
      megapixels = sum(image.shape[0] * image.shape[1] for image in images) / 1e6
      report['folder_files'] = f'{FLAGS.folder_files} files of {FLAGS.folder_size}x' \
                               f'{FLAGS.folder_size} RGB 8-bit PNG ({megapixels:.1f} MP)'
    if 'folder' in sections:
      report['folder'] = result = time_folder(model_dir, scratch, folder, images)
      print(f"folder network alone: {result['network_only_mp_per_s']:.3f} MP/s "
            f"({result['precision']})", flush=True)
      for prefetch in (0, 2):
        row = result[f'prefetch_{prefetch}']
        print(f"folder denoise.py --prefetch={prefetch}: {row['loop_mp_per_s']:.3f} MP/s in its "
              f"batch loop ({row['loop_over_network']:.2f}x the network alone), "
              f"{row['wall_mp_per_s']:.3f} MP/s with start-up", flush=True)
    if 'shards' in sections:
      report['shards'] = time_shards(model_dir, scratch, folder, megapixels)
      for row in report['shards']:
        print(f"shards {row['shards']}: {row['wall_seconds']['median']:.1f} s, "
              f"{row['wall_mp_per_s']:.3f} MP/s", flush=True)
    if 'devices' in sections:
      report['devices'] = time_devices(model_dir, scratch, input_path,
                                       FLAGS.width * FLAGS.height / 1e6)
      for row in report['devices']:
        print(f"devices {row['logical_devices']}: {row['loop_mp_per_s']:.3f} MP/s",
              flush=True)
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      json.dump(report, output, indent=2)


if __name__ == '__main__':
  app.run(main)
