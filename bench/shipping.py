"""Copying a trained run into the package as a shipped model (n2n/shipped.py), for the
scripts that train them (camera_model.py, ...).

What is shipped: config.json with the training machine's paths taken out
(portable_config), the run's record (the script's JSON: commit, host, precision,
steps, time), a README, and the newest checkpoint's network weights without the
optimizer's state.
"""

import json
import os
import shutil
import sys
import time

from bench import REPO_ROOT
from bench import provenance
from bench.results import real_dev as results_real_dev

from n2n import shipped

# config.json's settings that name places on the machine that trained: (section, key).
MACHINE_PATHS = (('data', 'train_data'), ('data', 'val_data'), ('data', 'train_images_dir'),
                 ('run', 'model_dir'), ('run', 'init_from'))


def portable_config(saved, name):
  """saved (a run's config.json as a dict) for the shipped model `name`: model_dir is
  shipped.run_name(name) (how n2n knows a shipped model, and its exports), the training
  data's places and --init_from are emptied (the record and README say what the model
  trained on); everything else as trained."""
  portable = json.loads(json.dumps(saved))
  for section, key in MACHINE_PATHS:
    if key in portable.get(section, {}):
      portable[section][key] = shipped.run_name(name) if key == 'model_dir' else ''
  return portable


def train_in_parts(repo_root, model_dir, record_name, train, precision, settings):
  """Trains a shipped model's run from scratch, or resumes it, recording each part.

  The record, model_dir/record_name (JSON), holds the run's settings (the training data's
  and schedule's, as the caller gives them, at its top level) and one entry in 'parts' per call: the stamp
  (commit, host, date), 'from_step', 'to_step', 'seconds', 'precision' (as asked) and
  'resolved_precision' (what this host ran it at). A part stopped by SIGTERM/SIGINT is
  recorded to the step its checkpoint holds before the stop is passed on, so a run longer
  than one sitting resumes with every part on record; a call that trains no step adds no
  part.

  Args:
    repo_root: the checkout whose commit is stamped; it must be clean.
    model_dir: the run's folder (train resumes it where it has a checkpoint).
    record_name: the record's file name in model_dir.
    train: callable() that trains into model_dir and returns the n2n run (its .step).
    precision: the --precision the part trains at.
    settings: JSON-able dict of what the run trains on and for how long; a resumed run
      must give the same.

  Returns:
    The record (dict), also written to model_dir/record_name.

  Raises:
    ValueError: the checkout has uncommitted changes; model_dir holds a checkpoint no part
      records (a part that died unrecorded: its commit and time are unknown); its parts
      were trained at another commit or with other settings.
  """
  from n2n import hardware  # pylint: disable=g-import-not-at-top
  from n2n.training import preemption  # pylint: disable=g-import-not-at-top
  stamp = provenance.stamp(repo_root)
  if stamp['commit'].endswith(provenance.DIRTY_SUFFIX):
    raise ValueError(f'{stamp["commit"]}: a shipped model trains at a clean commit')
  record = read_record(model_dir, record_name)
  from_step = _checkpoint_step(model_dir)
  recorded_step = record['parts'][-1]['to_step'] if record['parts'] else 0
  if from_step != recorded_step:
    raise ValueError(f'{model_dir}: its checkpoint is at step {from_step}, its record '
                     f'{record_name} at {recorded_step}: a part went unrecorded; train anew '
                     'in an empty folder')
  if record['parts'] and record['parts'][0]['commit'] != stamp['commit']:
    raise ValueError(f'{model_dir} was trained at {record["parts"][0]["commit"]}; resume it '
                     f'at that commit, not {stamp["commit"]}')
  settings = json.loads(json.dumps(settings))  # as it reads back from the record
  recorded = {name: record.get(name) for name in settings}
  if record['parts'] and recorded != settings:
    raise ValueError(f'{model_dir} was trained with other settings; resume it with {recorded}')
  record.update(settings)
  part = {**stamp, 'from_step': from_step, 'precision': precision,
          'resolved_precision': hardware.resolve_precision(precision)}
  start = time.time()
  try:
    train()
  except preemption.TrainingInterrupted:
    _add_part(model_dir, record_name, record, part, start)
    raise
  _add_part(model_dir, record_name, record, part, start)
  return record


def _checkpoint_step(model_dir):
  """The step of model_dir's newest checkpoint, 0 where there is none."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  prefix = tf.train.latest_checkpoint(model_dir) if os.path.isdir(model_dir) else None
  return restore.checkpoint_step(prefix) if prefix else 0


def _add_part(model_dir, record_name, record, part, start):
  """Appends part, to the step model_dir's checkpoint now holds, and writes the record;
  nothing where no step was trained."""
  to_step = _checkpoint_step(model_dir)
  if to_step == part['from_step']:
    return
  record['parts'].append({**part, 'to_step': to_step, 'seconds': round(time.time() - start)})
  write_record(model_dir, record_name, record)


def train_from_main(train, model_dir):
  """Runs train(model_dir) for a training script's main: its refusals (ValueError) exit
  with their one line, and a stop by SIGTERM/SIGINT (its part recorded) exits with 128 +
  the signal's number, as train.py does, after one line naming the checkpoint."""
  from n2n.training import preemption  # pylint: disable=g-import-not-at-top
  try:
    train(model_dir)
  except ValueError as error:
    sys.exit(f'error: {error}')
  except preemption.TrainingInterrupted as interrupted:
    print(f'{interrupted}; resume with the same command at the same commit', file=sys.stderr)
    sys.exit(128 + interrupted.signal_number)


def parts_text(record):
  """'to step S at COMMIT on MACHINE (DATE, T s, precision P, resolved to R); ...' of
  record['parts'] (train_in_parts), for a shipped model's README."""
  return '; '.join(f'to step {part["to_step"]} at {part["commit"]} on {part["machine"]} '
                   f'({part["date"]}, {part["seconds"]} s, precision {part["precision"]}'
                   f'{_resolved(part)})' for part in record['parts'])


def _resolved(part):
  """', resolved to R' where --precision=auto: R as recorded, or for parts recorded before
  resolved_precision was (the CPU-only hosts they ran on) mixed_bfloat16 where the stamp's
  machine has AVX512-BF16, else float32."""
  if part['precision'] != 'auto':
    return ''
  resolved = part.get('resolved_precision') or (
      'float32' if 'no AVX512-BF16' in part['machine'] else 'mixed_bfloat16')
  return f', resolved to {resolved}'


def read_record(model_dir, record_name):
  """model_dir/record_name as a dict; {'parts': []} where it does not exist yet."""
  path = os.path.join(model_dir, record_name)
  if not os.path.exists(path):
    return {'parts': []}
  with open(path) as record_file:
    return json.load(record_file)


def write_record(model_dir, record_name, record):
  with open(os.path.join(model_dir, record_name), 'w') as record_file:
    json.dump(record, record_file, indent=1)


def trained_at(name):
  """The commit the shipped model `name` was trained at (its record's first part's; a
  record from before parts names it at its top level)."""
  return record_trained_at(shipped_record(name))


def shipped_record(name):
  """The training record of the shipped model `name`, as a dict."""
  return read_record(shipped.folder(name), shipped.MODELS[name].record)


def record_trained_at(record):
  """The commit a training record (train_in_parts's, or one from before parts) names."""
  return record['parts'][0]['commit'] if record.get('parts') else record['commit']


def measured_lines(name, weights=None):
  """Markdown lines of what the shipped model `name` scored as is on real data:
  bench/real_dev.py's runs (docs/bench/real_dev*.json, as the results page reads them)
  that scored these weights (their output's trained_at is the model's; a run from before
  outputs named it, where the model's training commit precedes the run's: a model
  retrained under the same name is not credited with its predecessor's scores), by set,
  with the noisy input's score from the same run; [] where none did. weights: the commit
  the weights were trained at (default: the shipped model's, trained_at(name)), for a
  model about to be shipped."""
  lines = []
  weights = weights or trained_at(name)
  for file_name, run in results_real_dev.read_results():
    for set_name, scores in run.get('sets', {}).items():
      outputs = scores.get('outputs', {})
      noisy = outputs.get('noisy', {}).get('mean_psnr_db')
      for output in outputs.values():
        if output.get('model') != name or 'mean_psnr_db' not in output:
          continue
        if output.get('trained_at', weights) != weights or (
            'trained_at' not in output
            and not provenance.is_ancestor(REPO_ROOT, weights, run['commit'])):
          continue
        lines.append(f'- real_dev {set_name} ({scores["images"]} images): '
                     f'{output["mean_psnr_db"]:.2f} dB{" with --tta" if output["tta"] else ""}'
                     f'{"" if noisy is None else f", noisy {noisy:.2f}"} (bench/real_dev.py at '
                     f'{run["commit"]}, docs/bench/{file_name})')
  return lines


def ship(model_dir, name, record_name, readme_text):
  """Writes run model_dir's portable config.json, its record (record_name, a file in
  model_dir), readme_text as README.md and its newest checkpoint's network weights into
  the package as the shipped model `name`, replacing what was there only once all is
  written."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  restored = restore.restore_model(model_dir, 'float32')
  target = shipped.folder(name)
  staging = target + '.partial'
  shutil.rmtree(staging, ignore_errors=True)
  os.makedirs(staging)
  with open(os.path.join(model_dir, 'config.json')) as config_file:
    config = portable_config(json.load(config_file), name)
  with open(os.path.join(staging, 'config.json'), 'w') as config_file:
    json.dump(config, config_file, indent=2, sort_keys=True)  # as train.py writes it
  shutil.copy(os.path.join(model_dir, record_name), staging)
  with open(os.path.join(staging, 'README.md'), 'w') as readme:
    readme.write(readme_text)
  # The keys restore.load_weights and restore.checkpoint_step read.
  weights = tf.train.Checkpoint(model=restored.network,
                                step=tf.Variable(restored.step, dtype=tf.int64))
  tf.train.CheckpointManager(weights, staging, max_to_keep=1).save(
      checkpoint_number=restored.step)
  shutil.rmtree(target, ignore_errors=True)
  os.rename(staging, target)
