"""The training method's section: which method (n2n/methods/), its target and
loss, and each method's own settings, declared in the method's module."""

import dataclasses

from n2n.corruptions import catalog
from n2n.methods import registry as methods_registry
from n2n.settings import check_settings
from n2n.settings import section
from n2n.settings import setting

TARGETS = ('noisy', 'clean')
LOSSES = ('auto', 'l2', 'l1', 'annealed_l0', 'masked_l2')
# The training methods (n2n/methods/registry.py).
METHODS = methods_registry.NAMES


def _check(config):
  check_settings(config)


# The method's own settings, then a section per method with settings of its own,
# derived from the methods' declarations (methods_registry.METHODS): a method adds
# its settings by declaring them, config.method.blind_spot.fraction being
# --blind_spot_fraction.
MethodConfig = dataclasses.make_dataclass('MethodConfig', [
    ('name', str, setting('pairs', methods_registry.help_text(), choices=METHODS,
                          flag='method')),
    ('target', str, setting('noisy', 'noisy: Noise2Noise (independent corruption); clean: the '
                            'Noise2Clean baseline.', choices=TARGETS)),
    ('loss', str, setting('auto', "Loss. auto: the paper's loss for --noise (l2 for gaussian "
                          'and poisson, l1 for text, annealed_l0 for impulse, masked_l2 for '
                          'bernoulli; masked_l2 for --method=blind_spot).', choices=LOSSES)),
] + [(method.name, method.settings_class, section(method.settings_class, method.flag_prefix))
     for method in methods_registry.METHODS if method.settings_class is not None],
    frozen=True, namespace={
        '__module__': __name__,
        '__post_init__': _check,
        '__doc__': 'The training method (--method), its target and loss, and each method\'s '
                   'own settings.'})


def default_loss(noise):
  """The loss --loss=auto means for a corruption (l2 for real captures)."""
  return 'l2' if noise == catalog.NO_NOISE else catalog.get_spec(noise).default_loss
