"""One U-Net training step's time in a fresh process: what bench/onednn_kernels.py,
bench/network_width.py and bench/in_plane_levels.py compare (forward, gradients, Adam
update; float32 unless asked for mixed bfloat16, random data).

TensorFlow reads TF_ENABLE_ONEDNN_OPTS once when it loads, so every setting runs in a
process of its own.
"""

import json
import os
import subprocess
import sys

from bench import REPO_ROOT
from n2n import config  # pylint: disable=g-import-not-at-top,g-bad-import-order  (no TensorFlow)

# What each fresh process runs: argv[1] spatial dims, argv[2] the batch shape,
# argv[3] timed steps, argv[4] the network's width, argv[5] its in-plane levels (3D),
# argv[6] its precision (a Keras policy); prints the median step in seconds.
_STEP_TIMER = """
import json, statistics, sys, time
import tensorflow as tf
from n2n.model import unet
dims, shape, steps, width, levels = (int(sys.argv[1]), json.loads(sys.argv[2]),
                                     int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
model = unet.build_unet(channels=shape[-1], precision=sys.argv[6], spatial_dims=dims, seed=1,
                        width=width, xy_conv_levels=levels)
optimizer = tf.keras.optimizers.Adam(1e-4)
batch = tf.random.stateless_uniform(shape, seed=(1, 2))

@tf.function
def step():
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(batch, training=True) - batch) ** 2)
  gradients = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))
  return loss

step().numpy()
times = []
for _ in range(steps):
  started = time.perf_counter()
  step().numpy()
  times.append(time.perf_counter() - started)
print(statistics.median(times))
"""


def step_seconds(onednn, dims, shape, steps, width=config.PAPER_NETWORK_WIDTH,
                 xy_conv_levels=0, precision='float32'):
  """Median training-step seconds in a fresh process with oneDNN on or off, for the
  U-Net of that encoder width (the default: the paper's), in 3D with that many
  in-plane levels (--xy_conv_levels), computing in precision ('float32' or
  'mixed_bfloat16': 16-bit compute, float32 weights and loss)."""
  environment = dict(os.environ, TF_ENABLE_ONEDNN_OPTS='1' if onednn else '0',
                     TF_CPP_MIN_LOG_LEVEL='2')
  # From the checkout's root, where `python -c` finds this checkout's n2n first.
  result = subprocess.run([sys.executable, '-c', _STEP_TIMER, str(dims),
                           json.dumps(list(shape)), str(steps), str(width),
                           str(xy_conv_levels), precision],
                          capture_output=True, text=True, env=environment, check=False,
                          cwd=REPO_ROOT)
  if result.returncode:
    raise RuntimeError(result.stderr.strip().splitlines()[-1])
  return float(result.stdout.strip().splitlines()[-1])
