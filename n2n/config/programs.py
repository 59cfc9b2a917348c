"""What validate.py, export.py and diagnose.py take (denoise.py's: denoise.py)."""

import dataclasses

from n2n.config.corruption import NOISES
from n2n import shipped
from n2n.config.run import PRECISIONS
from n2n.settings import check_settings
from n2n.settings import setting

@dataclasses.dataclass(frozen=True)
class ValidateConfig:
  """What validate.py scores, and how; empty values mean "as the run was trained"."""
  checkpoint: str = setting('', 'A model_dir (newest checkpoint), a checkpoint prefix '
                            '(model_dir/ckpt-N), or the name of a model n2n ships '
                            f'({", ".join(shipped.MODELS)}).', required=True)
  data: str = setting('', "A folder of images or a TFRecord glob. Empty: the run's --val_data.")
  noise: str = setting('', "Corruption. Empty: the run's --noise (none: --data is a folder "
                       'of scenes of real noisy captures).', choices=('',) + NOISES)
  noise_levels: tuple[float, ...] = setting((), "Comma list of levels. Empty: the run's "
                                            '--eval_noise_levels.')
  seed: int = setting(-1, "Seed of the fixed evaluation noise. -1: the run's --seed, as the "
                      'evaluation during training uses.', minimum=-1)
  precision: str = setting('run', "Inference precision. run: the run's --precision resolved on "
                           'this machine, as the evaluation during training uses.',
                           choices=('run',) + PRECISIONS)
  output_dir: str = setting('', 'Write denoised PNGs and metrics.json here.')
  max_images: int = setting(0, 'Score at most this many images (0: all).', minimum=0)
  follow: bool = setting(False, 'Sidecar mode: score every new checkpoint of the run in '
                         '--checkpoint (a model_dir) as it appears, write the same TensorBoard '
                         "eval summaries training writes, stop once the run's last step is "
                         'scored.')
  follow_timeout: int = setting(3600, 'With --follow: give up after this many seconds without '
                                'a new checkpoint.', minimum=1)
  tta: bool = setting(False, 'Score with test-time augmentation, as denoise.py --tta: the mean '
                      'of the outputs of the 8 flips and rotations (none added where the '
                      'run\'s inference scheme averages them already).')

  def __post_init__(self):
    object.__setattr__(self, 'noise_levels', tuple(float(v) for v in self.noise_levels))
    check_settings(self)
    if self.tta and self.follow:
      raise ValueError('--tta scores one checkpoint; --follow writes the same curves as training, '
                       'which evaluates without it')


@dataclasses.dataclass(frozen=True)
class ExportConfig:
  """What export.py writes."""
  model: str = setting('', "A run's model_dir (newest checkpoint), a checkpoint prefix, or "
                       f'the name of a model n2n ships ({", ".join(shipped.MODELS)}).',
                       required=True)
  output: str = setting('', 'Folder for the SavedModel, config.json and README.md.',
                        required=True)
  overwrite: bool = setting(False, 'Replace an existing export in --output.')
  tflite: bool = setting(False, 'Also write model.tflite (TensorFlow Lite, builtin ops only, '
                         'any image size) beside the SavedModel.')
  onnx: bool = setting(False, 'Also write model.onnx (any image size, padding inside the graph) '
                       'beside the SavedModel; needs the optional export extras: pip install -r '
                       'requirements-export.txt.')
  bioimageio: bool = setting(False, 'Also write bioimageio_model.zip, a BioImage Model Zoo package '
                             '(spec 0.5, ONNX and TensorFlow SavedModel weights) for '
                             'Fiji/deepImageJ, napari, QuPath and ilastik, validated and tested '
                             'before it is kept; needs the optional export extras.')
  bioimageio_authors: tuple[str, ...] = setting(('n2n user',), 'Authors named in the package.')
  bioimageio_license: str = setting('CC-BY-4.0', 'SPDX licence of the packaged weights.')

  def __post_init__(self):
    check_settings(self)


@dataclasses.dataclass(frozen=True)
class DiagnoseConfig:
  """What diagnose.py reads and writes."""
  input: str = setting('', 'Noisy images: a file, a folder (recursive), a glob, or a '
                       'comma-separated list of these; with --scenes, one folder of scenes.',
                       required=True)
  scenes: bool = setting(False, '--input is a folder of scenes (folders of two or more '
                         'captures of one view, as datasets/make_tfrecords.py --scenes takes): '
                         'the noise is measured from the first two captures of each, on every '
                         'pixel. Without it, each file is one noisy image and the noise is '
                         'estimated from its flattest patches.')
  white_level: float = setting(0.0, "The pixel value that is 1.0, in the files' own units (e.g. "
                               '4095 for 12-bit data in 16-bit files). 0: the type\'s full range.',
                               minimum=0.0)
  max_images: int = setting(0, 'Diagnose at most this many images or scenes (0: all).',
                            minimum=0)
  output_dir: str = setting('', 'Also write noise_diagnosis.svg (correlation map, level against '
                            'signal) and noise_diagnosis.json here.')
  overwrite: bool = setting(False, 'Replace noise_diagnosis.svg and .json in --output_dir.')

  def __post_init__(self):
    check_settings(self)
