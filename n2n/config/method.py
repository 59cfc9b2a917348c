"""The training method's section: which method (n2n/methods/), its target and
loss, and each method's own settings, declared in the method's module."""

import dataclasses

from n2n.corruptions import catalog
from n2n.methods import blind_spot as blind_spot_method
from n2n.methods import neighbor2neighbor as neighbor2neighbor_method
from n2n.methods import recorrupted as recorrupted_method
from n2n.methods import registry as methods_registry
from n2n.settings import check_settings
from n2n.settings import section
from n2n.settings import setting

TARGETS = ('noisy', 'clean')
LOSSES = ('auto', 'l2', 'l1', 'annealed_l0', 'masked_l2')
# The training methods (n2n/methods/registry.py).
METHODS = methods_registry.NAMES


@dataclasses.dataclass(frozen=True)
class MethodConfig:
  """The training method (--method), its target and loss, and each method's own
  settings: config.method.blind_spot.fraction is --blind_spot_fraction. A
  method with settings of its own has a section here (a test holds the two
  lists equal)."""
  name: str = setting('pairs', methods_registry.help_text(), choices=METHODS, flag='method')
  target: str = setting('noisy', 'noisy: Noise2Noise (independent corruption); clean: the '
                        'Noise2Clean baseline.', choices=TARGETS)
  loss: str = setting('auto', "Loss. auto: the paper's loss for --noise (l2 for gaussian and "
                      'poisson, l1 for text, annealed_l0 for impulse, masked_l2 for '
                      'bernoulli; masked_l2 for --method=blind_spot).', choices=LOSSES)
  neighbor2neighbor: neighbor2neighbor_method.Settings = section(
      neighbor2neighbor_method.Settings, neighbor2neighbor_method.METHOD.flag_prefix)
  blind_spot: blind_spot_method.Settings = section(blind_spot_method.Settings,
                                                   blind_spot_method.METHOD.flag_prefix)
  recorrupted: recorrupted_method.Settings = section(recorrupted_method.Settings,
                                                     recorrupted_method.METHOD.flag_prefix)

  def __post_init__(self):
    check_settings(self)


def default_loss(noise):
  """The loss --loss=auto means for a corruption (l2 for real captures)."""
  return 'l2' if noise == catalog.NO_NOISE else catalog.get_spec(noise).default_loss
