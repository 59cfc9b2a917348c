"""Models keep colours their training photographs lack (issue 20).

The nine demo photographs are grey, orange, brown and sky blue. A scene model
trained without channel permutations learnt those colours as part of "clean"
and turned saturated greens olive (on today's colour check: worst channel
error 0.21, mean PSNR 5 dB below the noisy input). Both training paths, scenes
of real captures and clean images with synthetic noise, train at a small
budget (bench/colour_check.SMALL_BUDGET_FLAGS) with their default
augmentations, each in a train.py process of its own, and are scored on
datasets/colour_check/ (bench/colour_check.py, which docs/results.md runs at
the full budget against the bar of 0.03 on every image).
"""

import subprocess

import pytest

from bench import colour_check
from bench import colour_test_spread
from n2n.inference import restore

# Bounds each run must meet on the ten colour-check photographs, set from the
# spread bench/colour_test_spread.py measured over seeds 0-3 in float32 and
# mixed bfloat16, each run in a fresh process as here, on a 2-core AMD host with
# AVX512-BF16 (docs/bench/bench_cpu_2core_colour_test_spread.json): scene models
# reached worst channel errors of 0.045-0.058, 6-8 images meeting the bar, mean
# gains of 2.2-2.9 dB; clean-image models 0.032-0.062, 7-9, 6.0-6.5 dB. Without
# channel permutations no image met the bar at this budget (worst errors
# 0.07-0.21, measured when the test was written): the count of images tells
# them apart.
BOUNDS = {'scenes': {'worst_channel_error': 0.075, 'meeting_the_bar': 5, 'mean_gain_db': 1.5},
          'clean': {'worst_channel_error': 0.075, 'meeting_the_bar': 6, 'mean_gain_db': 5.0}}

pytestmark = [pytest.mark.slow, pytest.mark.quality]


@pytest.fixture(scope='module')
def records(tmp_path_factory):
  """The demo photographs as scenes of four simulated 16-bit captures and as clean images."""
  return colour_test_spread.write_records(str(tmp_path_factory.mktemp('colour_records')))


@pytest.mark.parametrize('kind', ['scenes', 'clean'])
def test_a_model_keeps_colours_unlike_its_training_photographs(kind, records, tmp_path):
  # A fresh process, as a user runs train.py: nothing an earlier test left in
  # this process (graphs, Keras state, thread pools) can change the outcome.
  model_dir = str(tmp_path / kind)
  result = subprocess.run(
      colour_test_spread.train_command(kind, records[kind], model_dir, seed=0, precision='auto'),
      capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stderr[-3000:]
  checked = colour_check.verdicts(colour_check.score_model(restore.restore_model(model_dir)))
  assert len(checked) == 10
  report = colour_check.format_verdicts(checked)
  summary, bounds = colour_check.summary(checked), BOUNDS[kind]
  assert summary['worst_channel_error'] < bounds['worst_channel_error'], report
  assert summary['meeting_the_bar'] >= bounds['meeting_the_bar'], report
  assert summary['mean_gain_db'] > bounds['mean_gain_db'], report
