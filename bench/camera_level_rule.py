"""Where camera_srgb_high_iso beats camera_srgb, by the noise level diagnose.py reads
(issue 63 §4): the rule diagnose's advice uses to choose between them.

For each image of a real_dev set, its noise level as n2n.diagnose reads it from that one
photograph (Report.noise_level: the standard deviation, mean over level bins and channels,
0-1 scale; none where diagnose refuses the image), beside each model's PSNR on it from a
bench/real_dev.py run that scored both (its per_image_db):

  python -m bench.camera_level_rule --scores=docs/bench/real_dev_sidd24_camera_models.json \\
      --output=docs/bench/camera_level_rule.json
"""

import json
import os

from absl import app
from absl import flags
import imageio.v3 as iio

from bench import REPO_ROOT
from bench import json_output
from bench import provenance
import n2n
from n2n import shipped

flags.DEFINE_string('scores', '', 'A bench/real_dev.py JSON that scored both models as is.')
flags.DEFINE_string('set', 'sidd24', 'The set of --scores to read.')
flags.DEFINE_string('real_dev', os.path.join(os.path.dirname(REPO_ROOT), 'shared', 'data',
                                             'real_dev'), 'The real_dev folder.')
flags.DEFINE_string('output', '', 'Write the readings here as JSON.')
FLAGS = flags.FLAGS

MODELS = (shipped.CAMERA_SRGB, shipped.CAMERA_SRGB_HIGH_ISO)


def level_of(image):
  """diagnose's noise level of one image (0-1), or the one line it refuses it with."""
  try:
    return n2n.diagnose(images=[image]).noise_level
  except ValueError as error:
    return str(error)


def main(argv):
  del argv
  if not FLAGS.scores:
    raise app.UsageError('--scores: a real_dev JSON that scored both models')
  stamp = provenance.stamp(REPO_ROOT)
  with open(FLAGS.scores) as scores_file:
    outputs = json.load(scores_file)['sets'][FLAGS.set]['outputs']
  noisy = outputs['noisy']['per_image_db']
  rows = []
  for name in sorted(noisy, key=noisy.get):
    image = iio.imread(os.path.join(FLAGS.real_dev, FLAGS.set, 'noisy', f'{name}.png'))
    level = level_of(image)
    scores = {model: outputs[f'model:{model}']['per_image_db'][name] for model in MODELS}
    rows.append({'image': name, 'noisy_db': noisy[name], 'level': level, 'psnr_db': scores})
    print(name, noisy[name], level if isinstance(level, str) else f'{level:.4f}',
          ' '.join(f'{model} {score:.2f}' for model, score in scores.items()), flush=True)
  json_output.write_results(FLAGS.output, {
      **stamp, 'scores': os.path.relpath(os.path.abspath(FLAGS.scores), REPO_ROOT),
      'set': FLAGS.set, 'trained_at': {model: outputs[f'model:{model}'].get('trained_at')
                                       for model in MODELS}, 'images': rows})


if __name__ == '__main__':
  app.run(main)
