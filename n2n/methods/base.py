"""What every training method declares, and what the rest of n2n may ask of it.

A method is how a batch of training crops becomes (input, target[, mask]) and
what the loss adds to the per-pixel error. Its declaration here (name,
settings, the checks and choices its settings need, how the trained network is
run) imports no TensorFlow: n2n/config reads it, and reading a config.json
stays cheap. Its tensors (training examples, loss term, held-out loss) are its
pipeline, n2n/pipelines/. The trainer, evaluation, export and the BioImage
Model Zoo package ask the registries and never compare method names.
"""

import abc
import dataclasses


@dataclasses.dataclass(frozen=True)
class InferenceScheme:
  """How a trained network is run on whole images (n2n/inference/schemes.py).

  Attributes:
    stride: pixel-shuffle stride: the network denoises the stride x stride
      sub-images and they are put back together (1: the image as it is).
    refinement_passes: AP-BSN's random-replacing refinement (R3): passes of
      the network at stride 1 over the denoised image with a share of its
      pixels put back to their noisy values, averaged (0: none).
    refinement_share: the share of pixels put back in each pass.
    orientations: 1, or 8: the mean of the whole scheme over the image's 8
      flips and rotations in its plane, each turned back (test-time
      augmentation inside the scheme, so every export runs it too).
  """
  stride: int = 1
  refinement_passes: int = 0
  refinement_share: float = 0.16
  orientations: int = 1

  @property
  def plain(self):
    """True when the network runs on the image as it is, once."""
    return self.stride == 1 and not self.refinement_passes and self.orientations == 1


class Method(abc.ABC):
  """One training method. Subclasses set the attributes and override what differs.

  Attributes:
    name: the --method value.
    summary: what it trains from, one sentence of --method's help.
    settings_class: a frozen dataclass of settings.setting(...) fields, or
      None; its fields become flags named flag_prefix + field name and live in
      the run's config as config.method.<name>.
    flag_prefix: see settings_class.
    single_image: True when it trains from one noisy capture of each scene
      (synthetic noise: fixed captures; scenes: every capture), so a folder of
      noisy images without references can score it (its held-out loss).
    crop_multiple: training crops must be a multiple of this (the U-Net pools
      five times: 32; half-size sub-images: 64).
    citations: ((text, doi), ...) of the method's own papers, beside
      Noise2Noise's for the network.
    network_note: the network settings its paper recommends, for help texts.
    masks_targets: its elements carry a 'target_mask' (the masked L2 loss).
    volumes: it trains the 3D network on stacks (--spatial_dims=3).
    images: it trains the 2D network on images (False: stacks only).
    clean_stacks: it trains the 3D network on clean stacks with synthetic
      noise (make_tfrecords.py --clean_stacks).
    frames_per_crop_plane: planes (frames) of a stack each plane of a training
      crop takes (2: a movie's neighbouring frames make one input and one
      target plane).
  """
  name = ''
  summary = ''
  settings_class = None
  flag_prefix = ''
  single_image = False
  crop_multiple = 32
  citations = ()
  network_note = ''
  masks_targets = False
  volumes = False
  images = True
  clean_stacks = False
  frames_per_crop_plane = 1
  # What the method assumes of the noise, for train.py's warning where the diagnosis
  # says otherwise (noise_advice).
  noise_assumption = 'noise independent from pixel to pixel'

  def settings(self, config):
    """This method's settings object of a TrainConfig, or None."""
    if self.settings_class is None:
      return None
    return getattr(config.method, self.name)

  @abc.abstractmethod
  def describe(self, config):
    """What an export's README and BMZ page say the model was trained as."""

  def resolve_loss(self, loss, noise_loss):
    """The loss the run trains with.

    Args:
      loss: --loss as given ('auto' or a name).
      noise_loss: the corruption's own loss ('l2' for real captures).

    Returns:
      The resolved loss name. Raises ValueError where the method cannot take it.
    """
    return noise_loss if loss == 'auto' else loss

  def resolve_captures(self, noise_captures):
    """--noise_captures for synthetic noise as the method uses it (0: fresh noise)."""
    return noise_captures

  def check(self, config):
    """Refuses settings the method cannot train with: ValueError, one line.

    config is the TrainConfig being built, resolved or not (TrainConfig.resolved()):
    its loss may still be 'auto' and its noise_captures 0; it is checked again
    once resolved.
    """

  def depth_factor(self, config):
    """3D: how many times the crop's depth exceeds the network input's (crop depths
    are multiples of this times the z pools' multiple)."""
    return 1

  def check_data_kinds(self, kinds):
    """Refuses training data of kinds ('images', 'scenes', 'noisy_images') it cannot use."""

  def examples_per_crop(self, config):
    """Training examples its pipeline makes of each crop (the loss is their mean)."""
    return 1

  def inference_scheme(self, config):
    """The InferenceScheme validation, denoising and every export run the
    trained network with; the plain one unless the method trains otherwise."""
    return InferenceScheme()

  def defaults_for_noise(self, config, kind):
    """{flag: value} for the settings this method leaves to the diagnosis of
    the training data (n2n/diagnosis/report.py kind: 'independent',
    'correlated', 'rows', 'columns' or 'rows and columns') where the user
    gave none; {} when it has none."""
    return {}

  def check_resolved(self, config):
    """Refuses, in one line (ValueError), a config the diagnosis left without
    what the method needs (train.py calls it before writing the run's config)."""

  def defaults_for_profile(self, config, profile):
    """{flag: value} for the settings this method reads from the training
    data's noise profile itself (n2n/diagnosis/noise_statistics.py
    NoiseProfile; None where it was not diagnosed) where the user gave none;
    {} when it has none."""
    return {}

  def noise_advice(self, config, kind):
    """What train.py's start-up warning advises where the training data's noise
    (n2n/diagnosis/report.py kind) breaks an assumption the run makes as set,
    in one sentence; None where it makes none."""
    return None
