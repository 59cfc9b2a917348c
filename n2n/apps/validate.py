"""Scores a trained denoiser on a folder of images or TFRecords (validate.py,
n2n-validate).

  python validate.py --checkpoint=runs/demo --output_dir=results
  python validate.py --checkpoint=runs/big --follow     # sidecar: score each new checkpoint

The network is rebuilt from the run's config.json and the checkpoint holds
weights only: nothing is unpickled or executed. Unset flags take the run's
values (data, noise, levels, seed, precision), so a checkpoint scores what the
evaluation during training reported for it.
"""


from absl import flags

from n2n import apps
from n2n import config as config_lib
from n2n import config_flags
from n2n.evaluation import validation


def main(argv):
  with apps.configured(argv, config_lib.ValidateConfig) as config:
    if config.follow:
      scored = validation.follow(config)
      print(f'scored steps {", ".join(map(str, scored))}; the run is finished')
      return
    text, _ = validation.validate_once(config)
    print(text)
    if config.output_dir:
      print(f'wrote denoised images and metrics.json to {config.output_dir}')


def run(argv=None):
  """The program: defines the flags and runs main."""
  config_flags.define_flags(config_lib.ValidateConfig, flags.FLAGS)
  apps.start(main, __doc__, argv)
