"""The "Simulated cameras calibrated to real photographs" section of the results page.

  python -m bench.camera_calibration ... --train_steps=1200 \
      --methods=neighbor2neighbor,blind_spot,pairs,bm3d,bm3d_estimated \
      --variants=inference_orientations=1 --output=docs/bench/camera_profile_<name>_trained.json
  python -m bench.camera_calibration ... --train_steps=1200 --methods=clean_targets \
      --output=docs/bench/camera_profile_<name>_clean.json   # Noise2Clean beside them
  python -m bench.results.grid --render_only     # the section, from those JSONs

Each profile's JSON (bench/camera_calibration.py; the two commands are in its docstring)
holds one camera setting: the demo's 11 photographs through it, each method trained on the
first captures at issue 52's settings and scored on them. The page shows them beside the
figures issue 52 measured on two public real-noise benchmarks (REAL_GAINS).
"""

import json
import os

from bench import REPO_ROOT
from bench import shipping
from n2n import shipped

PROFILES = (
    ('noise_reduced', 'in-camera noise reduction (shot 0.0015, chroma 2, luma 0.45)'),
    ('plain', 'no noise reduction (shot 0.0003)'),
)
# Issue 52's outside check on real photographs at main e8de081 (its defaults then: one
# orientation), and CBM3D given the true level: gains in dB, by the section's columns.
REAL_GAINS = {
    'benchmark 1': {'input': 33.41, 'neighbor2neighbor 1': 0.92, 'blind_spot 1': 0.59,
                    'bm3d': 1.50},
    'benchmark 2': {'input': 35.88, 'neighbor2neighbor 1': 0.53, 'blind_spot 1': 0.11},
}
# (key, title): the table's columns after the input. A key is a method of the JSON's
# 'trained', with ' 1' for its one-orientation variant.
COLUMNS = (
    ('neighbor2neighbor', 'Neighbor2Neighbor, 8 orientations (default)'),
    ('neighbor2neighbor 1', 'Neighbor2Neighbor, 1 orientation'),
    ('blind_spot', 'blind-spot, 8 orientations (default)'),
    ('blind_spot 1', 'blind-spot, 1 orientation'),
    ('recorrupted', 'Recorrupted-to-Recorrupted, 8 orientations (default)'),
    ('recorrupted 1', 'Recorrupted-to-Recorrupted, 1 orientation'),
    ('pairs', 'two captures (pairs)'),
    ('bm3d', 'CBM3D, true level'),
    ('bm3d_estimated', 'CBM3D, level from diagnose'),
)
SINGLE_IMAGE_DEFAULTS = ('neighbor2neighbor', 'blind_spot', 'recorrupted')
# Methods added after the trained JSONs, each profile's runs in a JSON of its own
# (bench/camera_calibration.py --methods=NAME ... camera_profile_<profile>_NAME.json) on the
# same captures, shown in the same table.
LATER_METHODS = ('recorrupted',)
ONE_ORIENTATION = 'inference_orientations=1'
# Issue 52's goal on the calibrated sets: the best single-image default gains this much
# near 34 dB input, and comes within GOAL_GAP_DB of two captures.
GOAL_GAIN_DB = 2.0
GOAL_GAP_DB = 0.7


def json_path(name):
  return os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_profile_{name}_trained.json')


def read_results(path_of=json_path):
  """{profile name: its JSON at path_of(name)} for the profiles measured so far (path_of
  model_json_path: the shipped model's). The trained JSONs (json_path) also hold the runs of
  LATER_METHODS' JSONs on the same captures (the same input PSNR), each run with the
  'commit' that trained it."""
  found = {}
  for name, _ in PROFILES:
    if os.path.exists(path_of(name)):
      with open(path_of(name)) as source:
        found[name] = json.load(source)
      if path_of is json_path:
        _add_later_runs(name, found[name])
  return found


def later_json_path(name, method):
  return os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_profile_{name}_{method}.json')


def _add_later_runs(name, results):
  (setting,) = results['settings']
  for method in LATER_METHODS:
    path = later_json_path(name, method)
    if not os.path.exists(path):
      continue
    with open(path) as source:
      later = json.load(source)
    (later_setting,) = later['settings']
    if later_setting['input_psnr'] != setting['input_psnr']:
      continue  # other captures: not comparable
    setting['trained'] += [dict(run, commit=later['commit'], machine=later['machine'],
                                date=later['date']) for run in later_setting['trained']]


def later_sentence(found):
  """Where the LATER_METHODS' columns were trained, from their runs in found; ''
  if none."""
  trained = {}
  for name, _ in PROFILES:
    for run in (found[name]['settings'][0]['trained'] if name in found else []):
      if 'commit' in run and run['method'] in dict(COLUMNS):
        trained.setdefault(run['method'], set()).add(
            f'{run["commit"]} on {run["machine"]}, {run["date"]}')
  return ' '.join(f'{dict(COLUMNS)[method].split(",")[0]} was trained at '
                  f'{"; ".join(sorted(where))} ([json](bench/'
                  f'{os.path.basename(later_json_path(PROFILES[0][0], method))}), [json](bench/'
                  f'{os.path.basename(later_json_path(PROFILES[1][0], method))})); the other '
                  'columns at the commit the costs table names.'
                  for method, where in trained.items())


def settings_sentence(found):
  """The LATER_METHODS' runs with settings of their own (METHOD:NAME=VALUE, no column of
  their own): one clause per run, beside the method's default; '' if none."""
  clauses = []
  for name, title in PROFILES:
    columns = measured(found[name]) if name in found else {}
    for run in (found[name]['settings'][0]['trained'] if name in found else []):
      method, _, settings = run['method'].partition(':')
      if 'commit' not in run or not settings or method not in columns:
        continue
      one = run['variants'].get(ONE_ORIENTATION)
      clauses.append(f'{title}, `{settings}`: {run["gain_db"]:+.2f} dB'
                     + (f' ({one["gain_db"]:+.2f} with 1 orientation)' if one else '')
                     + f' against the default\'s {columns[method]["gain_db"]:+.2f}')
  return ('The same runs with one setting changed (8 orientations unless said): '
          + '; '.join(clauses) + '.') if clauses else ''


def measured(results):
  """{column key: its run ({'gain_db', 'seconds_per_megapixel', ...})} of one profile's
  JSON: each of its methods by name (a method run with settings of its own, e.g.
  blind_spot:blind_spot_stride=2, has no column), and its one-orientation variant."""
  (setting,) = results['settings']
  columns = {}
  for run in setting['trained']:
    columns[run['method']] = run
    one = run['variants'].get(ONE_ORIENTATION)
    if one:
      columns[f'{run["method"]} 1'] = one
  return columns


# The model n2n ships, scored as is on each profile's captures (the same seed, so the same
# cameras and noise as its trained JSON): bench/camera_calibration.py --methods=model:NAME.
SHIPPED_MODEL = shipped.CAMERA_SRGB
MODEL_METHOD = f'model:{SHIPPED_MODEL}'
# Photographs bench/camera_model.py never trained on: the demo's validation ones.
HELD_OUT_FOLDER = 'datasets/demo/val/'


def model_json_path(name):
  return os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_model_{name}.json')


# The shipped model on cameras outside those it trained on (its record's training_cameras:
# sharpening up to 0.5, JPEG 90 or 95).
OUTSIDE_TRAINING = os.path.join(REPO_ROOT, 'docs', 'bench', 'camera_model_outside_training.json')


def outside_training_sentence(path=OUTSIDE_TRAINING):
  """The section's sentence on the shipped model outside its training cameras, from the
  JSON at path; '' if there is none."""
  if not os.path.exists(path):
    return ''
  with open(path) as source:
    results = json.load(source)
  held_out = _held_out(results)
  readings = []
  for setting in results['settings']:
    (run,) = [run for run in setting['trained'] if run['method'] == MODEL_METHOD]
    tta = run['variants']['tta']['gains_db']
    readings.append(
        f'shot {setting["shot"]:g}, input {setting["input_psnr"]:.2f} dB: {run["gain_db"]:+.2f} '
        f'on all {len(run["gains_db"])} photographs, {_mean_of(run["gains_db"], held_out):+.2f} '
        f'on the {len(held_out)} never seen (8 orientations: {sum(tta) / len(tta):+.2f}, '
        f'{_mean_of(tta, held_out):+.2f})')
  (setting, *_) = results['settings']
  ranges = shipping.shipped_record(SHIPPED_MODEL)['training_cameras']
  return (f'Outside the cameras it trained on (sharpening {setting["sharpen"]:g} and JPEG '
          f'quality {setting["jpeg_quality"]}, where it trained on sharpening '
          f'{ranges["sharpen"][0]:g}-{ranges["sharpen"][1]:g} and JPEG qualities '
          f'{", ".join(str(quality) for quality in ranges["jpeg_quality"] if quality)} or none; '
          f'chroma noise reduction {setting["chroma_blur"]:g}), as is, with no method beside '
          f'it, scored at {results["commit"]} ([json](bench/{os.path.basename(path)})): '
          + '; '.join(readings) + '.')


def clean_json_path(name):
  """Noise2Clean on a profile's captures: bench/camera_calibration.py --methods=clean_targets."""
  return os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_profile_{name}_clean.json')


CLEAN_TARGETS = 'clean_targets'


def clean_targets_sentence(found, path_of=clean_json_path):
  """The section's sentence on clean targets beside two captures and the best single-image
  default, for the profiles of found (read_results()) with such a JSON on the same
  captures (the same input PSNR); '' if none."""
  readings, runs, over_pairs = [], [], []
  for name, title in PROFILES:
    if name not in found or not os.path.exists(path_of(name)):
      continue
    with open(path_of(name)) as source:
      clean = json.load(source)
    (setting,) = clean['settings']
    (trained_setting,) = found[name]['settings']
    if setting['input_psnr'] != trained_setting['input_psnr']:
      continue  # other captures: no comparison
    (run,) = [run for run in setting['trained'] if run['method'] == CLEAN_TARGETS]
    columns = measured(found[name])
    best = _best(columns)
    runs.append((clean, run, found[name]))
    over_pairs.append(run['gain_db'] - columns['pairs']['gain_db'])
    readings.append(f'{title}: {run["gain_db"]:+.2f} dB, against '
                    f'{columns["pairs"]["gain_db"]:+.2f} for two captures and '
                    f'{columns[best]["gain_db"]:+.2f} for the best single-image default '
                    f'([json](bench/{os.path.basename(path_of(name))}))')
  if not readings:
    return ''
  (clean, run, trained), *_ = runs
  return ('Clean targets (Noise2Clean) at the same budget, on the same captures: both '
          'captures of each scene trained against the camera\'s noise-free rendering '
          f'({run["steps"]} steps, crop {run["crop_size"]}, batch {run["batch_size"]}, '
          f'learning rate {run["learning_rate"]:g}; one seed), denoising the first captures, '
          'whose renderings it trained on (an optimistic bound: the other methods never see '
          f'them). Trained at {", ".join(sorted({clean["commit"] for clean, _, _ in runs}))}; '
          'the other methods at '
          f'{", ".join(sorted({trained["commit"] for _, _, trained in runs}))}, before '
          'training left AutoGraph: ' + '; '.join(readings) + '. Clean targets gain '
          f'{min(over_pairs):+.2f} to {max(over_pairs):+.2f} dB over two captures here.')


# Recorrupted-to-Recorrupted with the noise model from the truth, from the single-image
# estimate and with its plane fit undone (bench/recorrupted.py): one JSON per profile and
# noise-model set.
NOISE_MODELS = (('truth', 'the true covariance (each capture minus its rendering: an oracle '
                 'only a simulation has)'),
                ('single', 'the single-image estimate'),
                ('corrected', 'the single-image estimate with its plane fit undone'))


def noise_model_json_paths(name):
  """bench/recorrupted.py's JSONs of a profile."""
  return [os.path.join(REPO_ROOT, 'docs', 'bench', f'recorrupted_{name}{suffix}.json')
          for suffix in ('', '_corrected')]


def noise_model_sentence(paths_of=noise_model_json_paths):
  """The section's sentence on how far Recorrupted-to-Recorrupted's gain rests on its
  noise model, from bench/recorrupted.py's JSONs; '' if none."""
  readings, commits, settings = [], set(), None
  for name, title in PROFILES:
    runs = {}
    for path in paths_of(name):
      if os.path.exists(path):
        with open(path) as source:
          results = json.load(source)
        commits.add(results['commit'])
        settings = results
        runs.update({run['noise_model']: (run, os.path.basename(path))
                     for run in results['runs']})
    if runs:
      readings.append(f'{title}: ' + ', '.join(
          f'{label} {run["gain_db"]:+.2f} ({run["tta_gain_db"]:+.2f} with 8 orientations; '
          f'[json](bench/{path}))' for key, label in NOISE_MODELS if key in runs
          for run, path in [runs[key]]))
  if not readings:
    return ''
  return ('How far Recorrupted-to-Recorrupted rests on its noise model '
          f'(`bench/recorrupted.py` at {", ".join(sorted(commits))}: the same photographs, '
          f'cameras and budget, but {settings["recorruptions"]} fixed draws per photograph, '
          f'alpha {settings["alpha"]:g}, the model from all {settings["photographs"]} first '
          'captures unless said), PSNR gains in '
          'dB with the model from ' + '; '.join(readings) + '.')


# Pictures of a shadow and a highlight crop of the unseen photographs (bench/camera_crops.py).
CROPS = os.path.join(REPO_ROOT, 'docs', 'bench', 'camera_crops.json')
CROPS_PICTURE = 'results/camera_crops.png'


def crops_lines(path=CROPS):
  """The section's picture of crops and their PSNRs, from the JSON at path; [] if none."""
  if not os.path.exists(path):
    return []
  with open(path) as source:
    results = json.load(source)
  columns = results['columns'][:-1]
  rows = [f'| {crop["crop"]} | {crop["mean_luminance"]:.2f} | '
          + ' | '.join(f'{crop["psnr_db"][column]:.2f}' for column in columns) + ' |'
          for crop in results['crops']]
  return ['', f'Crops of {results["crop"]} x {results["crop"]} pixels of the 2 photographs '
          f'{SHIPPED_MODEL} never saw, through a profile-1 camera (seed {results["seed"]}): in '
          f'each, the darkest window whose mean is at least {results["shadow_floor"]:g} and the '
          f'brightest whose mean is at most {results["highlight_ceiling"]:g}, both in 0-1 sRGB '
          'values, of the noise-free rendering, denoised by what needs no training on them '
          f'(CBM3D: bm3d {results["bm3d"]})' + (
              ' and by ' + ' and '.join(f'--method={method}' for method in
                                         results['trained_methods'])
              + f', each trained {results["train_steps"]} steps on the two noisy captures '
              'alone (crop 128, batch 8, defaults otherwise)' if 'train_steps' in results
              else '')
          + f', at {results["scale"]}x; PSNR of each crop in dB. '
          'Made by `bench/camera_crops.py` at '
          f'{results["commit"]} ([json](bench/{os.path.basename(path)})).', '',
          f'![Shadow and highlight crops: {", ".join(results["columns"])}]'
          f'({CROPS_PICTURE})', '',
          '| crop | mean (0-1) | ' + ' | '.join(columns) + ' |',
          '|---' * (len(columns) + 2) + '|'] + rows


def _training_ranges(record):
  """The cameras the shipped model trained on (its record's training_cameras: what
  bench/recipes/camera.py held when it trained), in words."""
  ranges = record['training_cameras']
  spans = ', '.join(f'{name.replace("_", " ")} {ranges[name][0]:g}-{ranges[name][1]:g}'
                    for name in ('shot', 'chroma_blur', 'luma_blur', 'sharpen', 'optics_blur'))
  qualities = ', '.join(str(quality) for quality in ranges['jpeg_quality'] if quality)
  return f'{spans}, JPEG quality {qualities} or none'


def _held_out(results):
  """Indices of the photographs of a camera_calibration JSON the shipped model never saw."""
  return [index for index, path in enumerate(results['photograph_names'])
          if path.startswith(HELD_OUT_FOLDER)]


def _mean_of(gains, indices):
  return sum(gains[index] for index in indices) / len(indices)


def model_rows(found, models):
  """Markdown rows of the shipped model's table: for each profile in both, its gains on
  the photographs it never saw and on those it trained on (other captures of them),
  beside the trained single-image default and two captures on the same captures.

  Raises:
    ValueError: a model JSON whose captures are not its trained JSON's (another input).
  """
  rows = []
  for name, title in PROFILES:
    if name not in found or name not in models:
      continue
    (trained,), (model,) = found[name]['settings'], models[name]['settings']
    if abs(trained['input_psnr'] - model['input_psnr']) > 1e-9:
      raise ValueError(f'{model_json_path(name)}: input {model["input_psnr"]:.4f} dB, not its '
                       f'trained JSON\'s {trained["input_psnr"]:.4f}: other captures')
    runs = {run['method']: run for run in trained['trained'] + model['trained']}
    model_run = runs[MODEL_METHOD]
    held_out = _held_out(models[name])
    for label, indices in (('never seen', held_out),
                           ('trained on', [index for index in range(len(model_run['gains_db']))
                                           if index not in held_out])):
      cells = [model_run['gains_db'], model_run['variants']['tta']['gains_db'],
               runs['neighbor2neighbor']['gains_db'], runs['pairs']['gains_db'],
               runs['bm3d']['gains_db'], runs['bm3d_estimated']['gains_db']]
      rows.append(f'| {title} | {len(indices)} {label} | ' +
                  ' | '.join(f'{_mean_of(gains, indices):+.2f}' for gains in cells) + ' |')
  return rows


def section(found, models=None):
  """Markdown lines of the section, from read_results() and read_results(model_json_path)."""
  if not found:
    return []
  header = '| camera | input | ' + ' | '.join(title for _, title in COLUMNS) + ' |'
  rule = '|---' * (len(COLUMNS) + 2) + '|'
  gains = lambda row: ' | '.join(f'{row[key]:+.2f}' if key in row else '-'
                                 for key, _ in COLUMNS)
  out = ['## Simulated cameras calibrated to real photographs', '',
         'The camera simulator (`n2n/data/camera_pipeline.py`) calibrated to the noise of two '
         'public real-noise benchmarks (docs/diagnosis.md): the demo\'s 11 photographs, '
         'each through its own camera (a lens blur of 0.65 pixel, mosaic, raw noise, '
         'demosaicing, the profile\'s noise reduction, 8 bits), two captures each. Each '
         'single-image method trains on the first captures at issue 52\'s settings (1200 '
         'steps, crop 128, batch 8, learning rate 1e-3, the defaults otherwise, the '
         'precision `auto` picks) and denoises them; two captures train Noise2Noise on both; '
         'CBM3D (the bm3d package, an optional peer outside n2n) is given each capture\'s '
         'true level per channel as white noise\'s (a lower bound on BM3D told the noise\'s '
         'spectrum: the noise is correlated), or the level `n2n.diagnose` reads from that '
         'capture alone. PSNR gains in dB against the camera\'s noise-free rendering, mean '
         'over the photographs; one seed. The benchmark rows are issue 52\'s, measured '
         'outside on real photographs at its defaults then (one orientation). Not measured '
         'yet: CAREamics at equal wall time, pictures of the trained '
         'methods\' crops. Made by '
         '`bench/camera_calibration.py`; the section by `bench/results/camera_profiles.py`.',
         '', header, rule]
  for name, real in REAL_GAINS.items():
    out.append(f'| {name} (real) | {real["input"]:.2f} | {gains(real)} |')
  costs, goal, levels = [], [], []
  for name, title in PROFILES:
    if name not in found:
      continue
    results = found[name]
    columns = measured(results)
    (setting,) = results['settings']
    out.append(f'| {title} ([json](bench/{os.path.basename(json_path(name))})) | '
               f'{setting["input_psnr"]:.2f} | '
               f'{gains({key: run["gain_db"] for key, run in columns.items()})} |')
    costs.append(f'| {title} | {results["commit"]} on {results["machine"]}, '
                 f'{results["date"]} | ' + ' | '.join(
                     f'{columns[key]["seconds_per_megapixel"]:.1f}' if key in columns else '-'
                     for key, _ in COLUMNS) + ' |')
    goal.append(f'{title}, {_goal_reading(columns)}')
    if 'bm3d' in columns and 'bm3d_estimated' in columns:
      ratios = sorted(_mean_level(estimated) / _mean_level(true) for estimated, true in
                      zip(columns['bm3d_estimated']['sigma'], columns['bm3d']['sigma']))
      levels.append(f'{title}: median {ratios[len(ratios) // 2]:.2f} times, from '
                    f'{ratios[0]:.2f} to {ratios[-1]:.2f}')
  sentence = later_sentence(found)
  out += ['', sentence] if sentence else []
  sentence = settings_sentence(found)
  out += ['', sentence] if sentence else []
  sentence = noise_model_sentence()
  out += ['', sentence] if sentence else []
  out += ['', 'What denoising costs, in seconds per megapixel on the host named (the median '
          'over the photographs after the first, whose call also traces the network; the '
          'photographs are 0.1-0.9 megapixels; training, for the trained columns, is on top):',
          '', '| camera | measured at | ' + ' | '.join(title for _, title in COLUMNS) + ' |',
          rule] + costs
  met = all(_met(measured(found[name])) for name, _ in PROFILES if name in found)
  clean_sentence = clean_targets_sentence(found)
  out += ['', clean_sentence] if clean_sentence else []
  out += ['', f'The best single-image default: {"; ".join(goal)}. Issue 52\'s goal, '
          f'{GOAL_GAIN_DB:+g} dB and within {GOAL_GAP_DB:g} dB of two captures, is '
          + ('met.' if met else 'not met.')]
  if levels:
    out += ['', 'The level diagnose reads from one photograph against its true level (mean '
            'over the channels), photograph by photograph: ' + '; '.join(levels) + '.']
  rows = model_rows(found, models or {})
  if rows:
    model = next(iter(models.values()))
    record = shipping.shipped_record(SHIPPED_MODEL)
    out += ['', f'The model n2n ships, `{SHIPPED_MODEL}` (`denoise.py --model={SHIPPED_MODEL}`, '
            f'no training by the user; `bench/camera_model.py`: Noise2Noise, '
            f'{record["train_steps"]} steps, on two captures of each of {len(record["cameras"])} '
            'scenes, the demo\'s training photographs each through random cameras drawn from '
            f'ranges that hold both profiles: {_training_ranges(record)}), denoising the '
            'same captures as they are: the photographs it never saw (the demo\'s 2 '
            'validation photographs) and those it trained on (other cameras and noise). Beside '
            'it, on the same captures, the methods trained or run on them as above (1200 steps '
            'each, on these captures alone). PSNR gains in dB, mean over the photographs; one '
            f'seed; scored at {model["commit"]} on {model["machine"]}, {model["date"]} '
            f'([json](bench/{os.path.basename(model_json_path(PROFILES[0][0]))}), '
            f'[json](bench/{os.path.basename(model_json_path(PROFILES[1][0]))})). Two '
            'photographs are few, and these cameras lie inside the ones it trained on: the '
            'sentence after the table is the only measurement outside them, and no real '
            'photograph was measured.', '',
            f'| camera | photographs | {SHIPPED_MODEL} as is | {SHIPPED_MODEL}, 8 orientations '
            '| Neighbor2Neighbor, 8 orientations, trained on them | two captures (pairs), '
            'trained on them | CBM3D, true level | CBM3D, level from diagnose |',
            '|---' * 8 + '|'] + rows
    sentence = outside_training_sentence()
    if sentence:
      out += ['', sentence]
    out += crops_lines()
  return out + ['']


def _mean_level(sigma):
  """The mean of a level per channel ([C], 0-1)."""
  return sum(sigma) / len(sigma)


def _best(columns):
  """The single-image default that gains most, of those measured; None if none was."""
  present = [key for key in SINGLE_IMAGE_DEFAULTS if key in columns]
  return max(present, key=lambda key: columns[key]['gain_db']) if present else None


def _goal_reading(columns):
  best = _best(columns)
  if best is None:
    return 'no single-image default measured'
  reading = f'{columns[best]["gain_db"]:+.2f} dB ({dict(COLUMNS)[best]})'
  if 'pairs' not in columns:
    return reading + ', two captures not measured'
  gap = columns['pairs']['gain_db'] - columns[best]['gain_db']
  return reading + (f', {gap:.2f} dB short of two captures' if gap >= 0 else
                    f', {-gap:.2f} dB above two captures')


def _met(columns):
  best = _best(columns)
  return (best is not None and 'pairs' in columns and
          columns[best]['gain_db'] >= GOAL_GAIN_DB and
          columns['pairs']['gain_db'] - columns[best]['gain_db'] <= GOAL_GAP_DB)
