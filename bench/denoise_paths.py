"""denoise.py (the file path) against n2n.Denoiser (the array path) on one
photograph of each size, in s/MP, and the tiled denoiser's speed per tile size
(issue 64).

  python -m bench.denoise_paths --output=docs/bench/denoise_paths.json
  ONEDNN_MAX_CPU_ISA=AVX2 python -m bench.denoise_paths --precision=float32 \
      --output=docs/bench/denoise_paths_avx2_kernels.json   # oneDNN's AVX2 kernels
  python -m bench.denoise_paths --tiny       # seconds: checks it runs

Sections:
  paths  each size's noisy photograph (the demo's Hubble photograph
         reflect-tiled, Gaussian noise of sigma 25, an 8-bit RGB PNG) through
         --model as a user runs each path, one fresh process per run, the two
         paths interleaved: denoise.py with its default tiles (its own batch
         time: reading, denoising, writing) and a script that reads the same
         PNG, loads n2n.Denoiser and times its call on the array. Both times
         include the network's first call (tracing). s/MP and their ratio.
  tiles  the tiled denoiser in process on the --tile_sweep_sizes images, per
         tile size, repetitions interleaved: s/MP after a warm-up call.
Both sections run the network as the product does (weights frozen,
n2n/inference/frozen_weights.py). The processes inherit the environment:
ONEDNN_MAX_CPU_ISA=AVX2 makes oneDNN pick the kernels of an AVX2-only CPU
(the JSON records it), and TF_ENABLE_ONEDNN_OPTS=1, which the programs set
on every CPU: both paths run oneDNN's kernels here. (On an AVX2-only host a
script's plain `import n2n` runs TensorFlow's default there, Eigen's kernels,
unless it sets TF_ENABLE_ONEDNN_OPTS=1 before TensorFlow loads.)
"""

import os
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

from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import floor  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import noisy_photograph  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.data import native_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from n2n.inference import tiling  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('model', 'camera_srgb', 'The run or shipped model to time (the paths '
                    'section also takes an export).')
flags.DEFINE_string('sizes', '512,1024,2048,6000x4000', 'Comma list of image sizes for the '
                    'paths section: N (N x N) or WxH.')
flags.DEFINE_string('tile_sizes', '512,768,1024,1536', 'Tile sizes of the tiles section.')
flags.DEFINE_string('tile_sweep_sizes', '2048,6000x4000', 'Image sizes of the tiles section.')
flags.DEFINE_string('precision', 'auto', 'Precision of both paths (--precision of denoise.py).')
flags.DEFINE_integer('repeats', 3, 'Runs per path and size (fresh processes), and timed '
                     'passes per tile size.')
flags.DEFINE_string('sections', 'paths,tiles', 'Comma list of sections to run.')
flags.DEFINE_boolean('tiny', False, 'A seconds-long smoke run: small images, 1 repetition.')
flags.DEFINE_string('output', '', 'Write the results as JSON here.')
FLAGS = flags.FLAGS

# The array path as a user's script runs it: read the file, load, denoise the array.
_ARRAY_SCRIPT = '''
import sys, time
import n2n
from n2n.data import native_images
model, path, precision = sys.argv[1:]
pixels = native_images.read_pages(path)[0]
denoiser = n2n.Denoiser.load(model, precision=precision)
started = time.perf_counter()
denoiser(pixels)
print(f'array seconds {time.perf_counter() - started:.4f}')
'''


def parse_size(text):
  """'1024' -> (1024, 1024); '6000x4000' -> (4000, 6000): (height, width)."""
  width, _, height = text.partition('x')
  return int(height or width), int(width)


def _run(command):
  """(stdout and stderr of command, its wall seconds); raises on failure."""
  started = time.perf_counter()
  result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT)
  seconds = time.perf_counter() - started
  if result.returncode != 0:
    raise RuntimeError(f'{command[1]} failed:\n{result.stdout[-1000:]}{result.stderr[-2000:]}')
  return result.stdout + result.stderr, seconds


def file_path_seconds(path, output_dir):
  """denoise.py on the file in a fresh process: (its batch seconds, wall seconds)."""
  log, wall = _run([sys.executable, os.path.join(REPO_ROOT, 'denoise.py'),
                    f'--model={FLAGS.model}', f'--input={path}', f'--output_dir={output_dir}',
                    f'--precision={FLAGS.precision}', '--overwrite'])
  found = re.search(r'denoised 1 of 1 files .* in ([\d.]+) s with', log)
  if not found:
    raise RuntimeError(f'no summary line in denoise.py\'s output:\n{log[-2000:]}')
  return float(found.group(1)), wall


def array_path_seconds(path):
  """n2n.Denoiser's call on the file's pixels in a fresh process: (call seconds, wall)."""
  log, wall = _run([sys.executable, '-c', _ARRAY_SCRIPT, FLAGS.model, path, FLAGS.precision])
  return float(re.search(r'array seconds ([\d.]+)', log).group(1)), wall


def time_paths(sizes, folder):
  """One row per size: each path's seconds per run, medians in s/MP, their ratio."""
  rows = []
  for size in sizes:
    height, width = size
    path = os.path.join(folder, f'photo_{width}x{height}.png')
    pixels = noisy_photograph.noisy_photograph(height, width)
    with open(path, 'wb') as output:
      output.write(native_images.encode_pages([pixels], 'png'))
    runs = {'file': [], 'file_wall': [], 'array': [], 'array_wall': []}
    for _ in range(FLAGS.repeats):
      seconds, wall = file_path_seconds(path, os.path.join(folder, 'out'))
      runs['file'].append(seconds)
      runs['file_wall'].append(wall)
      seconds, wall = array_path_seconds(path)
      runs['array'].append(seconds)
      runs['array_wall'].append(wall)
    megapixels = height * width / 1e6
    medians = {name: float(np.median(times)) for name, times in runs.items()}
    row = {'width': width, 'height': height, 'megapixels': megapixels, 'seconds': runs,
           'file_s_per_mp': medians['file'] / megapixels,
           'array_s_per_mp': medians['array'] / megapixels,
           'file_over_array': medians['file'] / medians['array']}
    print(f'{width}x{height}: file {row["file_s_per_mp"]:.2f} s/MP, array '
          f'{row["array_s_per_mp"]:.2f} s/MP, ratio {row["file_over_array"]:.2f}', flush=True)
    rows.append(row)
  return rows


def time_tiles(sizes, tile_sizes, precision):
  """One row per (image size, tile size): s/MP of the tiled denoiser in process,
  after a warm-up pass, the tile sizes' passes interleaved."""
  run_batch = whole_images.model_function(
      restore.restore_model(_run_folder(FLAGS.model), precision, flag_name='model').model)
  rows = []
  for height, width in sizes:
    image = noisy_photograph.noisy_photograph(height, width).astype(np.float32) / 255.0
    denoisers = {tile: whole_images.tiled_denoiser(run_batch, tile) for tile in tile_sizes}
    for denoise in denoisers.values():
      denoise(image)  # traces the tile's shape and creates its kernels
    times = {tile: [] for tile in tile_sizes}
    for _ in range(FLAGS.repeats):
      for tile, denoise in denoisers.items():
        started = time.perf_counter()
        denoise(image)
        times[tile].append(time.perf_counter() - started)
    for tile, seconds in times.items():
      stats = floor.summarize(seconds)
      rows.append({'width': width, 'height': height, 'tile_size': tile, 'seconds': stats,
                   's_per_mp': stats['median'] / (height * width / 1e6),
                   'tiles': tiling.tile_count((height, width), tile)})
      print(f'{width}x{height} tile {tile}: {rows[-1]["s_per_mp"]:.2f} s/MP', flush=True)
  return rows


def _run_folder(model):
  """The run folder of a shipped model's name or a run (shipped.resolve)."""
  from n2n import shipped  # pylint: disable=g-import-not-at-top
  return shipped.resolve(model)


def main(argv):
  del argv
  if FLAGS.tiny:
    FLAGS.sizes, FLAGS.tile_sweep_sizes, FLAGS.tile_sizes = '96,160', '320', '192,256'
    FLAGS.repeats = 1
  sections = FLAGS.sections.split(',')
  precision = hardware.resolve_precision(FLAGS.precision)
  results = {**provenance.stamp(REPO_ROOT), 'model': FLAGS.model, 'precision': precision,
             'onednn_max_cpu_isa': os.environ.get('ONEDNN_MAX_CPU_ISA', ''),
             'tf_enable_onednn_opts': os.environ.get('TF_ENABLE_ONEDNN_OPTS', ''),
             'repeats': FLAGS.repeats}
  with tempfile.TemporaryDirectory() as folder:
    if 'paths' in sections:
      results['paths'] = time_paths([parse_size(size) for size in FLAGS.sizes.split(',')],
                                    folder)
      json_output.write_results(FLAGS.output, results)
    if 'tiles' in sections:
      results['tiles'] = time_tiles([parse_size(size) for size in FLAGS.tile_sweep_sizes
                                     .split(',')],
                                    [int(tile) for tile in FLAGS.tile_sizes.split(',')],
                                    precision)
      json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
