"""Single-image methods learning in a short run on the suite's images
(images.write_image_data): the short runs of tests/training/test_single_image.py."""

import tensorflow as tf

from n2n import config as config_lib
from n2n.evaluation import eval_data
from n2n.evaluation import held_out
from n2n.evaluation import scoring
from n2n.evaluation import summaries
from n2n.inference import whole_images
from n2n.model import unet
from n2n.training import distribute
from n2n.training import train_lib

# Half the paper's width: a step costs a third to a quarter of one at 48
# (docs/bench/network_width.json); the spread of the outcome over seeds, at these
# settings and the ones before: test_single_image.py, by its bounds.
NETWORK_WIDTH = 24
SHORT_RUNS = {
    # Its loss sees half-size sub-images: a quarter of the pixels of a crop.
    'neighbor2neighbor': {'batch_size': 8, 'train_steps': 150},
    # The loss sees only the masked pixels: with a larger share than Noise2Void's
    # 0.2% it still needs more steps than a method whose loss sees every pixel.
    'blind_spot': {'batch_size': 4, 'blind_spot_fraction': 0.05, 'train_steps': 400},
}


def short_run(image_folder, records, model_dir, method, seed, steps, network_width):
  """Trains `method` on the records' images (Gaussian sigma 25, crops of 64, float32)
  and scores it on image_folder at sigma 25 against the same network untrained.

  Returns:
    {'gain_db': PSNR over the noisy input's, 'held_out_ratio': the reference-free
    score (held_out.make_held_out_loss) trained over untrained, on the same images,
    noise and draws, 'losses': the training loss logged every 10 steps}.
  """
  config = config_lib.train_config(
      train_data=str(records / '*.tfrecord'), val_data=str(image_folder),
      model_dir=str(model_dir), method=method, noise='gaussian', noise_range=(25.0, 25.0),
      eval_noise_levels=(25.0,), crop_size=64,
      steps_per_loop=10, log_every=10, eval_every=1000, checkpoint_every=1000, learning_rate=1e-3,
      rampdown_fraction=0.0, precision='float32', seed=seed, network_width=network_width,
      **{**SHORT_RUNS[method], 'train_steps': steps})
  run = train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  scores, = run.results
  # The same initial weights as the run's (its seed, width and network settings).
  untrained = whole_images.make_denoiser(unet.build_unet(
      3, seed=seed, width=network_width, downsampling=config.model.downsampling,
      top_skip=config.model.top_skip))
  before, = scoring.evaluate(untrained, eval_data.load_eval_images(str(image_folder)),
                             'gaussian', (25.0,), seed,
                             held_out_loss=held_out.make_held_out_loss(method, untrained, seed))
  train_events = tf.io.gfile.glob(str(model_dir / 'train' / 'events.out.tfevents.*'))
  losses = [float(tf.make_ndarray(value.tensor)) for path in train_events
            for event in summaries.read_events(path) for value in event.summary.value
            if value.tag == 'loss']
  return {'gain_db': scores.mean_psnr - scores.mean_input_psnr,
          'held_out_ratio': scores.mean_held_out_loss / before.mean_held_out_loss,
          'losses': losses}
