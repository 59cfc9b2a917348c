"""Turns a folder of images into shuffled, sharded TFRecords for train.py.

  python datasets/make_tfrecords.py --input_dir=photos/ --output_dir=data/photos
  python datasets/make_tfrecords.py --input_dir=captures/ --output_dir=data/captures --scenes

Clean images (default): every readable image below --input_dir, converted to
8-bit RGB; train with a synthetic --noise.

--scenes: every folder below --input_dir that directly holds images is a
scene of two or more registered noisy captures of one view, plus optionally
reference.* (its clean or many-frame average image). Pixels keep their bit
depth (8/16-bit integer, float32) and channels (1 or 3); train with
--noise=none.

--noisy_images: every image file below --input_dir is one noisy capture of a
scene of its own (no second capture, no reference), kept at its bit depth and
channels like --scenes; train with --noise=none and a single-image method
(--method=neighbor2neighbor or blind_spot).

--clean_stacks: every TIFF stack below --input_dir is one clean volume (or
movie), kept at its bit depth and channels; train with --spatial_dims=3, a
synthetic --noise (gaussian, poisson, impulse or bernoulli) and --method=pairs.

--planes (with --scenes or --noisy_images): cut every stack into its planes (a
movie into its frames), each a 2D scene of its own, to train the 2D network on
the planes of the same stacks (docs/volumes.md, "3D or 2D per plane?").

Writes train-NNNNN-of-MMMMM.tfrecord shards and manifest.json (counts, sizes,
pixel type and white level for scenes, skipped files with reasons).
"""

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
from n2n.data import scene_writer  # pylint: disable=g-import-not-at-top
from n2n.data import volumes  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('input_dir', None, 'Folder of images (or of scene folders), searched '
                    'recursively.')
flags.DEFINE_string('output_dir', None, 'Folder for the shards and manifest.json.')
flags.DEFINE_boolean('scenes', False, 'Folders of real noisy captures of one view each, kept at '
                     'their bit depth and channels (see above).')
flags.DEFINE_boolean('noisy_images', False, 'Every image file is one noisy capture of its own '
                     'scene, kept at its bit depth and channels (see above).')
flags.DEFINE_boolean('clean_stacks', False, 'Every TIFF stack is one clean volume, kept at its '
                     'bit depth and channels, for 3D training on synthetic noise (see above).')
flags.DEFINE_float('white_level', 0.0, 'With --scenes, --noisy_images or --clean_stacks: the '
                   'pixel value that '
                   'maps to 1.0 (e.g. '
                   '4095 for 12-bit data stored in 16-bit files); larger values are an error. '
                   '0: the dtype maximum (1.0 for float data).', lower_bound=0.0)
flags.DEFINE_boolean('skip_bad_scenes', False, 'With --scenes: skip scenes that break the rules '
                     'with one warning each, instead of stopping with nothing written.')
flags.DEFINE_string('axes', '', 'With --scenes, --noisy_images or --clean_stacks: the axes of '
                    'TIFF stacks whose '
                    'files do not say them, in file order (e.g. ZYX for a z-stack, TYX for a '
                    'movie). Stacks (volumes, or movies with time as depth) train with '
                    '--spatial_dims=3.')
flags.DEFINE_boolean('planes', False, 'With --scenes or --noisy_images: cut each TIFF stack into '
                     'its planes (a movie into its frames), each written as a 2D scene, to train '
                     'the 2D network per plane (--spatial_dims=2).')
flags.DEFINE_integer('num_shards', 0, 'Number of shards; 0 sizes them at about 150 MB each.')
flags.DEFINE_integer('min_size', 256, 'Skip images whose shorter side is below this, in pixels '
                     '(clean images only).')
flags.DEFINE_integer('seed', 0, 'Shuffle seed.')
flags.DEFINE_boolean('overwrite', False, 'Replace existing shards in --output_dir.')
flags.DEFINE_integer('num_workers', 0, 'Decoding threads; 0: one per CPU core.')
flags.mark_flags_as_required(['input_dir', 'output_dir'])
FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('make_tfrecords.py'):
    kinds = [name for name in ('scenes', 'noisy_images', 'clean_stacks') if FLAGS[name].value]
    if len(kinds) > 1:
      raise ValueError(f'--{" and --".join(kinds)} describe different folders; pass one')
    if kinds:
      scene_writer.write_scene_dataset(FLAGS.input_dir, FLAGS.output_dir, FLAGS.white_level,
                                       FLAGS.num_shards, FLAGS.seed, FLAGS.overwrite,
                                       FLAGS.skip_bad_scenes, noisy_images=FLAGS.noisy_images,
                                       axes=volumes.parse_axes_flag(FLAGS.axes),
                                       clean_stacks=FLAGS.clean_stacks, planes=FLAGS.planes)
    else:
      if FLAGS.white_level or FLAGS.axes or FLAGS.planes:
        wrong = next(name for name in ('white_level', 'axes', 'planes') if FLAGS[name].value)
        kinds_of = ('--scenes and --noisy_images' if wrong == 'planes'
                    else '--scenes, --noisy_images and --clean_stacks')
        raise ValueError(f'--{wrong} applies to {kinds_of} only (clean images are 8-bit RGB)')
      dataset_writer.write_dataset(FLAGS.input_dir, FLAGS.output_dir, FLAGS.num_shards,
                                   FLAGS.min_size, FLAGS.seed, FLAGS.overwrite, FLAGS.num_workers)


if __name__ == '__main__':
  app.run(main)
