import json

import imageio.v3 as iio
import numpy as np

from n2n.evaluation import report
from n2n.evaluation import scoring


def _results():
  denoised = np.full((4, 5, 1), 0.5, np.float32)
  return [scoring.LevelScores('impulse', 0.5, (
      scoring.ImageScore('sub/a.png', 30.0, 20.0, denoised=denoised, colour_error=(0.012,)),
      scoring.ImageScore('b.jpg', 32.0, 22.0, denoised=denoised + 0.7)))]


def test_table_lists_every_image_and_the_means():
  lines = report.format_table(_results()).splitlines()
  assert lines[0] == 'impulse 0.5'
  assert lines[1].split()[-4:] == ['mean', 'error', 'per', 'channel']
  assert lines[2].split() == ['sub/a.png', '20.00', '30.00', '+0.012']
  assert lines[-1].split() == ['mean', '21.00', '31.00']


def test_outputs_are_pngs_per_level_and_metrics_json(tmp_path):
  report.write_outputs(str(tmp_path), 'run/ckpt-9', 9, _results())
  metrics = json.loads((tmp_path / 'metrics.json').read_text())
  assert metrics['step'] == 9 and metrics['noise'] == 'impulse'
  assert metrics['levels']['0.5']['mean_psnr'] == 31.0
  assert [image['name'] for image in metrics['levels']['0.5']['images']] == ['sub/a.png', 'b.jpg']
  assert metrics['levels']['0.5']['images'][0]['colour_error'] == [0.012]
  first = iio.imread(tmp_path / 'impulse_0.5' / 'sub' / 'a.png')
  second = iio.imread(tmp_path / 'impulse_0.5' / 'b.png')
  assert first.shape == (4, 5) and first.max() == 128 and second.min() == 255  # clipped
