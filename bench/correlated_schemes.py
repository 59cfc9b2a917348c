"""What the schemes for spatially correlated noise gain, on simulated camera and
sCMOS captures of the demo's nine training photographs (issue 30): the basis of
the strides train.py chooses from the diagnosis (n2n/methods/) and of
docs/correlated_noise.md.

  python -m bench.correlated_schemes --output=docs/bench/correlated_schemes.json \
      --markdown=docs/bench/correlated_schemes.md

Data (made once under --work_dir): two captures of each photograph by
datasets/make_noisy_scenes.py (--pipeline=camera, and with --jpeg_quality=90;
--pipeline=microscope, row noise), their first captures alone as single noisy
images (datasets/make_tfrecords.py --noisy_images). Each run trains train.py
on them for a short budget (crop 128, batch 4, 600 steps; crop 192, batch 2
for stride 3) and denoises the same captures it trained on, the normal use of
a single-image method, scored against the simulator's clean reference. N2N
trains on both captures of each scene (--method=pairs, --noise=none). One run
per row, seed 0: a row's figure moves by a few tenths of a dB between seeds,
so differences under 0.5 dB say little.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('work_dir', '/tmp/n2n_correlated_schemes', 'Data and runs go here.')
flags.DEFINE_list('rows', [], 'Run only these rows (names as in the table); default all.')
flags.DEFINE_string('output', '', 'Write the results here as JSON.')
flags.DEFINE_string('markdown', '', 'Write the results here as a Markdown table.')
flags.DEFINE_integer('train_steps', 600, 'Steps of every run.')
flags.DEFINE_boolean('time_schemes', True, 'Also time denoising through each inference scheme.')
flags.DEFINE_string('render', '', 'Measure nothing: write --markdown (and print it) from this '
                    'JSON, which this tool wrote.')
FLAGS = flags.FLAGS

# What remakes the committed JSON and its page.
REMAKE = ('python -m bench.correlated_schemes --output=docs/bench/correlated_schemes.json '
          '--markdown=docs/bench/correlated_schemes.md')

# name -> (make_noisy_scenes.py flags, train.py flags of every run on it)
DATASETS = {
    'camera': (['--pipeline=camera'], []),
    'camera_jpeg': (['--pipeline=camera', '--jpeg_quality=90'], []),
    'scmos': (['--pipeline=microscope'], ['--normalization=percentile']),
}
N2N = ['--method=neighbor2neighbor']
BLIND_SPOT = ['--method=blind_spot', '--downsampling=max_blur_pool', '--notop_skip']
CROP_192 = ['--crop_size=192', '--batch_size=2']


def _stride(prefix, training, inference):
  return [f'--{prefix}_stride={training}', f'--{prefix}_inference_stride={inference}']


# (row name, dataset, title, train.py flags, trains on both captures)
ROWS = (
    ('camera_n2nb', 'camera', 'Neighbor2Neighbor, no scheme', N2N + _stride('neighbor2neighbor', 1, 1), False),
    ('camera_n2nb_s2', 'camera', 'Neighbor2Neighbor, pixel-shuffle 2/2', N2N + _stride('neighbor2neighbor', 2, 2), False),
    ('camera_n2nb_s3', 'camera', 'Neighbor2Neighbor, pixel-shuffle 3/3 (crop 192)', N2N + CROP_192 + _stride('neighbor2neighbor', 3, 3), False),
    ('camera_bs', 'camera', 'blind-spot (N2V2), no scheme', BLIND_SPOT + _stride('blind_spot', 1, 1), False),
    ('camera_bs_s4i2', 'camera', 'blind-spot (N2V2), pixel-shuffle 4/2 (AP-BSN)', BLIND_SPOT + _stride('blind_spot', 4, 2), False),
    ('camera_bs_s4i1', 'camera', 'blind-spot (N2V2), pixel-shuffle 4/1', BLIND_SPOT + _stride('blind_spot', 4, 1), False),
    ('camera_bs_s4i2r8', 'camera', 'blind-spot (N2V2), pixel-shuffle 4/2, 8 refinement passes', BLIND_SPOT + _stride('blind_spot', 4, 2) + ['--blind_spot_refinement_passes=8'], False),
    ('camera_n2n', 'camera', 'N2N, two captures', ['--method=pairs'], True),
    ('camera_jpeg_n2nb', 'camera_jpeg', 'Neighbor2Neighbor, no scheme', N2N + _stride('neighbor2neighbor', 1, 1), False),
    ('camera_jpeg_n2nb_s2', 'camera_jpeg', 'Neighbor2Neighbor, pixel-shuffle 2/2', N2N + _stride('neighbor2neighbor', 2, 2), False),
    ('camera_jpeg_n2n', 'camera_jpeg', 'N2N, two captures', ['--method=pairs'], True),
    ('scmos_bs', 'scmos', 'blind-spot, no scheme', ['--method=blind_spot'] + _stride('blind_spot', 1, 1) + ['--blind_spot_line=none'], False),
    ('scmos_bs_rows', 'scmos', 'blind-spot, structN2V rows, span 63', ['--method=blind_spot'] + _stride('blind_spot', 1, 1) + ['--blind_spot_line=rows', '--blind_spot_line_span=63'], False),
    ('scmos_n2n', 'scmos', 'N2N, two captures', ['--method=pairs'], True),
)
EVALUATION = re.compile(r'Evaluation at step (\d+): captures: ([\d.]+) dB \(input ([\d.]+) dB\)')
THROUGHPUT = re.compile(r'([\d.]+) images/s')
# Inference schemes timed on one image (denoise.py's path, float32): plain, AP-BSN's
# stride 2, and stride 2 with 8 refinement passes (AP-BSN's R3 default).
SCHEMES = (('plain', 1, 0), ('pixel-shuffle 2', 2, 0), ('pixel-shuffle 2 + 8 refinement passes', 2, 8))


def _python(*args, log=None):
  result = subprocess.run([sys.executable, *args], cwd=REPO_ROOT, capture_output=True, text=True)
  if log:
    with open(log, 'w') as out:
      out.write(result.stdout + result.stderr)
  if result.returncode:
    raise RuntimeError(f'{args[0]} failed: {result.stderr.strip().splitlines()[-1]}')
  return result.stdout + result.stderr


def make_data(name):
  """work_dir/name/{scenes, scene_records, single_records}, made once."""
  folder = os.path.join(FLAGS.work_dir, name)
  if os.path.exists(os.path.join(folder, 'single_records', 'manifest.json')):
    return folder
  shutil.rmtree(folder, ignore_errors=True)
  scenes = os.path.join(folder, 'scenes')
  _python('datasets/make_noisy_scenes.py', '--clean_dir=datasets/demo/train', '--captures=2',
          '--reference', f'--output_dir={scenes}', '--seed=3', *DATASETS[name][0])
  firsts = os.path.join(folder, 'first_captures')
  os.makedirs(firsts)
  for scene in sorted(os.listdir(scenes)):
    first = next(f for f in sorted(os.listdir(os.path.join(scenes, scene)))
                 if f.startswith('capture_00'))
    shutil.copyfile(os.path.join(scenes, scene, first),
                    os.path.join(firsts, scene + os.path.splitext(first)[1]))
  _python('datasets/make_tfrecords.py', '--scenes', f'--input_dir={scenes}',
          f'--output_dir={os.path.join(folder, "scene_records")}')
  _python('datasets/make_tfrecords.py', '--noisy_images', f'--input_dir={firsts}',
          f'--output_dir={os.path.join(folder, "single_records")}')
  return folder


def run_row(name, dataset, flags_, both_captures):
  """{'psnr', 'input_psnr', 'gain', 'seconds', 'chosen'} of one training run."""
  data = make_data(dataset)
  model_dir = os.path.join(FLAGS.work_dir, 'runs', name)
  shutil.rmtree(model_dir, ignore_errors=True)
  steps = FLAGS.train_steps
  start = time.perf_counter()
  log = _python('train.py', '--noise=none', '--seed=0',
                f'--train_data={os.path.join(data, "scene_records" if both_captures else "single_records")}',
                f'--val_data={os.path.join(data, "scenes")}', f'--model_dir={model_dir}',
                '--crop_size=128', '--batch_size=4', f'--train_steps={steps}',
                '--learning_rate=1e-3', '--steps_per_loop=25', f'--log_every={steps}',
                f'--checkpoint_every={steps}', f'--eval_every={steps}',
                '--eval_image_summaries=0', *DATASETS[dataset][1], *flags_,
                log=os.path.join(FLAGS.work_dir, f'{name}.log'))
  seconds = time.perf_counter() - start
  step, psnr, input_psnr = EVALUATION.findall(log)[-1]
  assert int(step) == steps, (name, step)
  crops_per_second = float(THROUGHPUT.findall(log)[-1])
  return {'psnr': float(psnr), 'input_psnr': float(input_psnr),
          'gain': round(float(psnr) - float(input_psnr), 2), 'seconds': round(seconds, 1),
          'crops_per_second': crops_per_second}


def time_schemes(size=1024, repeats=3):
  """{scheme title: median seconds per megapixel} of denoising a size x size RGB
  image through each of SCHEMES, interleaved, after one warm-up each."""
  # pylint: disable=g-import-not-at-top  (TensorFlow only for this section)
  import numpy as np
  from n2n.inference import schemes
  from n2n.inference import whole_images
  from n2n.methods import base
  from n2n.model import unet
  network = unet.build_unet(3, seed=0)
  image = np.random.default_rng(0).uniform(size=(size, size, 3)).astype(np.float32)
  denoisers = {title: whole_images.make_denoiser(schemes.with_scheme(
      network, base.InferenceScheme(stride=stride, refinement_passes=passes)))
               for title, stride, passes in SCHEMES}
  times = {title: [] for title in denoisers}
  for denoise in denoisers.values():
    denoise(image)
  for _ in range(repeats):
    for title, denoise in denoisers.items():
      start = time.perf_counter()
      denoise(image)
      times[title].append(time.perf_counter() - start)
  megapixels = size * size / 1e6
  return {title: round(float(np.median(values)) / megapixels, 3) for title, values in times.items()}


def markdown(report):
  """The report (this tool's JSON) as Markdown: what measured it, its rows and timings."""
  # Files written before the tool recorded its stamp name the host alone, and no commit.
  host, commit = report.get('machine', report.get('host')), report.get('commit')
  note = provenance.remake_note(commit, REMAKE)
  lines = [f'Measured by `python -m bench.correlated_schemes` on {host}, commit '
           f'{commit or "not recorded"}: {report["train_steps"]} steps a run, seed 0, the '
           'captures a run trained on denoised and scored against the simulator\'s clean '
           'reference (one run a row: differences under 0.5 dB say little).',
           *(['', note] if note else []),
           '', '| data | method | PSNR (dB) | input (dB) | gain (dB) | crops/s in training |',
           '|---|---|---|---|---|---|']
  results = report['rows']
  for name, dataset, title, _, _ in ROWS:
    if name in results:
      row = results[name]
      lines.append(f'| {dataset} | {title} | {row["psnr"]:.2f} | {row["input_psnr"]:.2f} | '
                   f'{row["gain"]:+.2f} | {row["crops_per_second"]:.1f} |')
  timings = report.get('seconds_per_megapixel')
  if timings:
    lines += ['', 'Denoising one 1024 x 1024 RGB image through each inference scheme, float32 '
              '(median of 3, interleaved):', '', '| scheme | seconds per megapixel |', '|---|---|']
    lines += [f'| {title} | {seconds:.3f} |' for title, seconds in timings.items()]
  return '\n'.join(lines) + '\n'


def measure_rows():
  """{row name: its run_row results with its dataset, title and flags}: the rows of ROWS
  that --rows names (all by default)."""
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  results = {}
  for name, dataset, title, flags_, both in ROWS:
    if FLAGS.rows and name not in FLAGS.rows:
      continue
    results[name] = dict(run_row(name, dataset, flags_, both), dataset=dataset, title=title,
                         flags=flags_)
    print(name, results[name], flush=True)
  return results

def main(argv):
  del argv
  from n2n import cli  # pylint: disable=g-import-not-at-top
  cli.prepare_startup()  # before TensorFlow loads: oneDNN's kernels, as the programs have them
  if FLAGS.render:
    with open(FLAGS.render) as source:
      report = json.load(source)
  else:
    report = {**provenance.stamp(REPO_ROOT), 'train_steps': FLAGS.train_steps,
              'rows': measure_rows()}
    report['seconds_per_megapixel'] = time_schemes() if FLAGS.time_schemes else {}
    if FLAGS.output:
      with open(FLAGS.output, 'w') as out:
        json.dump(report, out, indent=1)
  text = markdown(report)
  print(text)
  if FLAGS.markdown:
    with open(FLAGS.markdown, 'w') as out:
      out.write(text)


if __name__ == '__main__':
  app.run(main)
