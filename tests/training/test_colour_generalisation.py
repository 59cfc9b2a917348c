"""Models keep colours their training photographs lack (issue 20).

The nine demo photographs are grey, orange, brown and sky blue. A scene model
trained without channel permutations learnt those colours as part of "clean"
and turned saturated greens olive (on today's colour check: worst channel
error 0.21, mean PSNR 5 dB below the noisy input). Both training paths, scenes
of real captures and clean images with synthetic noise, train at a small
budget with their default augmentations and are scored on
datasets/colour_check/ (bench/colour_check.py, which docs/results.md runs at
the full budget against the bar of 0.03 on every image).
"""

import os

import pytest

from bench import colour_check
from n2n import config as config_lib
from n2n.data import dataset_writer
from n2n.data import scene_writer
from n2n.data import simulated_scenes
from n2n.inference import restore
from n2n.training import distribute
from n2n.training import train_lib
from tests.conftest import REPO_ROOT

DEMO_TRAIN = os.path.join(REPO_ROOT, 'datasets', 'demo', 'train')
# A fifth of the demo budget in pixels (600 steps of 8 crops of 32x32): enough to
# learn (or not) colours, about 25 s per run on 2 cores.
BUDGET = dict(crop_size=32, batch_size=8, train_steps=600, learning_rate=1e-3,
              steps_per_loop=25, log_every=100, checkpoint_every=600, eval_every=0,
              keep_best=False, precision='auto', seed=0)
# What each run must show on the ten colour-check photographs. At this budget the
# scene model keeps 6 of 10 within the full bar (3 seeds), the clean-image model
# 7; without permutations none, with worst channel errors of 0.07-0.21.
WORST_CHANNEL_ERROR = 0.08
MEETING_THE_BAR = 5
MEAN_GAIN_DB = 1.0

pytestmark = pytest.mark.slow


@pytest.fixture(scope='module')
def scene_records(tmp_path_factory):
  """The demo scenes: four simulated 16-bit captures of each demo photograph."""
  root = tmp_path_factory.mktemp('demo_scenes')
  simulated_scenes.write_scenes(DEMO_TRAIN, str(root / 'raw'), captures=4)
  scene_writer.write_scene_dataset(str(root / 'raw'), str(root / 'records'))
  return root / 'records'


def _train(model_dir, **settings):
  config = config_lib.TrainConfig(model_dir=str(model_dir), **BUDGET, **settings)
  train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  return colour_check.verdicts(colour_check.score_model(restore.restore_model(str(model_dir))))


def _assert_colours_kept(checked):
  report = colour_check.format_verdicts(checked)
  worst = max(max(map(abs, verdict.score.colour_error)) for verdict in checked)
  assert worst < WORST_CHANNEL_ERROR, report
  assert sum(verdict.passed for verdict in checked) >= MEETING_THE_BAR, report
  gains = [verdict.score.psnr - verdict.score.input_psnr for verdict in checked]
  assert sum(gains) / len(gains) > MEAN_GAIN_DB, report


def test_a_scene_model_keeps_colours_unlike_its_training_scenes(scene_records, tmp_path):
  checked = _train(tmp_path / 'scenes', train_data=str(scene_records), noise='none')
  assert len(checked) == 10
  _assert_colours_kept(checked)


def test_a_clean_image_model_keeps_colours_unlike_its_training_photographs(tmp_path):
  dataset_writer.write_dataset(DEMO_TRAIN, str(tmp_path / 'records'))
  checked = _train(tmp_path / 'clean', train_data=str(tmp_path / 'records'), noise='gaussian',
                   noise_range=(0.0, 50.0), eval_noise_levels=(25.0,))
  _assert_colours_kept(checked)
