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


def measured_lines(name):
  """Markdown lines of what the shipped model `name` scored as is on real data:
  bench/real_dev.py's runs (docs/bench/real_dev*.json, as the results page reads them)
  that scored it, by set, with the noisy input's score from the same run; [] where none
  did."""
  lines = []
  for file_name, run in results_real_dev.read_results():
    for set_name, scores in run.get('sets', {}).items():
      outputs = scores.get('outputs', {})
      noisy = outputs.get('noisy', {}).get('mean_psnr_db')
      for output in outputs.values():
        if output.get('model') != name or 'mean_psnr_db' not in output:
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
