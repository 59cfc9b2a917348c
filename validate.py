"""Scores a trained denoiser on a folder of images (or TFRecords).

  python validate.py --checkpoint=runs/demo --data=datasets/demo/val --output_dir=results

The network is rebuilt from the run's config.json and the checkpoint holds
weights only: nothing is unpickled or executed. Noise is fixed by --seed, so
the same checkpoint always gets the same PSNR.
"""

from n2n import cli  # pylint: disable=g-bad-import-order  (quiets TF before it loads)
from absl import app
from absl import flags

from n2n import evaluation
from n2n import flags as n2n_flags
from n2n import input_pipeline
from n2n import noise as noise_lib
from n2n import validate_lib

FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('validate.py'):
    if not FLAGS.checkpoint or not FLAGS.data:
      raise ValueError('--checkpoint and --data are required')
    model, saved, prefix = validate_lib.restore_model(FLAGS.checkpoint, FLAGS.precision)
    noise = FLAGS.noise or saved.get('noise', 'gaussian')
    corruption = noise_lib.get_corruption(noise)
    if FLAGS.noise_levels:
      levels = n2n_flags.parse_float_list('noise_levels', FLAGS.noise_levels)
    elif noise == saved.get('noise'):
      levels = tuple(saved.get('eval_noise_levels', corruption.default_eval_levels))
    else:
      levels = corruption.default_eval_levels
    images = input_pipeline.load_eval_images(FLAGS.data, model.input_shape[-1], FLAGS.max_images,
                                             flag_name='data')
    results = evaluation.evaluate(evaluation.make_denoiser(model), images, noise, levels,
                                  FLAGS.seed, keep_images=-1 if FLAGS.output_dir else 0)
    print(f'checkpoint {prefix}')
    print(validate_lib.format_table(noise, results))
    if FLAGS.output_dir:
      validate_lib.write_outputs(FLAGS.output_dir, prefix, noise, results)
      print(f'wrote denoised images and metrics.json to {FLAGS.output_dir}')


if __name__ == '__main__':
  n2n_flags.define_validate_flags()
  app.run(main)
