"""Denoising volumes: voxels per second of the 3D path against the 2D path per plane, and the
peak memory of a chunked OME-Zarr denoise of a volume larger than the memory it may use.

  python -m bench.volume_throughput --model_3d=runs/results_volumes/pairs_3d \\
      --model_2d=runs/results_volumes/pairs_2d --output=docs/bench/volume_throughput.json
  python -m bench.volume_throughput --model_3d=... --sections=memory --memory_limit_mb=1024 \\
      --volume_mb=2048 --output=docs/bench/volume_memory.json
  python -m bench.volume_throughput \\
      --render=docs/bench/volume_throughput.json,docs/bench/volume_memory.json

speed: one phantom-like volume (--shape), the 3D network in denoise.py's default
tiles and the 2D network plane by plane in its default tiles, both at the
precision denoise.py picks, interleaved, --repeats times each; the median
seconds and voxels per second of each, and their ratio.

memory: writes a float32 OME-Zarr of --volume_mb (a phantom volume repeated
along y and x), then runs denoise.py on it in a child process inside a
cgroup (v1) whose memory limit is --memory_limit_mb (page cache included: the
kernel reclaims it, the process is killed if its own memory passes the
limit); reports the child's peak RSS, the cgroup's peak usage, the volume's
size and the time. Needs a writable /sys/fs/cgroup/memory (root in a
container); says so otherwise.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.data import ome_zarr  # pylint: disable=g-import-not-at-top
from n2n.data import phantom  # pylint: disable=g-import-not-at-top
from n2n.inference import loading  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('model_3d', '', 'A 3D run (model_dir).')
flags.DEFINE_string('model_2d', '', 'A 2D run trained on the same kind of data (speed only).')
flags.DEFINE_list('sections', ['speed'], 'speed, memory.')
flags.DEFINE_list('shape', ['32', '256', '256'], 'Z,Y,X of the speed volume.')
flags.DEFINE_integer('repeats', 3, 'Interleaved repetitions of each path.', lower_bound=1)
flags.DEFINE_integer('memory_limit_mb', 1024, 'The cgroup memory limit of the memory run.')
flags.DEFINE_integer('volume_mb', 2048, 'Size of the memory run\'s float32 volume, MiB.')
flags.DEFINE_string('denoise_flags', '', 'Flags added to the memory run\'s denoise.py command, '
                    'separated by spaces, e.g. "--volume_overlap=0,0,0" (recorded in the '
                    'results).')
flags.DEFINE_string('work_dir', '/tmp/n2n_volume_bench', 'Where the memory run\'s volumes go.')
flags.DEFINE_string('output', '', 'Also write the results here as JSON.')
flags.DEFINE_list('render', [], 'Print the markdown of these JSON results (speed, memory) '
                  'for docs/performance.md and stop.')
FLAGS = flags.FLAGS
CGROUP = '/sys/fs/cgroup/memory/n2n_volume_bench'
WHITE_LEVEL = 600.0


def speed():
  """Median seconds and voxels/s of the 3D path and the 2D path on one volume."""
  shape = tuple(int(size) for size in FLAGS.shape)
  _, reference = phantom.phantom_scene(phantom.PhantomSpec(shape=shape), seed=7)
  volume = (reference.astype(np.float32) / WHITE_LEVEL)[..., np.newaxis]
  precision = hardware.resolve_precision('auto')
  three = loading.from_checkpoint(FLAGS.model_3d, precision)
  two = loading.from_checkpoint(FLAGS.model_2d, precision)
  # denoise.py's defaults: 3D tiles as deep as the run's crops (overlap half of it in z,
  # 32 in y and x) and 128 x 128 across; 2D tiles of 1024.
  tile, overlap = config_lib.default_volume_tiling(three.serving.volume_depth)
  paths = {'3d': loading.volume_function(three, tile, overlap, 1)}
  image = loading.image_function(two, 1024, 64, 1)
  paths['2d_per_plane'] = lambda values: np.stack([image(plane) for plane in values])
  for path in paths.values():
    path(volume)  # traced and warm
  seconds = {name: [] for name in paths}
  for _ in range(FLAGS.repeats):
    for name, path in paths.items():
      started = time.perf_counter()
      path(volume)
      seconds[name].append(time.perf_counter() - started)
  voxels = int(np.prod(shape))
  found = {name: {'median_seconds': statistics.median(times), 'seconds': times,
                  'voxels_per_second': voxels / statistics.median(times)}
           for name, times in seconds.items()}
  found['ratio_3d_to_2d_time'] = (found['3d']['median_seconds'] /
                                  found['2d_per_plane']['median_seconds'])
  return {'shape': list(shape), 'precision': precision, 'repeats': FLAGS.repeats,
          'tile_3d': list(tile), 'overlap_3d': list(overlap), **found}


def _write_volume(path):
  """A float32 ZYX OME-Zarr of about --volume_mb: a phantom block repeated; its shape."""
  block_shape = (32, 256, 256)
  _, reference = phantom.phantom_scene(phantom.PhantomSpec(shape=block_shape), seed=8)
  block = reference.astype(np.float32) / WHITE_LEVEL
  side = int(np.sqrt(FLAGS.volume_mb * 2**20 / 4 / block_shape[0]) // 256) * 256
  shape = (block_shape[0], side, side)
  output = ome_zarr.create_image(path, shape, (16, 256, 256), 'float32', 'ZYX',
                                 (0.4, 0.1, 0.1), {'Z': 'micrometer'})
  for top in range(0, side, 256):
    for left in range(0, side, 256):
      output[:, top:top + 256, left:left + 256] = block
  return shape


def memory():
  """Peak memory of denoise.py on an OME-Zarr larger than its cgroup's memory limit."""
  try:
    os.makedirs(CGROUP, exist_ok=True)
    with open(os.path.join(CGROUP, 'memory.limit_in_bytes'), 'w') as limit:
      limit.write(str(FLAGS.memory_limit_mb * 2**20))
  except OSError as error:
    raise SystemExit(f'memory: cannot set a cgroup memory limit here ({error})')
  os.makedirs(os.path.join(FLAGS.work_dir, 'input'), exist_ok=True)
  # Beside the output, not above it: denoise.py refuses outputs inside an input's folder.
  source = os.path.join(FLAGS.work_dir, 'input', 'volume.zarr')
  output_dir = os.path.join(FLAGS.work_dir, 'out')
  subprocess.run(['rm', '-rf', source, output_dir], check=True)
  shape = _write_volume(source)
  with open(os.path.join(CGROUP, 'memory.max_usage_in_bytes'), 'w') as reset:
    reset.write('0')
  command = [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={FLAGS.model_3d}',
             f'--input={source}', f'--output_dir={output_dir}'] + FLAGS.denoise_flags.split()
  started = time.perf_counter()
  child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           preexec_fn=lambda: open(os.path.join(CGROUP, 'cgroup.procs'), 'w')
                           .write(str(os.getpid())))
  log, _ = child.communicate()
  seconds = time.perf_counter() - started
  with open(os.path.join(CGROUP, 'memory.max_usage_in_bytes')) as usage:
    cgroup_peak = int(usage.read())
  child_peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
  volume_bytes = int(np.prod(shape)) * 4
  return {'shape': list(shape), 'volume_mb': volume_bytes / 2**20,
          'denoise_flags': FLAGS.denoise_flags.split(),
          'memory_limit_mb': FLAGS.memory_limit_mb, 'exit_status': child.returncode,
          'child_peak_rss_mb': child_peak_kb / 1024, 'cgroup_peak_mb': cgroup_peak / 2**20,
          'volume_over_limit': volume_bytes / (FLAGS.memory_limit_mb * 2**20),
          'seconds': seconds, 'voxels_per_second': int(np.prod(shape)) / seconds,
          'log_tail': log.strip().splitlines()[-3:]}


def remake_command(results, path):
  """The command that measures results' sections again, with their settings, into path
  (the models: the results page's pairs runs, which the measurements used)."""
  command = ['python -m bench.volume_throughput', '--model_3d=runs/results_volumes/pairs_3d']
  if 'speed' in results:
    speed_result = results['speed']
    command += ['--model_2d=runs/results_volumes/pairs_2d',
                f'--shape={",".join(map(str, speed_result["shape"]))}',
                f'--repeats={speed_result["repeats"]}']
  if 'memory' in results:
    memory_result = results['memory']
    command += [f'--memory_limit_mb={memory_result["memory_limit_mb"]}',
                f'--volume_mb={round(memory_result["volume_mb"])}']
    if memory_result.get('denoise_flags'):
      command.append(f'--denoise_flags="{" ".join(memory_result["denoise_flags"])}"')
  sections = [section for section in ('speed', 'memory') if section in results]
  return ' '.join(command + [f'--sections={",".join(sections)}', f'--output={path}'])


def render(results, path):
  """Markdown lines of one result file at path (its speed and memory sections)."""
  lines = []
  if 'speed' in results:
    speed_result = results['speed']
    three, two = speed_result['3d'], speed_result['2d_per_plane']
    lines += [
        f'One {" x ".join(map(str, speed_result["shape"]))} phantom volume, '
        f'{speed_result["precision"]}, median of {speed_result["repeats"]} interleaved runs '
        'of each path:', '',
        '| path | tiles | median s | voxels/s |', '|---|---|---|---|',
        f'| 3D network | {" x ".join(map(str, speed_result["tile_3d"]))}, overlap '
        f'{", ".join(map(str, speed_result["overlap_3d"]))} | {three["median_seconds"]:.2f} | '
        f'{three["voxels_per_second"] / 1e6:.2f} M |',
        f'| 2D network, plane by plane | 1024, overlap 64 | {two["median_seconds"]:.2f} | '
        f'{two["voxels_per_second"] / 1e6:.2f} M |', '',
        f'The 3D path took {speed_result["ratio_3d_to_2d_time"]:.2f}x the time of the 2D path '
        'per plane.', '']
  if 'memory' in results:
    memory_result = results['memory']
    lines += [
        f'A float32 OME-Zarr of {" x ".join(map(str, memory_result["shape"]))} voxels '
        f'({memory_result["volume_mb"]:.0f} MiB) denoised by `denoise.py'
        f'{"".join(" " + flag for flag in memory_result.get("denoise_flags", []))}` inside a cgroup '
        f'limited to {memory_result["memory_limit_mb"]} MiB '
        f'(the volume is {memory_result["volume_over_limit"]:.2f}x the limit): exit status '
        f'{memory_result["exit_status"]}, peak resident memory of the process '
        f'{memory_result["child_peak_rss_mb"]:.0f} MiB, peak of the cgroup (page cache '
        f'included) {memory_result["cgroup_peak_mb"]:.0f} MiB, '
        f'{memory_result["seconds"]:.0f} s '
        f'({memory_result["voxels_per_second"] / 1e6:.2f} M voxels/s).', '']
  lines.append(f'{results["machine"]}, commit {results["commit"]}.')
  note = provenance.remake_note(results['commit'], remake_command(results, path))
  return lines + ([note] if note else [])


def main(argv):
  del argv
  if FLAGS.render:
    for path in FLAGS.render:
      with open(path) as source:
        print('\n'.join(render(json.load(source), path)) + '\n')
    return
  results = provenance.stamp(REPO_ROOT)
  if 'speed' in FLAGS.sections:
    results['speed'] = speed()
  if 'memory' in FLAGS.sections:
    results['memory'] = memory()
  text = json.dumps(results, indent=1)
  print(text)
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      output.write(text + '\n')


if __name__ == '__main__':
  app.run(main)
