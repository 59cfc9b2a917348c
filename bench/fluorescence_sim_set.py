"""A simulated fluorescence set in real_dev's layout, for issue 63 §3's table on the
simulator: bench/real_dev.py scores the shipped fluorescence model as is, fine-tuned from
it and the recommended method from scratch on it, exactly as on the real w2s80.

--fields fields of bench/recipes/fluorescence.py, drawn with --seed (the shipped model
trained on seed 0's fields: another seed gives fields it never saw), each through its own
random camera, one acquisition each, written as the 8-bit contrast-stretched export
W2S's 8-bit copy is (FOLDER/fluorescence_sim/noisy/NNN.png); the reference is the field's
expected fluorescence on 0-255 (gt/NNN.png). Like w2s80 the two are on their own scales,
and real_dev scores after a per-image affine fit (its SETS['fluorescence_sim']).

  python -m bench.fluorescence_sim_set --folder=/tmp/sim
  python -m bench.real_dev --real_dev=/tmp/sim --sets=fluorescence_sim \
      --outputs=noisy,model:fluorescence,model:fluorescence:tta,scratch,tune:fluorescence \
      --output=docs/bench/fine_tuning_fluorescence_sim.json

(tune: at the rate the advice gives, 1e-4; scratch: n2n's own rate. The committed JSON was
made so at d86750c, the set with this module's defaults: 40 fields of 256 pixels, seed 1000.)
"""

import os
import sys

from absl import app
from absl import flags
from PIL import Image

from bench.recipes import fluorescence

SET_NAME = 'fluorescence_sim'

flags.DEFINE_string('folder', '', 'Where the set is written (FOLDER/fluorescence_sim).')
flags.DEFINE_integer('fields', 40, 'Fields (noisy images).', lower_bound=1)
flags.DEFINE_integer('field_size', 256, 'Fields\' side in pixels.', lower_bound=128)
flags.DEFINE_integer('seed', 1000, 'Seed of the fields, cameras and noise (not 0: the '
                     'shipped model trained on seed 0\'s).')
FLAGS = flags.FLAGS


def main(argv):
  del argv
  if not FLAGS.folder:
    raise app.UsageError('--folder: where to write the set')
  target = os.path.join(FLAGS.folder, SET_NAME)
  if os.path.exists(target):
    sys.exit(f'error: --folder: {target} exists; a set is written only where none is')
  for sub in ('noisy', 'gt'):
    os.makedirs(os.path.join(target, sub))
  for index, (noisy, reference) in enumerate(
      fluorescence.stretched_pairs(FLAGS.fields, FLAGS.field_size, FLAGS.seed)):
    Image.fromarray(noisy).save(os.path.join(target, 'noisy', f'{index:03d}.png'))
    Image.fromarray(reference).save(os.path.join(target, 'gt', f'{index:03d}.png'))
  print('wrote', FLAGS.fields, 'pairs to', target)


if __name__ == '__main__':
  app.run(main)
