"""Trains a Noise2Noise denoiser (train.py, n2n-train).

  python train.py                                   # the built-in demo (configs/demo.cfg)
  python train.py --flagfile=configs/gaussian.cfg   # the paper's Gaussian experiment

Rerunning a command with the same --model_dir resumes it.
"""

import os
import shlex
import sys

from absl import flags
from absl import logging

from n2n import apps
from n2n import config as config_lib
from n2n import config_flags
from n2n.training import launch
from n2n.training import preemption

# The demo's flagfile is in the repository, not the package: found only when
# this package runs from a checkout.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO_FLAGFILE = os.path.join(REPO_ROOT, 'configs', 'demo.cfg')


def next_steps(model_dir, program, val_data=''):
  """The lines a finished run ends with: the commands that use model_dir, named
  as program was (train.py: python denoise.py ...; n2n-train: n2n-denoise ...);
  validate.py takes the run's val_data, or --data where it had none."""
  def command(name):
    return f'python {name}.py' if program.endswith('.py') else f'n2n-{name}'
  folder = shlex.quote(model_dir)
  data = '' if val_data else ' --data=VALIDATION_IMAGES'

  return '\n'.join([
      f'Finished {model_dir}. Next:',
      f'  denoise:      {command("denoise")} --model={folder} --input=NOISY_IMAGES '
      '--output_dir=DENOISED',
      f'  TensorBoard:  tensorboard --logdir {folder}',
      f'  validate:     {command("validate")} --checkpoint={folder}{data}',
  ])


def main(argv):
  with apps.configured(argv, config_lib.TrainConfig) as config:
    try:
      launch.train(config)
    except preemption.TrainingInterrupted as interrupted:
      logging.warning('%s', interrupted)
      sys.exit(128 + interrupted.signal_number)
  print(next_steps(config.run.model_dir, os.path.basename(argv[0]), config.data.val_data))


def with_demo_flagfile(argv):
  """argv, with no flags given, plus --flagfile= the demo's (a new list).

  Raises:
    SystemExit: no flags given and no demo flagfile beside the package (an
      installed package run outside the repository), with one line.
  """
  if len(argv) > 1:
    return list(argv)
  if not os.path.exists(DEMO_FLAGFILE):
    sys.exit(f'{os.path.basename(argv[0])}: error: no flags given; pass --flagfile=FILE '
             '(e.g. configs/demo.cfg of the n2n repository) or --train_data and the other '
             'flags (--help lists them)')
  return [*argv, f'--flagfile={DEMO_FLAGFILE}']


def run(argv=None):
  """The program: defines the flags and runs main (with no flags, the demo)."""
  config_flags.define_flags(config_lib.TrainConfig, flags.FLAGS)
  apps.start(main, __doc__, with_demo_flagfile(sys.argv if argv is None else argv))
