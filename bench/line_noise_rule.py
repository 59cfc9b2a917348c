"""What the line-noise rule (n2n/diagnosis/report.py: LINE_FAR, LINE_KEPT) sees on one
photograph at a time: the diagnosis's correlation at lags 1-4, the share of its lag-2
value kept at lag 4, and the kind it reads,

  - for camera noise that decays: the demo's two held-out photographs through cameras
    of the calibrated profile 1 (bench/recipes/camera.py), seeds 1 to --seeds;
  - for row noise: each demo photograph's luminance through the sCMOS simulator
    (n2n/data/microscope_noise.py, its default rows).

  python -m bench.line_noise_rule --output=docs/bench/line_noise_rule.json

Pure numpy on one core, under a minute.
"""

import os

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.data import microscope_noise  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import noise_statistics  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import report  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.recipes import camera as camera_recipe  # pylint: disable=g-import-not-at-top

flags.DEFINE_integer('seeds', 6, 'Camera seeds 1..seeds per held-out photograph.', lower_bound=1)
flags.DEFINE_string('output', '', 'Write the readings here as JSON.')
FLAGS = flags.FLAGS


def reading(name, image):
  """The diagnosis of one image ([H, W, C] float in [0, 1]) as a JSON row, or None where
  it has no usable flat patch."""
  try:
    profile = noise_statistics.estimate_single([image.astype(np.float32)])
  except ValueError:
    return None
  along_x, along_y = profile.correlation_x, profile.correlation_y
  return {'image': name, 'correlation_x': [round(float(v), 3) for v in along_x],
          'correlation_y': [round(float(v), 3) for v in along_y],
          'kept_x': round(float(along_x[-1] / along_x[1]), 2) if along_x[1] > 0 else None,
          'kept_y': round(float(along_y[-1] / along_y[1]), 2) if along_y[1] > 0 else None,
          'read_as': report.kind_of(profile)}


def main(argv):
  del argv
  results = {**provenance.stamp(REPO_ROOT), 'line_far': report.LINE_FAR,
             'line_kept': report.LINE_KEPT, 'camera': [], 'scmos_rows': []}
  for path in camera_recipe.HELD_OUT:
    for seed in range(1, FLAGS.seeds + 1):
      capture, _ = camera_recipe.held_out_capture(path, seed)
      row = reading(f'{os.path.basename(path)} seed {seed}', capture / 255.0)
      results['camera'].append(row)
      print('camera', row, flush=True)
  rng = np.random.default_rng(0)
  settings = microscope_noise.ScmosSettings()
  for path in camera_recipe.demo_photograph_paths():
    luminance = camera_recipe.clean_photograph(path).mean(axis=2)
    capture = microscope_noise.capture(luminance, settings, rng)[..., None] / 65535.0
    row = reading(os.path.basename(path), capture)
    results['scmos_rows'].append(row)
    print('sCMOS', row, flush=True)
  json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
