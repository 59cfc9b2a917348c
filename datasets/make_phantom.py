"""Writes phantom z-stacks (and a movie) of fluorescence-like structures, no download needed.

  python datasets/make_phantom.py --output_dir=data/phantom_raw --scenes=6
  python datasets/make_tfrecords.py --scenes --input_dir=data/phantom_raw/train \\
      --output_dir=data/phantom
  python train.py --train_data=data/phantom --noise=none --spatial_dims=3 ...

Each scene folder holds two independent noisy acquisitions of one volume and
its noise-free reference, as 16-bit ImageJ hyperstacks (axes ZYX) with the z
spacing in their metadata (n2n/data/phantom.py says what the volumes hold).
--movie_frames also writes movie/noisy.tif and movie/reference.tif (axes
TYX): one focal plane while the objects drift.
"""

import os

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n.data import phantom  # pylint: disable=g-import-not-at-top
from n2n.data import volumes  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('output_dir', None, 'Folder to write train/scene_NN/ (and movie/) into; '
                    'must not exist yet.')
flags.DEFINE_integer('scenes', 6, 'Phantom volumes (scene folders) to write.', lower_bound=1)
flags.DEFINE_list('shape', ['32', '128', '128'], 'Z,Y,X voxels of each volume.')
flags.DEFINE_float('z_spacing', 4.0, 'The z step in xy pixel sizes (anisotropy).', lower_bound=0.1)
flags.DEFINE_float('peak_photons', 30.0, 'Expected photons at the brightest structure (sets the '
                   'noise).', lower_bound=0.1)
flags.DEFINE_float('pixel_size', 0.1, 'The xy pixel size written to the files, micrometres.',
                   lower_bound=0.0)
flags.DEFINE_integer('movie_frames', 0, 'Also write a movie of this many frames.', lower_bound=0)
flags.DEFINE_integer('seed', 0, 'Seed of the first scene (scene i uses seed + i).')
flags.mark_flags_as_required(['output_dir'])
FLAGS = flags.FLAGS


def _write(path, pixels, axes, spacing):
  like = volumes.Volume(volumes.to_canonical(pixels, axes), axes, 'imagej', spacing, 'micron')
  volumes.write_volume(path, like.pixels, like)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('make_phantom.py'):
    if os.path.exists(FLAGS.output_dir):
      raise ValueError(f'--output_dir={FLAGS.output_dir!r} exists; n2n writes phantoms only '
                       'into a new folder')
    try:
      shape = tuple(int(size) for size in FLAGS.shape)
    except ValueError:
      shape = ()
    if len(shape) != 3 or min(shape) < 1:
      raise ValueError(f'--shape={",".join(FLAGS.shape)} must be three positive sizes Z,Y,X')
    spec = phantom.PhantomSpec(shape=shape, z_spacing=FLAGS.z_spacing,
                               peak_photons=FLAGS.peak_photons)
    spacing = (FLAGS.pixel_size * FLAGS.z_spacing, FLAGS.pixel_size, FLAGS.pixel_size)
    for index in range(FLAGS.scenes):
      captures, reference = phantom.phantom_scene(spec, FLAGS.seed + index)
      folder = os.path.join(FLAGS.output_dir, 'train', f'scene_{index:02d}')
      os.makedirs(folder)
      for number, capture in enumerate(captures, 1):
        _write(os.path.join(folder, f'acquisition_{number}.tif'), capture, 'ZYX', spacing)
      _write(os.path.join(folder, 'reference.tif'), reference, 'ZYX', spacing)
    if FLAGS.movie_frames:
      noisy, reference = phantom.phantom_movie(spec, FLAGS.seed + FLAGS.scenes,
                                               FLAGS.movie_frames)
      folder = os.path.join(FLAGS.output_dir, 'movie')
      os.makedirs(folder)
      _write(os.path.join(folder, 'noisy.tif'), noisy, 'TYX', spacing)
      _write(os.path.join(folder, 'reference.tif'), reference, 'TYX', spacing)
    print(f'Wrote {FLAGS.scenes} phantom volumes of {"x".join(map(str, shape))} voxels '
          f'(z step {FLAGS.z_spacing:g} pixels){" and a movie" if FLAGS.movie_frames else ""} '
          f'to {FLAGS.output_dir}')


if __name__ == '__main__':
  app.run(main)
