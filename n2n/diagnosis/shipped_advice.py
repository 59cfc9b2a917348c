"""Which shipped model to offer for the data at hand, as is or fine-tuned, by what real
data measured.

Each Measured holds one row of docs/diagnosis.md's table "Shipped models on real noise":
bench/real_dev.py on ../shared/data/real_dev (docs/bench/real_dev_*.json, commit and host
in each), the shipped model as is, the method diagnose recommends trained from scratch on
the noisy images alone, and the same started from the model (--init_from), each at the
budget the table gives. The advice follows the best of the three.
"""

import dataclasses

from n2n import shipped

# The least a training path must score above the model as is for the advice to put
# training first: a choice, not a measurement. The figures are one seed each, and the
# model as is needs no training time.
TRAINING_MARGIN_DB = 0.25


@dataclasses.dataclass(frozen=True)
class Measured:
  """One kind of data's real-noise figures (mean PSNR in dB over a real_dev set).

  Attributes:
    model: the shipped model's name.
    real_set: the real_dev set measured ('sidd24', 'w2s80').
    method: the recommended --method the training figures are of.
    as_is_db: the model as is (with as_is_flags).
    scratch_db: the recommended method from scratch, train_steps steps.
    tuned_db: that method started from the model (tune_flags), train_steps steps; None
      where not measured.
    train_steps: the training runs' steps (crop 128, batch 8).
    as_is_flags: denoise.py flags of the as-is figure, e.g. ('--tta',).
    tune_flags: train.py flags of the fine-tuned figure beyond the method's and
      --init_from, e.g. ('--normalization=percentile',); its learning rate is
      --init_from's default (config.run.FINE_TUNING_LEARNING_RATE), which a test holds
      to the tuned figure's.
  """
  model: str
  real_set: str
  method: str
  as_is_db: float
  scratch_db: float
  tuned_db: object
  train_steps: int
  as_is_flags: tuple = ()
  tune_flags: tuple = ()

  @property
  def trains_from_model(self):
    """Whether training from the model (fine-tuning) measured above training from scratch."""
    return self.tuned_db is not None and self.tuned_db > self.scratch_db

  @property
  def as_is_first(self):
    """Whether the model as is comes first: no training path measured TRAINING_MARGIN_DB
    or more above it."""
    best_training = max(self.scratch_db, self.tuned_db if self.trains_from_model else -1.0)
    return self.as_is_db + TRAINING_MARGIN_DB > best_training

  def figures(self):
    """'on sidd24 (real smartphone photographs): as is 28.24 dB, ...' in words."""
    tuned = ('' if self.tuned_db is None else
             f', fine-tuned from it {self.tuned_db:.2f}')
    return (f'measured on real_dev {self.real_set}: the model as is {self.as_is_db:.2f} dB'
            f'{tuned}, {self.method} from scratch {self.scratch_db:.2f} '
            f'({self.train_steps} steps; docs/diagnosis.md)')

  def applies_to(self, flags):
    """Whether the training figures are of the method these train.py flags recommend."""
    return f'--method={self.method}' in flags


# 8-bit colour photographs: camera_srgb on real_dev's 24 smartphone photographs (sidd24):
# with --tta, and Recorrupted-to-Recorrupted from scratch, in docs/bench/real_dev_baseline.json;
# fine-tuned by it at 1e-4 in docs/bench/real_dev_sidd24_tune.json
# (tests/diagnosis/test_shipped_advice.py holds these to the JSON).
PHOTOGRAPHS = Measured(shipped.CAMERA_SRGB, 'sidd24', 'recorrupted', as_is_db=28.244,
                       scratch_db=25.419, tuned_db=25.696, train_steps=1200,
                       as_is_flags=('--tta',))


# Noisier colour photographs: camera_srgb_high_iso on the same 24 (docs/bench/
# real_dev_sidd24_camera_models.json, with --tta); the training figures are the same runs'.
# Not fine-tuned from it: fine-tuning camera_srgb with recorruptions lost 2.5 dB of it as is.
PHOTOGRAPHS_HIGH_ISO = Measured(shipped.CAMERA_SRGB_HIGH_ISO, 'sidd24', 'recorrupted',
                                as_is_db=33.948, scratch_db=25.419, tuned_db=None,
                                train_steps=1200, as_is_flags=('--tta',))

# The noise level (diagnose's, one photograph: standard deviation on 0-1, mean over level
# bins and channels) from which camera_srgb_high_iso is offered instead of camera_srgb.
# Of sidd24's photographs diagnose reads (11 of 24; bench/camera_level_rule.py,
# docs/bench/camera_level_rule.json), it scored above camera_srgb on all 9 read at 0.035 or
# more (+0.9 to +7.4 dB) and below it on the 2 read at 0.028 and 0.032 (-1.5, -1.0);
# on the simulator's profiles calibrated to two DSLR benchmarks, quieter still, it
# scored below it too. The threshold lies between; two images below it are few.
HIGH_ISO_LEVEL = 0.034


# One-channel fluorescence micrographs: the fluorescence model on real_dev's 80 widefield
# fields (w2s80, scored after a per-image affine fit): with --tta in
# docs/bench/real_dev_w2s80_fluorescence.json; Neighbor2Neighbor from scratch in
# docs/bench/real_dev_w2s80_recommended.json; from the model's weights, at 1e-4 and with its
# percentile normalisation, in docs/bench/real_dev_w2s80_tune.json.
MICROSCOPY = Measured(shipped.FLUORESCENCE, 'w2s80', 'neighbor2neighbor', as_is_db=32.98,
                      scratch_db=32.135, tuned_db=33.091, train_steps=1200,
                      as_is_flags=('--tta',),
                      tune_flags=('--normalization=percentile',))


def takes(measured, pixel_types):
  """Whether measured's model takes images of all pixel_types (numpy dtype names; None:
  not known, taken as fitting): a model refuses the others (shipped.refusal)."""
  return pixel_types is None or set(pixel_types) <= set(shipped.MODELS[measured.model].pixel_types)


def measured_for(profile, kind, pixel_types):
  """The Measured whose model fits single noisy images like profile's, or None.

  Args:
    profile: the images' NoiseProfile.
    kind: its kind (report.kind_of): 'independent', 'correlated', ...
    pixel_types: the images' numpy dtype names (None: not known); a model is offered only
      for pixel types it takes.
  """
  if profile.source != 'single':
    return None
  # A camera's processed photographs: their noise is correlated over a pixel or two.
  if profile.channels == 3 and kind == 'correlated':
    noisier = profile.level >= HIGH_ISO_LEVEL
    chosen = PHOTOGRAPHS_HIGH_ISO if noisier else PHOTOGRAPHS
    return chosen if takes(chosen, pixel_types) else None
  # A fluorescence camera's counts: one channel, noise independent from pixel to pixel
  # whose variance rises with the signal as shot x signal + read describes.
  shot_noise = all(miss is None for miss in profile.fit_misses()) and all(
      shot > 0 for shot, _ in profile.fit)
  if profile.channels == 1 and kind == 'independent' and shot_noise:
    return MICROSCOPY if takes(MICROSCOPY, pixel_types) else None
  return None


def as_is_command(measured):
  """'denoise.py --model=camera_srgb --tta ...'."""
  return ' '.join(('denoise.py', f'--model={measured.model}') + measured.as_is_flags) + ' ...'


def tune_flags(measured):
  """The flags fine-tuning adds before the method's: --init_from and tune_flags."""
  return (f'--init_from={measured.model}',) + measured.tune_flags
