"""Trains the fluorescence microscopy model n2n ships (issue 63 §2): one channel, for
widefield and confocal images as they are, with no training by the user.

Noise2Noise (method pairs) on two independent simulated acquisitions of each of
--fields random fields of bench/recipes/fluorescence.py (filaments, puncta, membranes,
nuclei, haze; Poisson-Gaussian counts from confocal to bright widefield levels; 16-bit,
12-bit and contrast-stretched 8-bit files), --field_size pixels square. Each image is
mapped by its own percentiles (--normalization=percentile), so the model takes 8- and
16-bit files, offsets and contrast stretches alike. No real image is trained on; the
real_dev sets score it (bench/real_dev.py --outputs=model:fluorescence).

  python -m bench.fluorescence_model --model_dir=/tmp/fluorescence     # trains, resumable
  python -m bench.fluorescence_model --ship_from=/tmp/fluorescence

Training records its stamp (commit, host, date), settings and wall time in
MODEL_DIR/fluorescence_model.json, one entry per part when a stopped run is resumed (each
part must run at the same clean commit). The second command copies the network's weights,
a portable config.json (bench/shipping.py), that record and a README into
n2n/shipped_models/fluorescence.
"""

from absl import app
from absl import flags
import numpy as np

from bench import REPO_ROOT
from bench import shipping
from bench.recipes import fluorescence
import n2n

NAME = 'fluorescence'
RECORD = 'fluorescence_model.json'

flags.DEFINE_integer('train_steps', 5000, 'Training steps.', lower_bound=1)
flags.DEFINE_integer('fields', 600, 'Simulated fields (scenes of two acquisitions).',
                     lower_bound=1)
flags.DEFINE_integer('field_size', 256, 'Fields\' side in pixels.', lower_bound=128)
flags.DEFINE_integer('seed', 0, 'Seed of the fields, the cameras, the noise and training.')
flags.DEFINE_string('precision', 'auto', 'Training precision (train.py\'s --precision).')
flags.DEFINE_string('model_dir', '', 'Where the run is trained (resumes if it exists).')
flags.DEFINE_string('ship_from', '', 'Instead of training: copy this trained run into the '
                    f'package as the shipped model {NAME!r}.')
FLAGS = flags.FLAGS


def training_scenes(fields, size, seed):
  """[(capture, capture)] uint16 [size, size] pairs, and [each one's camera as a dict]."""
  rng = np.random.default_rng(seed)
  scenes, cameras = [], []
  for _ in range(fields):
    field = fluorescence.clean_field(rng, size)
    camera = fluorescence.random_camera(rng)
    scenes.append(tuple(fluorescence.acquisitions(field, camera, rng)))
    cameras.append(vars(camera))
  return scenes, cameras


def train(model_dir):
  scenes, cameras = training_scenes(FLAGS.fields, FLAGS.field_size, FLAGS.seed)
  config = n2n.train_config(model_dir=model_dir, noise='none', method='pairs', channels=1,
                            normalization='percentile', crop_size=128, batch_size=8,
                            train_steps=FLAGS.train_steps, seed=FLAGS.seed,
                            precision=FLAGS.precision, eval_every=0)
  print(f'{len(scenes)} fields of 2 acquisitions; training to step {FLAGS.train_steps} '
        f'in {model_dir}', flush=True)
  settings = dict(train_steps=FLAGS.train_steps, fields=FLAGS.fields,
                  field_size=FLAGS.field_size, seed=FLAGS.seed,
                  simulator='bench/recipes/fluorescence.py',
                  ranges={'peak_photons': fluorescence.PEAK_PHOTONS,
                          'background_share': fluorescence.BACKGROUND_SHARE,
                          'read_noise_electrons': fluorescence.READ_NOISE_ELECTRONS,
                          'gain_counts_per_electron': fluorescence.GAIN_COUNTS_PER_ELECTRON,
                          'offset_counts': fluorescence.OFFSET_COUNTS,
                          'psf_sigma': fluorescence.PSF_SIGMA,
                          'file_kinds': fluorescence.FILE_KINDS})
  record = shipping.train_in_parts(
      REPO_ROOT, model_dir, RECORD,
      lambda: n2n.train(config, captures=scenes, progress_bar=True), FLAGS.precision, settings)
  record['cameras'] = cameras
  shipping.write_record(model_dir, RECORD, record)


def model_readme(record):
  """The shipped model's README.md: what it is for and how it was trained (its record)."""
  parts = shipping.parts_text(record)
  return '\n'.join([
      f'# {NAME}', '',
      'One-channel fluorescence micrographs (widefield, confocal) as they are: 8-bit and '
      '16-bit files, 12-bit cameras, offsets, contrast-stretched exports; stacks plane by '
      'plane. Each image is mapped by its own 1st and 99.8th percentiles.', '',
      f'Trained by bench/fluorescence_model.py: {record["train_steps"]} steps of Noise2Noise on '
      f'two simulated acquisitions of each of {record["fields"]} random fields '
      f'({record["field_size"]} px) of bench/recipes/fluorescence.py: filaments, puncta, '
      'membranes and nuclei under a Gaussian PSF, with out-of-focus haze, Poisson-Gaussian '
      'camera noise over the ranges in fluorescence_model.json. No real image, and no '
      f'image file, was trained on. Parts: {parts}.', '',
      'What it scored on real noise it never trained on (mean PSNR; widefield images '
      'after a per-image affine fit, as bench/real_dev.py scores them):', '',
      *(shipping.measured_lines(NAME, shipping.record_trained_at(record))
        or ['- not measured yet']), ''])


def ship(model_dir):
  shipping.ship(model_dir, NAME, RECORD, model_readme(shipping.read_record(model_dir, RECORD)))


def main(argv):
  del argv
  if FLAGS.ship_from:
    ship(FLAGS.ship_from)
    print(f'copied {FLAGS.ship_from} into the package as {NAME}')
    return
  if not FLAGS.model_dir:
    raise app.UsageError('--model_dir: where to train')
  shipping.train_from_main(train, FLAGS.model_dir)


if __name__ == '__main__':
  app.run(main)
