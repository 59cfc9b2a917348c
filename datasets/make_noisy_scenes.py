"""Simulated real data: scene folders of noisy captures made from clean photographs.

  python datasets/make_noisy_scenes.py --clean_dir=datasets/demo/train --output_dir=data/scenes_raw
  python datasets/make_noisy_scenes.py --pipeline=camera --jpeg_quality=90 --sharpen=0.5 \
      --clean_dir=datasets/demo/train --output_dir=data/camera_raw
  python datasets/make_noisy_scenes.py --pipeline=microscope --row_sigma=3 \
      --clean_dir=datasets/demo/train --output_dir=data/scmos_raw

Each photograph becomes a folder of --captures noisy captures and reference.png
(n2n/data/simulated_scenes.py):
- sensor (default): signal-dependent Gaussian noise (variance gain * x +
  read_variance), 16-bit PNG, independent from pixel to pixel;
- camera: the photograph unprocessed to raw (Brooks et al. 2019), mosaicked,
  given raw shot and read noise, demosaicked and processed forward again, with
  optional sharpening and JPEG: 8-bit sRGB whose noise is spatially correlated
  like a real photograph's; reference.png is the same camera's noise-free
  rendering;
- microscope: sCMOS-like 16-bit grayscale counts, Poisson-Gaussian noise plus
  row and column offsets per frame.
Each capture's noise is independent of the others'. The program then measures
the noise of what it wrote from the first two captures of each scene (level
against signal, correlation at lags 1-4) and checks it against the settings.
Feed the folder to datasets/make_tfrecords.py --scenes and train with
--noise=none, or to diagnose.py.
"""

import os

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
from absl import logging  # pylint: disable=g-import-not-at-top

from n2n.data import microscope_noise  # pylint: disable=g-import-not-at-top
from n2n.data import simulated_scenes  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import noisy_data  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import report  # pylint: disable=g-import-not-at-top
from n2n.diagnosis import simulation_check  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('clean_dir', None, 'Folder of clean photographs.')
flags.DEFINE_string('output_dir', None, 'Where the scene folders go.')
flags.DEFINE_enum('pipeline', 'sensor', simulated_scenes.PIPELINES,
                  'sensor: pixel-independent 16-bit; camera: 8-bit sRGB through a simulated '
                  'camera (correlated noise); microscope: sCMOS-like 16-bit grayscale counts.')
flags.DEFINE_integer('captures', 2, 'Noisy captures per scene.', lower_bound=2)
flags.DEFINE_float('gain', 0.01, 'sensor: shot-noise variance per unit signal.', lower_bound=0.0)
flags.DEFINE_float('read_variance', 0.0004, 'sensor: read-noise variance.', lower_bound=0.0)
flags.DEFINE_boolean('grayscale', False, 'sensor: single-channel captures.')
flags.DEFINE_list('camera_shot_range', ['0.001', '0.01'],
                  'camera: low,high raw shot-noise variance per unit signal, drawn '
                  'log-uniformly per scene (Brooks et al.: 0.0001,0.012); the read noise '
                  'follows their fitted line.')
flags.DEFINE_float('sharpen', 0.0, 'camera: unsharp-mask amount after the tone curve (0: none; '
                   '0.5 is mild).', lower_bound=0.0)
flags.DEFINE_integer('jpeg_quality', 0, 'camera: JPEG quality 1-100 of the captures (0: none).',
                     lower_bound=0, upper_bound=100)
flags.DEFINE_float('chroma_blur', 0.0, 'camera: in-camera chroma noise reduction, the standard '
                   'deviation in pixels of a Gaussian blur of the colour differences from the '
                   'luma (0: none; with --luma_blur=0.45 and --camera_shot_range=0.0015,0.0015, '
                   '2 reads like real photographs of in-camera noise reduction, '
                   'docs/diagnosis.md).', lower_bound=0.0)
flags.DEFINE_float('luma_blur', 0.0, 'camera: in-camera luma noise reduction, the same for the '
                   'luma (0: none; 0.45 with --chroma_blur=2 reads like real photographs of '
                   'in-camera noise reduction, docs/diagnosis.md).', lower_bound=0.0)
flags.DEFINE_float('optics_blur', 0.0, 'camera: the lens\'s blur of the scene before the '
                   'mosaic, the standard deviation in pixels of a Gaussian (0: none; downscaled '
                   'photographs are sharper at the pixel than a camera\'s own: 0.65 brought the '
                   'demo\'s gains within 0.2 dB of one real benchmark and 0.4-1.1 dB under '
                   'the other, docs/diagnosis.md).',
                   lower_bound=0.0)
flags.DEFINE_float('photons', 200.0, 'microscope: expected photons at the brightest value.',
                   lower_bound=0.001)
flags.DEFINE_float('read_sigma', 2.0, 'microscope: read noise per pixel, counts.', lower_bound=0.0)
flags.DEFINE_float('row_sigma', 3.0, 'microscope: row offset per frame, counts.', lower_bound=0.0)
flags.DEFINE_float('column_sigma', 0.0, 'microscope: column offset per frame, counts.',
                   lower_bound=0.0)
flags.DEFINE_float('offset', 100.0, 'microscope: the camera\'s baseline, counts.', lower_bound=0.0)
flags.DEFINE_boolean('reference', True, 'Write reference.png.')
flags.DEFINE_integer('seed', 0, 'Noise seed.')
flags.mark_flags_as_required(['clean_dir', 'output_dir'])
FLAGS = flags.FLAGS


def _camera_options():
  try:
    low, high = (float(value) for value in FLAGS.camera_shot_range)
  except ValueError:
    raise ValueError(f'--camera_shot_range={",".join(FLAGS.camera_shot_range)} needs two '
                     'numbers: low,high') from None
  if not 0 < low <= high <= 1:
    raise ValueError(f'--camera_shot_range={low:g},{high:g} needs 0 < low <= high <= 1')
  return simulated_scenes.CameraOptions((low, high), sharpen=FLAGS.sharpen,
                                        jpeg_quality=FLAGS.jpeg_quality,
                                        chroma_blur=FLAGS.chroma_blur, luma_blur=FLAGS.luma_blur,
                                        optics_blur=FLAGS.optics_blur)


def _microscope_settings():
  return microscope_noise.ScmosSettings(FLAGS.photons, FLAGS.read_sigma, FLAGS.row_sigma,
                                        FLAGS.column_sigma, FLAGS.offset)


def settings_check(profile):
  """Lines comparing the measured noise with what the settings make (where
  that has a closed form: the sensor and microscope pipelines)."""
  if FLAGS.pipeline == 'sensor':
    return [simulation_check.check_sensor(profile, FLAGS.gain, FLAGS.read_variance)[1]]
  if FLAGS.pipeline == 'microscope':
    return [simulation_check.check_microscope(profile, _microscope_settings())[1]]
  return ['settings: the camera pipeline\'s correlation has no closed form; the figures above '
          'are its measurement (independent pixels would read 0)']


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('make_noisy_scenes.py'):
    if not os.path.isdir(FLAGS.clean_dir):
      raise ValueError(f'--clean_dir={FLAGS.clean_dir!r} is not a folder')
    written = simulated_scenes.write_scenes(
        FLAGS.clean_dir, FLAGS.output_dir, FLAGS.captures, FLAGS.gain, FLAGS.read_variance,
        FLAGS.grayscale, FLAGS.reference, seed=FLAGS.seed, pipeline=FLAGS.pipeline,
        camera=_camera_options(), microscope=_microscope_settings())
    if not written:
      raise ValueError(f'--clean_dir={FLAGS.clean_dir!r} holds no readable image')
    logging.info('Wrote %d scenes to %s.', len(written), FLAGS.output_dir)
    profile, count = noisy_data.diagnose_scenes(FLAGS.output_dir)
    print(report.describe(profile, count))
    print('\n'.join(settings_check(profile)))


if __name__ == '__main__':
  app.run(main)
