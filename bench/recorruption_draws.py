"""Recorrupted-to-Recorrupted's inference as the paper gives it (Pang et al., CVPR 2021):
the mean of the network's outputs over T recorrupted inputs y + alpha * n_t, each n_t
drawn like the run's noise model, in place of the network on y alone.

The network trained on inputs y + alpha * n, noisier than y by a factor
sqrt(1 + alpha^2) in level; the mean over draws feeds it inputs of that level and
averages the draws' noise away, at T times the cost. n2n's --method=recorrupted denoises
y as it is (with the mean over the 8 orientations for correlated noise): this module
measures the other way (bench/camera_calibration.py --variants=recorruption_draws=T), and
is not part of the product.
"""

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n import hardware
from n2n.data import normalization
from n2n.inference import loading
from n2n.methods import registry
from n2n.pipelines import recorrupted as recorrupted_pipeline

# denoise.py's default tiling (n2n/config/denoise.py).
_TILING = config_lib.DenoiseConfig(model='-', input='-', output_dir='-')


def draws_denoiser(model_dir, draws, precision, seed=0):
  """fn([H, W, 3] uint8 photograph) -> [H, W, 3] uint8: the mean of a recorrupted run's
  network (through its inference scheme, as saved in model_dir's config.json) over
  `draws` recorruptions y + alpha * n_t of the photograph's network values (0-1), n_t
  drawn from the run's recorruption model (its noise model at its level scale) with
  stateless seeds (seed, t)."""
  network = loading.from_checkpoint(model_dir, hardware.resolve_precision(precision))
  config = network.serving.run_config
  method = registry.get('recorrupted')
  model = method.recorruption_model(config)
  alpha = method.settings(config).alpha
  denoise = loading.image_function(network, _TILING.tile_size, _TILING.tile_overlap,
                                   _TILING.batch_tiles)
  rule = network.serving.rule

  def denoise_photograph(image):
    pixel_map = normalization.image_map(image, rule, 255.0)
    values = normalization.normalize(image, pixel_map)
    total = np.zeros(values.shape, np.float64)
    for draw in range(draws):
      noise = recorrupted_pipeline.draw(tf.constant(values[np.newaxis]), model,
                                        tf.constant([seed, draw], tf.int32))[0].numpy()
      total += denoise(values + alpha * noise)
    pixels = normalization.denormalize((total / draws).astype(np.float32), pixel_map)
    return np.clip(np.round(pixels), 0, 255).astype(np.uint8)

  return denoise_photograph
