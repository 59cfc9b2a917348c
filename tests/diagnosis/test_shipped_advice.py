"""The real-data figures diagnose's advice rests on (n2n/diagnosis/shipped_advice.py) are
the ones bench/real_dev.py wrote (docs/bench/real_dev*.json), not typed in apart."""

import glob
import json
import os

import pytest

from bench import shipping
from n2n import shipped
from n2n.config import run as run_lib
from n2n.diagnosis import shipped_advice
from tests.conftest import REPO_ROOT


def _outputs(set_name):
  """{output: scores} of every real_dev run on set_name, a later file's replacing."""
  outputs = {}
  for path in sorted(glob.glob(os.path.join(REPO_ROOT, 'docs', 'bench', 'real_dev*.json'))):
    with open(path) as run_file:
      run = json.load(run_file)
    outputs.update(run.get('sets', {}).get(set_name, {}).get('outputs', {}))
  return outputs


def _scratch(outputs, method):
  """The mean PSNR of `method` trained from scratch: the `scratch` output, or a
  `recommended` one that trained that method without --init_from."""
  for name in ('scratch', 'recommended'):
    settings = outputs.get(name, {}).get('settings', {})
    if settings.get('method') == method and not settings.get('init_from'):
      return outputs[name]['mean_psnr_db']
  raise AssertionError(f'no {method} from scratch in the JSON')


@pytest.mark.parametrize('measured', [
    value for value in vars(shipped_advice).values()
    if isinstance(value, shipped_advice.Measured)])
def test_each_measured_figure_is_the_json_s(measured):
  outputs = _outputs(measured.real_set)
  as_is = f'model:{measured.model}' + (':tta' if '--tta' in measured.as_is_flags else '')
  assert measured.as_is_db == outputs[as_is]['mean_psnr_db']
  # Of the weights shipped under that name now (runs from before outputs named them aside).
  assert outputs[as_is].get('trained_at', shipping.trained_at(measured.model)) == (
      shipping.trained_at(measured.model))
  assert measured.scratch_db == _scratch(outputs, measured.method)
  tuned = outputs.get(f'tune:{measured.model}')
  assert measured.tuned_db == (tuned['mean_psnr_db'] if tuned else None)
  if tuned:
    assert tuned['settings']['train_steps'] == measured.train_steps
    # The advice passes no rate: --init_from's default must be the one the figure used
    # (the rate it trained at, recorded since cdf6855; before, the rate it was given).
    used = tuned.get('peak_learning_rate') or tuned['settings']['learning_rate']
    assert float(used) == run_lib.FINE_TUNING_LEARNING_RATE
    for flag in measured.tune_flags:
      name, value = flag.lstrip('-').split('=')
      assert str(tuned['settings'][name]) == value or (
          float(tuned['settings'][name]) == float(value)), flag


def test_init_from_s_default_learning_rate_is_the_best_of_the_committed_sweep():
  # Fine-tuning the fluorescence model on w2s80 at each rate (the sweep's JSONs and the
  # tuned figure's own): the default is the rate that scored best, not one typed in apart.
  by_rate = {}
  paths = glob.glob(os.path.join(REPO_ROOT, 'docs', 'bench', 'fine_tuning_rate_w2s80_lr*.json'))
  for path in paths + [os.path.join(REPO_ROOT, 'docs', 'bench', 'real_dev_w2s80_tune.json')]:
    with open(path) as run_file:
      tuned = json.load(run_file)['sets']['w2s80']['outputs']['tune:fluorescence']
    used = tuned.get('peak_learning_rate') or tuned['settings']['learning_rate']
    by_rate[float(used)] = tuned['mean_psnr_db']
  assert len(by_rate) >= 4, by_rate
  assert max(by_rate, key=by_rate.get) == run_lib.FINE_TUNING_LEARNING_RATE, by_rate


def test_the_high_iso_threshold_parts_the_real_photographs_where_each_camera_model_won():
  # bench/camera_level_rule.py's readings of sidd24 (diagnose's level of each photograph
  # alone, both models' PSNR on it, as is): every one the high-ISO model won lies at or
  # above the threshold, every one it lost below.
  with open(os.path.join(REPO_ROOT, 'docs', 'bench', 'camera_level_rule.json')) as rule_file:
    images = [image for image in json.load(rule_file)['images']
              if not isinstance(image['level'], str)]  # diagnose read it
  assert len(images) >= 10
  for image in images:
    won = (image['psnr_db'][shipped.CAMERA_SRGB_HIGH_ISO] > image['psnr_db'][shipped.CAMERA_SRGB])
    assert won == (image['level'] >= shipped_advice.HIGH_ISO_LEVEL), image
