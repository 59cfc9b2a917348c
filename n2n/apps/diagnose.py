"""What is the noise of my images, and what should I train on it? (diagnose.py,
n2n-diagnose)

  python diagnose.py --input=~/noisy_photos                   # single noisy images
  python diagnose.py --input=data/scenes_raw --scenes          # two or more captures per scene
  python diagnose.py --input=~/noisy_photos --output_dir=diag  # also the picture and JSON

Prints the noise's level against the signal per channel, its correlation at
lags 1 to 4 along x and y, and the training method and flags it recommends.
From single images the noise is estimated from their flattest patches; from
two captures of a scene it is measured directly (docs/diagnosis.md).
"""

import json
import os

from absl import flags

from n2n import apps
from n2n import config as config_lib
from n2n import config_flags
from n2n.diagnosis import noisy_data
from n2n.diagnosis import picture
from n2n.diagnosis import report
from n2n.inference import noisy_files

PICTURE_NAME = 'noise_diagnosis.svg'
JSON_NAME = 'noise_diagnosis.json'


def diagnose(config):
  """report.Diagnosis of a DiagnoseConfig (str(): the text diagnose.py prints)."""
  dtypes = []
  if config.scenes:
    profile, count = noisy_data.diagnose_scenes(os.path.expanduser(config.input),
                                                config.white_level, config.max_images)
  else:
    paths = [path for path, _ in noisy_files.find_inputs(config.input)]
    profile, count = noisy_data.diagnose_images(paths, config.white_level, config.max_images,
                                                dtypes=dtypes)
  return report.Diagnosis.of(profile, count, config.white_level,
                             report.pixel_types_of(dtypes))


def write_outputs(config, diagnosis):
  """noise_diagnosis.svg and .json of a report.Diagnosis in config.output_dir;
  ValueError naming an existing file unless config.overwrite."""
  profile, advice = diagnosis.profile, diagnosis.recommendation
  os.makedirs(config.output_dir, exist_ok=True)
  paths = [os.path.join(config.output_dir, name) for name in (PICTURE_NAME, JSON_NAME)]
  for path in paths:
    if os.path.exists(path) and not config.overwrite:
      raise ValueError(f'{path} exists; pass --overwrite to replace it')
  with open(paths[0], 'w') as svg_file:
    svg_file.write(picture.svg(profile, f'{config.input}: {report.summary_line(profile)}'))
  with open(paths[1], 'w') as json_file:
    json.dump({'input': config.input, 'noise': profile.to_dict(), 'kind': advice.kind,
               'recommended_flags': list(advice.flags)}, json_file, indent=2)
  return paths


def main(argv):
  with apps.configured(argv, config_lib.DiagnoseConfig) as config:
    diagnosis = diagnose(config)
    print(diagnosis)
    if config.output_dir:
      print(f'wrote {", ".join(write_outputs(config, diagnosis))}')


def run(argv=None):
  """The program: defines the flags and runs main."""
  config_flags.define_flags(config_lib.DiagnoseConfig, flags.FLAGS)
  apps.start(main, __doc__, argv)
