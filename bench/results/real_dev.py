"""The "Real noise: the development sets" section of the results page (issue 63 §1).

  python -m bench.real_dev ... --output=docs/bench/real_dev_<what>.json \
      --pictures=docs/results          # each run of the tool (its docstring)
  python -m bench.results.grid --render_only     # the section, from those JSONs

Every docs/bench/real_dev*.json is one run of bench/real_dev.py: its stamp (commit, host,
date), its training budget, and for each set the mean PSNR of each output it scored. The
section shows one table per set with a row per output of every run (a later file's row
replaces an earlier one's of the same name), and the pictures of the run that wrote them.
"""

import glob
import json
import os

from bench import REPO_ROOT
from n2n import shipped

PATTERN = os.path.join(REPO_ROOT, 'docs', 'bench', 'real_dev*.json')
# (name, title, pixel type, channels) of each set.
SETS = (
    ('sidd24', '24 smartphone photographs (SIDD), 8-bit sRGB, PSNR against the burst mean',
     'uint8', 3),
    ('w2s80', '80 widefield fluorescence fields (W2S), 8-bit grey, PSNR after a per-image '
              'affine fit against the mean of 400 captures', 'uint8', 1),
)


def read_results(pattern=PATTERN):
  """[(file name, its JSON)] of every run, by name."""
  runs = []
  for path in sorted(glob.glob(pattern)):
    with open(path) as results_file:
      runs.append((os.path.basename(path), json.load(results_file)))
  return runs


def _budget(run, output):
  """'1200 steps, crop 128, batch 8, 1234 s' of a trained output, else ''."""
  if 'train_seconds' not in output:
    return ''
  settings = output.get('settings', {})
  rate = settings.get('learning_rate') or 'n2n\'s'
  start = f', from {settings["init_from"]}' if settings.get('init_from') else ''
  return (f'{settings.get("method", "")}{start}: {run["train_steps"]} steps, crop '
          f'{run["crop_size"]}, batch {run["batch_size"]}, learning rate {rate}; '
          f'{output["train_seconds"]:.0f} s')


def _refused_now(output, pixel_type, channels):
  """' (refused now: ...)' where the output is a shipped model's that today's code refuses
  for the set's pixels (the row was scored before shipped models refused other data)."""
  name = output.get('model', '')
  if name not in shipped.MODELS:
    return ''
  reason = shipped.refusal(name, shipped.MODELS[name], pixel_type, channels)
  return ' (scored before shipped models refused other data; refused now)' if reason else ''


def _load(run):
  """', load 6.4 -> 5.6' (1-minute load average at the run's start and end) where recorded."""
  if 'load_average_at_start' not in run:
    return ', load not recorded'
  end = run.get('load_average_at_end', [float('nan')])[0]
  return f', load {run["load_average_at_start"][0]:.1f} -> {end:.1f}'


def rows_of(runs, set_name):
  """{output name: (run's file name, run, output's scores)}, later runs replacing earlier."""
  rows = {}
  for name, run in runs:
    for output_name, output in run.get('sets', {}).get(set_name, {}).get('outputs', {}).items():
      rows[output_name] = (name, run, output)
  return rows


def section(runs):
  """The section's markdown lines ([] without any run)."""
  if not runs:
    return []
  lines = [
      '## Real noise: the development sets', '',
      'Real captures with references, in `../shared/data/real_dev` (never in the package or '
      'its models): what n2n does on noise no simulator made. Scored by `bench/real_dev.py`; '
      '`recommended` is what a user who follows `diagnose.py` gets from the noisy images '
      'alone (diagnosed, trained, denoised); `model:NAME` a shipped model as is; `tune:NAME` '
      'the recommended method started from that model\'s weights (`--init_from`). Other real '
      'sets, held back, check the same work from outside. The seconds are wall time on the '
      'run\'s host, whose load average (1 minute, at the run\'s start and end) the run column '
      'gives where the run recorded it: above the host\'s cores, other jobs shared it, and '
      'the seconds say what the run cost there, not how fast n2n is.', '']
  for set_name, title, pixel_type, channels in SETS:
    rows = rows_of(runs, set_name)
    if not rows:
      continue
    noisy = rows.get('noisy', (None, None, {}))[2].get('mean_psnr_db')
    lines += [f'### {set_name}: {title}', '',
              '| output | PSNR (dB) | gain | training | denoising (s) | run |',
              '|---|---|---|---|---|---|']
    for output_name, (file_name, run, output) in rows.items():
      if 'refused' in output:
        lines.append(f'| `{output_name}` | refused: {output["refused"]} | | | | '
                     f'{run["commit"]} |')
        continue
      gain = '' if noisy is None else f'{output["mean_psnr_db"] - noisy:+.2f}'
      refused_now = _refused_now(output, pixel_type, channels)
      lines.append(f'| `{output_name}`{refused_now} | {output["mean_psnr_db"]:.2f} | {gain} | '
                   f'{_budget(run, output)} | {output["denoise_seconds"]:.0f} | '
                   f'{run["commit"]}, {run["machine"]}, {run["date"]}{_load(run)} '
                   f'([{file_name}](bench/{file_name})) |')
    picture = os.path.join('results', f'real_dev_{set_name}.png')
    if os.path.exists(os.path.join(REPO_ROOT, 'docs', picture)):
      lines += ['', f'![crops of {set_name}]({picture})', '',
                'Crops where the reference has the most detail, at 2x, each labelled with its '
                'whole image\'s PSNR; w2s80\'s outputs shown after their affine fit. The pictures '
                'show the outputs of the run that wrote them.']
    lines.append('')
  return lines
