"""Noise2Noise pairs (Lehtinen et al., ICML 2018): the input and the target are
two independently corrupted copies of one image, or the clean image itself
(--target=clean, the Noise2Clean baseline).

The pairs come from whole pipelines (n2n/pipelines/pairs.py): clean images
corrupted afresh at every step, fixed synthetic captures, two real captures of
a scene, or two acquisitions of a stack or two corruptions of a clean stack.
"""

from n2n.corruptions import catalog
from n2n.methods import base


class Pairs(base.Method):
  name = 'pairs'
  summary = ('input and target are two noisy copies of an image (or the clean one, '
             '--target=clean): a clean image corrupted twice, or two captures of a scene or '
             'acquisitions of a stack.')
  volumes = True
  clean_stacks = True

  def describe(self, config):
    return 'Noise2Noise (noisy targets)' if config.method.target == 'noisy' else 'Noise2Clean'

  def check(self, config):
    captures = config.corruption.noise_captures
    if config.corruption.noise == catalog.NO_NOISE:
      return
    if captures == 1 and config.method.target == 'noisy':
      raise ValueError('--noise_captures=1 leaves one capture of each image: --method=pairs with '
                       '--target=noisy needs 2 or more (or train it with '
                       '--method=neighbor2neighbor or --method=blind_spot)')
    if captures and catalog.get_spec(config.corruption.noise).name == 'bernoulli':
      raise ValueError(f'--noise_captures={captures} is not supported with --noise=bernoulli '
                       '(its loss needs each target\'s kept-pixel mask)')

  def check_data_kinds(self, kinds):
    if kinds == {'noisy_images'}:
      raise ValueError('--method=pairs needs two captures of each scene, but --train_data holds '
                       'single noisy images (datasets/make_tfrecords.py --noisy_images); train '
                       'them with --method=neighbor2neighbor or --method=blind_spot')


METHOD = Pairs()
