"""bench/portable_unet.py is n2n's network: build_unet's weights, loaded into it by
layer name, give the same output for the same input, in 2D and 3D."""

import numpy as np
import pytest

from bench import portable_unet
from n2n.model import unet


def _weights_by_layer(model):
  return {layer.name: layer.get_weights() for layer in model.layers if layer.get_weights()}


@pytest.mark.parametrize('spatial_dims, z_pools, shape', [
    (2, 3, (2, 64, 96, 1)),
    (3, 3, (1, 16, 64, 32, 1)),
    (3, 1, (1, 4, 32, 64, 1)),
])
def test_the_portable_unet_maps_inputs_as_build_unet_does_with_its_weights(spatial_dims, z_pools,
                                                                          shape):
  ours = unet.build_unet(channels=1, spatial_dims=spatial_dims, z_pools=z_pools, width=8, seed=3)
  portable = portable_unet.build(channels=1, spatial_dims=spatial_dims, z_pools=z_pools, width=8,
                                 seed=5)
  theirs = _weights_by_layer(ours)
  assert set(theirs) == set(_weights_by_layer(portable))
  for name, weights in theirs.items():
    portable.get_layer(name).set_weights(weights)
  # Every weight is used: a layer the portable network skipped or wired elsewhere
  # would leave its output unchanged by the weights or change it differently.
  inputs = np.random.default_rng(0).uniform(0, 1, shape).astype(np.float32)
  expected = ours.predict(inputs, verbose=0)
  found = portable.predict(inputs, verbose=0)
  assert found.shape == expected.shape == shape
  np.testing.assert_allclose(found, expected, rtol=0, atol=2e-5)
  # Not a trivial agreement: the output depends on the weights loaded.
  fresh = portable_unet.build(channels=1, spatial_dims=spatial_dims, z_pools=z_pools, width=8,
                              seed=5).predict(inputs, verbose=0)
  assert np.max(np.abs(fresh - expected)) > 1e-3


def test_the_portable_unet_restates_build_unets_widths_and_initializers():
  for width in (1, 8, 24, 48, 50):
    assert portable_unet.layer_widths(width) == unet.layer_widths(width)
  assert portable_unet.STAGES == unet.STAGES
  ours, portable = (build(channels=1, spatial_dims=3, width=48, seed=7)
                    for build in (unet.build_unet, portable_unet.build))
  # Same seeds per layer, same initializer: the same initial weights.
  for name, weights in _weights_by_layer(ours).items():
    for mine, theirs in zip(portable.get_layer(name).get_weights(), weights):
      np.testing.assert_array_equal(mine, theirs)


def test_the_portable_unet_computes_each_layer_in_build_unets_precision():
  for spatial_dims in (2, 3):
    ours, portable = (build(channels=1, spatial_dims=spatial_dims, width=8,
                            precision='mixed_bfloat16')
                      for build in (unet.build_unet, portable_unet.build))
    policies = lambda model: {layer.name: layer.dtype_policy.name for layer in model.layers}
    assert policies(portable) == policies(ours)
    assert policies(ours)['enc_conv0'] == 'mixed_bfloat16'
    assert policies(ours)['uncentre'] == 'float32'
