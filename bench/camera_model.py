"""Trains the camera model n2n ships (issue 52, part 2's second path): a network
that denoises 8-bit sRGB photographs from digital cameras as is, with no
training by the user.

As Brooks et al. ("Unprocessing Images for Learned Raw Denoising", CVPR 2019)
trained on synthetic raw noise: the demo's nine training photographs
(datasets/demo/train: five colour photographs, one of them a micrograph, a grey
portrait and three grey textures, as RGB; their sources and licences in
datasets/demo/SOURCES.md) go through n2n/data/camera_pipeline.py's camera, each
--cameras_per_photograph times with a camera drawn at random from
bench/recipes/camera.py's TRAINING_CAMERAS (ranges around the two profiles
calibrated to real photographs in bench/camera_calibration.py), CAPTURES captures
each, and the
paper's U-Net trains Noise2Noise on those captures (method pairs: the noise of
two captures is independent on the sensor, whatever processing correlates it
within one). The demo's two validation photographs (datasets/demo/val) are
never seen: bench/camera_calibration.py --methods=model:camera_srgb scores the
model on them, beside the single-image methods, on the calibrated profiles.

  python -m bench.camera_model --model_dir=/tmp/high_iso    # 6000 steps, 216 scenes
  python -m bench.camera_model --ship_from=/tmp/high_iso --ship_as=camera_srgb_high_iso

Two models ship from this script, each trained at its own commit with the defaults that
commit held: camera_srgb at b0b6329 (shot 0.0002-0.003, 12 cameras per photograph) and
camera_srgb_high_iso at 2f13967 (shot up to 0.012, 24 cameras per photograph); each one's
camera_model.json records its cameras' ranges.

Training records its stamp (commit, host, date), settings and wall time in
MODEL_DIR/camera_model.json, one entry per part when a stopped run is resumed (each part
at the same clean commit; bench/shipping.train_in_parts). The second command copies the
trained network's weights (without the optimizer's), its portable config.json, that
record and a README naming the training photographs' sources and licences into
n2n/shipped_models/NAME (--ship_as: camera_srgb or camera_srgb_high_iso), where
denoise.py --model=NAME and n2n.Denoiser.load(NAME) find it. Each shipped model's
camera_model.json says where, when and how long it trained.
"""

import glob
import os

from absl import app
from absl import flags
import numpy as np

from bench import REPO_ROOT
from bench import json_output
from bench import provenance
from bench import shipping
from bench.recipes import camera as camera_recipe
import n2n
from n2n import shipped
from n2n.data import camera_pipeline

flags.DEFINE_integer('train_steps', 6000, 'Training steps.', lower_bound=1)
flags.DEFINE_integer('cameras_per_photograph', 24, 'Scenes made of each training photograph, '
                     'each through its own random camera.', lower_bound=1)
flags.DEFINE_integer('seed', 0, 'Seed of the cameras, the noise and the training.')
flags.DEFINE_string('precision', 'auto', 'Training precision (train.py\'s --precision).')
flags.DEFINE_string('model_dir', '', 'Where the run is trained (resumes if it exists).')
flags.DEFINE_integer('held_out_seeds', 0, 'Instead of training: the gain of the shipped model '
                     '--ship_as on '
                     'the held-out photographs of its test (bench/recipes/camera.py) with seeds '
                     '1 to this, written as JSON to --output.', lower_bound=0)
flags.DEFINE_string('output', '', 'Where --held_out_seeds writes its JSON.')
flags.DEFINE_string('ship_from', '', 'Instead of training: copy this trained run into the '
                    'package as the shipped model --ship_as.')
flags.DEFINE_enum('ship_as', None,
                  [shipped.CAMERA_SRGB, shipped.CAMERA_SRGB_HIGH_ISO],
                  'The shipped model --ship_from becomes, or --held_out_seeds measures.')
FLAGS = flags.FLAGS

CAPTURES = 2
RECORD = 'camera_model.json'


def training_photograph_paths():
  """The paths of the photographs the model trains on: datasets/demo/train's PNGs."""
  return sorted(glob.glob(os.path.join(REPO_ROOT, 'datasets', 'demo', 'train', '*.png')))


def training_photographs():
  """[H, W, 3] float64 in [0, 1] of training_photograph_paths() (grayscale as RGB), cut
  to whole Bayer cells."""
  return [camera_recipe.clean_photograph(path) for path in training_photograph_paths()]


def random_camera(rng):
  """camera_pipeline.CameraSettings drawn from camera_recipe.TRAINING_CAMERAS."""
  ranges = camera_recipe.TRAINING_CAMERAS
  return camera_pipeline.random_settings(
      rng, ranges['shot'], sharpen=rng.uniform(*ranges['sharpen']),
      jpeg_quality=int(rng.choice(ranges['jpeg_quality'])),
      chroma_blur=rng.uniform(*ranges['chroma_blur']),
      luma_blur=rng.uniform(*ranges['luma_blur']),
      optics_blur=rng.uniform(*ranges['optics_blur']))


def training_scenes(photographs, cameras_per_photograph, seed):
  """[(capture, ...)] CAPTURES uint8 captures of each photograph through each of its
  cameras, and [the cameras' settings as dicts]."""
  rng = np.random.default_rng(seed)
  scenes, cameras = [], []
  for clean in photographs:
    for _ in range(cameras_per_photograph):
      settings = random_camera(rng)
      captures, _ = camera_pipeline.captures_of(clean, settings, CAPTURES, rng)
      scenes.append(tuple(captures))
      cameras.append({name: (value.tolist() if isinstance(value, np.ndarray) else value)
                      for name, value in vars(settings).items()})
  return scenes, cameras


def train(model_dir):
  scenes, cameras = training_scenes(training_photographs(), FLAGS.cameras_per_photograph,
                                    FLAGS.seed)
  config = n2n.train_config(model_dir=model_dir, noise='none', method='pairs', crop_size=128,
                            batch_size=8, train_steps=FLAGS.train_steps, seed=FLAGS.seed,
                            precision=FLAGS.precision, eval_every=0)
  print(f'{len(scenes)} scenes of {CAPTURES} captures; training to step {FLAGS.train_steps} '
        f'in {model_dir}', flush=True)
  settings = dict(train_steps=FLAGS.train_steps, seed=FLAGS.seed,
                  training_cameras=camera_recipe.TRAINING_CAMERAS, captures=CAPTURES,
                  cameras_per_photograph=FLAGS.cameras_per_photograph,
                  photographs='datasets/demo/train',
                  photograph_files=[os.path.relpath(path, REPO_ROOT)
                                    for path in training_photograph_paths()])
  record = shipping.train_in_parts(
      REPO_ROOT, model_dir, RECORD,
      lambda: n2n.train(config, captures=scenes, progress_bar=True), FLAGS.precision, settings)
  record['cameras'] = cameras
  shipping.write_record(model_dir, RECORD, record)


def ship(model_dir, name):
  """Copies run model_dir into the package as the shipped model `name` (bench/shipping.py),
  with its record (camera_model.json) and a README naming the training photographs'
  sources and licences."""
  shipping.ship(model_dir, name, RECORD,
                model_readme(name, shipping.read_record(model_dir, RECORD)))


def model_readme(name, record):
  """The shipped model's README.md: what it is, how it was trained (from its record,
  camera_model.json) and the rows of datasets/demo/SOURCES.md of the photographs it
  trained on (those under record['photographs']), with their licences."""
  folder = os.path.relpath(record['photographs'], 'datasets/demo')
  with open(os.path.join(REPO_ROOT, 'datasets', 'demo', 'SOURCES.md')) as sources_file:
    rows = [line for line in sources_file.read().splitlines()
            if line.startswith(f'| {folder}/')]
  return '\n'.join([
      f'# {name}', '', shipped.MODELS[name].what + '.', '',
      f'Trained by bench/camera_model.py: {record["train_steps"]} steps of Noise2Noise on '
      f'{record["captures"]} captures of each of {len(record["cameras"])} scenes, the '
      'photographs below each through random cameras of n2n\'s simulator (camera_model.json '
      'lists them and the ranges they were drawn from). Parts: '
      f'{shipping.parts_text(record)}.', '',
      'What it scored on real noise it never trained on (mean PSNR, 8-bit RGB, as '
      'bench/real_dev.py scores it):', '',
      *(shipping.measured_lines(name, shipping.record_trained_at(record))
        or ['- not measured yet']), '',
      'The photographs, from the scikit-image sample-data catalogue as '
      'datasets/demo/SOURCES.md says:', '',
      '| file | content | licence |', '|---|---|---|', *rows, ''])


def held_out_spread(seeds, name):
  """Prints and writes (--output) the shipped model `name`'s gain on each held-out
  photograph of its test for seeds 1..seeds, as the test measures it (precision auto)."""
  stamp = provenance.stamp(REPO_ROOT)
  denoiser = n2n.Denoiser.load(name)
  gains = {path: [camera_recipe.gain(denoiser, path, seed) for seed in range(1, seeds + 1)]
           for path in camera_recipe.HELD_OUT}
  for path, values in gains.items():
    print(f'{path}: ' + ' '.join(f'{value:+.2f}' for value in values) + ' dB')
  json_output.write_results(FLAGS.output, {**stamp, 'model': name,
                                           'profile': camera_recipe.PROFILE,
                                           'seeds': list(range(1, seeds + 1)),
                                           'gains_db': gains})


def main(argv):
  del argv
  if (FLAGS.ship_from or FLAGS.held_out_seeds) and not FLAGS.ship_as:
    raise app.UsageError('--ship_as: which camera model (camera_srgb, camera_srgb_high_iso)')
  if FLAGS.ship_from:
    ship(FLAGS.ship_from, FLAGS.ship_as)
    print(f'copied {FLAGS.ship_from} into {shipped.folder(FLAGS.ship_as)}')
    return
  if FLAGS.held_out_seeds:
    held_out_spread(FLAGS.held_out_seeds, FLAGS.ship_as)
    return
  if not FLAGS.model_dir:
    raise app.UsageError('--model_dir: where to train')
  shipping.train_from_main(train, FLAGS.model_dir)


if __name__ == '__main__':
  app.run(main)
