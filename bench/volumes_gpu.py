"""Issue 31's goal on a GPU: the 3D network against 2D per plane at equal training time.

  KERAS_BACKEND=jax python -m bench.volumes_gpu --seconds=35 --z_steps=2,4 --output=gpu.json
  python -m bench.volumes_gpu --render=docs/bench/volumes_gpu_h200.json   # its table

The results page's Noise2Noise pairs rows ("Volumes and movies", bench/results/volumes.py)
trained on 2 CPU cores for minutes; there the 3D network fell behind 2D per plane. This
asks whether it does on a GPU, where the same minutes hold tens of times more steps.
TensorFlow and its CUDA libraries are too large to travel to the GPU machines this
workplace lends (bench/README.md), so this runs the same network on Keras' JAX backend:
bench/portable_unet.py, which tests/test_portable_unet.py checks against build_unet.

The same as the results page's rows:
- data: the phantom (n2n/data/phantom.py) at each z step (phantom.at_z_step of the
  table's spec: the same objects in the same depth), train seeds 0-5, held-out seeds
  100 and 101, counts over WHITE_LEVEL (600);
- 3D: crops of 16 x 64 x 64, batch 2, learning rate 5e-4 (configs/cpu/volumes_3d.cfg);
  2D per plane: 64 x 64 crops of the training volumes' xy planes, batch 16, 1e-3
  (volumes_2d.cfg); either acquisition the input, the other the target; flips and
  90-degree turns in xy, flips in z (3D);
- the trainer's Adam (beta 0.9, 0.99, epsilon 1e-8), L2 loss, and the learning rate's
  cosine-squared ramp to zero over the last 30% of the steps (n2n/training/schedules.py);
- score: PSNR of each held-out volume's first acquisition, denoised, against its
  reference (peak: the reference's range).

What differs, and why:
- the training loop: crops are cut from the volumes in GPU memory inside the jitted
  step, STEPS_PER_CALL steps per call (tf.data on the host would starve a GPU step of
  a few milliseconds);
- precision: mixed bfloat16 (what --precision=auto picks on GPUs of compute
  capability 8.0 and up) unless --precision says otherwise;
- 3D denoising: tiles of TILE_DEPTH planes, whole in y and x, every TILE_DEPTH / 2
  planes, each plane taken from the tile where it lies furthest from a cut
  (denoise.py blends tiles as deep as the training crops); 2D: plane by plane;
- not carried over from the trainer: its float32 sums of bias and 3D filter gradients
  (n2n/model/conv.py; here Keras' own layers on JAX), its crop sampling (several crops
  per scene, one input acquisition each, shuffled; here every crop drawn on its own),
  and its stop on a loss that is not finite;
- equal time: one calibration per network (CALIBRATION_CALLS timed calls after the
  compiling one) sets each run's steps to fill --seconds; the JSON records each run's
  measured training seconds (compiling excluded) beside its steps.
"""

import argparse
import concurrent.futures
import dataclasses
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time

import numpy as np  # pylint: disable=g-import-not-at-top

from bench import json_output  # pylint: disable=g-import-not-at-top
from n2n.data import phantom  # pylint: disable=g-import-not-at-top

WHITE_LEVEL = 600.0
TABLE_SPEC = phantom.PhantomSpec()
TRAIN_SEEDS = tuple(range(6))
TEST_SEEDS = (100, 101)
# Per network: (crop depth, crop size, batch, peak learning rate), as the CPU configs.
RECIPES = {3: (16, 64, 2, 5e-4), 2: (1, 64, 16, 1e-3)}
Z_POOLS = 3
BETA_1, BETA_2, EPSILON = 0.9, 0.99, 1e-8
# The trainer's adaptive clipping (n2n/training/gradient_clipping.py, its defaults): a
# step's gradient norm at most CLIP_MULTIPLE times the running average of clipped norms.
CLIP_MULTIPLE, CLIP_AVERAGE_DECAY = 4.0, 0.99
RAMPDOWN_FRACTION = 0.3
STEPS_PER_CALL = 100
CALIBRATION_CALLS = 3
TILE_DEPTH = 32
PLANES_PER_CALL = 32


def parse_args(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--seconds', type=float, default=50.0,
                      help='training time of every run, compiling excluded')
  parser.add_argument('--z_steps', default='2,4,1', help='phantom z steps, in order of running')
  parser.add_argument('--dims', default='3,2', help='which networks: 3 and/or 2')
  parser.add_argument('--network_width', type=int, default=48)
  parser.add_argument('--crop_size', type=int, default=RECIPES[2][1],
                      help='crops\' height and width, both networks (a multiple of 32)')
  parser.add_argument('--batch_size_2d', type=int, default=RECIPES[2][2])
  parser.add_argument('--seed', type=int, default=0, help='initial weights and crops')
  parser.add_argument('--initial_weights', default='',
                      help='an .npz of initial weights (keys LAYER/INDEX, as '
                      'bench/volumes_gpu_loop_check.py writes them from build_unet) instead of '
                      'the initializers\' draw: one --dims only')
  parser.add_argument('--precision', default='mixed_bfloat16')
  parser.add_argument('--max_steps', type=int, default=0,
                      help='cap on each run\'s steps (0: none; for a smoke run on a CPU)')
  parser.add_argument('--other_3d_rates', default='',
                      help='more 3D runs at these peak learning rates (comma-separated)')
  parser.add_argument('--steps_per_call', type=int, default=STEPS_PER_CALL)
  parser.add_argument('--commit', default='', help='the commit measured (the GPU machine '
                      'has no git history)')
  parser.add_argument('--output', default='')
  parser.add_argument('--render', default='',
                      help='print the markdown table of this JSON result and stop')
  args = parser.parse_args(argv)
  args.z_steps = [float(step) for step in args.z_steps.split(',')]
  args.dims = [int(dims) for dims in args.dims.split(',')]
  args.other_3d_rates = [float(rate) for rate in args.other_3d_rates.split(',') if rate]
  if not set(args.dims) <= {2, 3}:
    parser.error(f'--dims={",".join(map(str, args.dims))}: only 3 and 2')
  if min(args.seconds, args.network_width, args.steps_per_call, args.batch_size_2d) <= 0:
    parser.error('--seconds, --network_width, --steps_per_call and --batch_size_2d must be '
                 'positive')
  if args.initial_weights and len(args.dims) != 1:
    parser.error('--initial_weights: give one --dims (the weights are of one network)')
  if args.crop_size < 32 or args.crop_size % 32 or args.crop_size > TABLE_SPEC.shape[1]:
    parser.error(f'--crop_size={args.crop_size} must be a multiple of 32 up to '
                 f'{TABLE_SPEC.shape[1]} (the phantom\'s planes)')
  if args.initial_weights and not os.path.isfile(args.initial_weights):
    parser.error(f'--initial_weights={args.initial_weights}: no such file')
  args.recipes = {3: RECIPES[3][:1] + (args.crop_size,) + RECIPES[3][2:],
                  2: (1, args.crop_size, args.batch_size_2d, RECIPES[2][3])}
  return args


def _scene(spec_and_seed):
  return phantom.phantom_scene(*spec_and_seed)


def phantom_data(z_step, pad_depth):
  """Train volumes [6, 2, pad_depth, 128, 128] and held-out (noisy [2, pad_depth, 128,
  128], references [2, Z, 128, 128] float64), counts over WHITE_LEVEL, float32, the
  depth Z of the phantom at z_step zero-padded to pad_depth (so that every z step
  runs through the same compiled functions); and Z."""
  spec = phantom.at_z_step(TABLE_SPEC, z_step)
  depth = spec.shape[0]
  # Spawned, not forked: JAX's threads are running by now.
  with concurrent.futures.ProcessPoolExecutor(
      min(8, os.cpu_count() or 1), mp_context=multiprocessing.get_context('spawn')) as pool:
    scenes = list(pool.map(_scene, [(spec, seed) for seed in TRAIN_SEEDS + TEST_SEEDS]))
  pad = lambda array: np.pad(array.astype(np.float32) / WHITE_LEVEL,
                             [(0, 0)] * (array.ndim - 3) + [(0, pad_depth - depth), (0, 0),
                                                            (0, 0)])
  train = np.stack([pad(captures) for captures, _ in scenes[:len(TRAIN_SEEDS)]])
  held_out = scenes[len(TRAIN_SEEDS):]
  noisy = np.stack([pad(captures[0]) for captures, _ in held_out])
  references = [reference / WHITE_LEVEL for _, reference in held_out]
  return train, noisy, references, depth, spec


def psnr(estimate, reference):
  """PSNR in dB against the reference's own range (its max - min), float64
  (bench/results/volumes.py's score)."""
  error = np.mean((np.asarray(estimate, np.float64) - reference) ** 2)
  return float(10 * np.log10(float(reference.max() - reference.min()) ** 2 / error))


def tile_starts(depth, tile_depth):
  """Start planes of tiles tile_depth deep every tile_depth / 2 planes covering depth
  planes (the last flush with the end), and for each plane the tile it is taken from:
  the one where it lies furthest from the tile's cut faces (not the volume's ends).
  ValueError where the volume is shallower than a tile (a tile would reach past it)."""
  if depth < tile_depth:
    raise ValueError(f'{depth} planes: shallower than a tile of {tile_depth}')
  if depth == tile_depth:
    return [0], np.zeros(depth, int)
  step = tile_depth // 2
  starts = list(range(0, depth - tile_depth, step)) + [depth - tile_depth]
  chosen = np.zeros(depth, int)
  for plane in range(depth):
    def margin(index):
      start = starts[index]
      low = plane - start if start > 0 else tile_depth
      high = start + tile_depth - 1 - plane if start + tile_depth < depth else tile_depth
      return min(low, high) if start <= plane < start + tile_depth else -1
    chosen[plane] = max(range(len(starts)), key=margin)
  return starts, chosen


def learning_rate(run):
  """A run's peak learning rate (runs from before it was recorded ran at their recipe's)."""
  return run.get('learning_rate', RECIPES[run['dims']][3])


def against_planes(results):
  """[(run, 3D - 2D dB)] for every run of a result: a 3D run's mean PSNR less that of
  the 2D run of its z step; None for 2D runs and for 3D runs without one."""
  plane_runs = {run['z_step']: run for run in results['runs'] if run['dims'] == 2}
  return [(run, run['mean_psnr'] - plane_runs[run['z_step']]['mean_psnr']
           if run['dims'] == 3 and run['z_step'] in plane_runs else None)
          for run in results['runs']]


def table(results):
  """The markdown table of a result: a row per run, 3D runs against the 2D run of
  their z step, and under it what trained them (not n2n's trainer) and where."""
  lines = ['| z step (planes) | network | peak learning rate | steps | training s | '
           'PSNR per held-out volume | mean | 3D - 2D |', '|---|---|---|---|---|---|---|---|']
  for run, against in against_planes(results):
    difference = '' if against is None else f'{against:+.2f}'
    network = '3D' if run['dims'] == 3 else '2D per plane'
    lines.append(f'| {run["z_step"]:g} ({run["planes"]}) | {network} | {learning_rate(run):g} | '
                 f'{run["steps"]} | {run["training_seconds"]:.1f} | '
                 + ', '.join(f'{value:.2f}' for value in run['psnr'])
                 + f' | {run["mean_psnr"]:.2f} | {difference} |')
  noisy = ', '.join(f'{run["z_step"]:g}: {statistics.mean(run["input_psnr"]):.2f}'
                    for run in results['runs'] if run['dims'] == 2)
  return '\n'.join(lines) + (
      '\n\nA JAX re-implementation of the U-Net (`bench/portable_unet.py`) trained by '
      '`bench/volumes_gpu.py`\'s own loop, not n2n\'s trainer; '
      f'{results["device"]}, JAX {results["jax"]}, Keras {results["keras"]}, '
      f'{results["precision"]}, width {results["network_width"]}, commit {results["commit"]}; '
      f'noisy input (dB, by z step) {noisy}.')


def main(argv):
  args = parse_args(argv)
  if args.render:
    with open(args.render) as source:
      print(table(json.load(source)))
    return
  # Keras picks its backend when first imported: here, not at this module's import
  # (the suite imports it for tile_starts, with TensorFlow's Keras already loaded).
  os.environ.setdefault('KERAS_BACKEND', 'jax')
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import keras  # pylint: disable=g-import-not-at-top
  from bench import portable_unet  # pylint: disable=g-import-not-at-top
  if keras.backend.backend() != 'jax':
    sys.exit(f'bench/volumes_gpu.py: KERAS_BACKEND={keras.backend.backend()}; it needs jax')

  device = jax.devices()[0]
  results = {
      'what': 'Noise2Noise pairs on the phantom: the 3D network against 2D per plane at '
              'equal training time, through Keras on JAX (bench/volumes_gpu.py)',
      'commit': args.commit,
      'device': f'{device.platform}: {device.device_kind}',
      'host': platform.node(), 'python': platform.python_version(),
      'jax': jax.__version__, 'keras': keras.__version__,
      'precision': args.precision, 'network_width': args.network_width,
      'seconds_asked': args.seconds, 'steps_per_call': args.steps_per_call,
      'recipes': {str(dims): dict(zip(('crop_depth', 'crop_size', 'batch', 'learning_rate'),
                                      recipe)) for dims, recipe in args.recipes.items()},
      'seed': args.seed, 'initial_weights': args.initial_weights,
      'white_level': WHITE_LEVEL, 'train_seeds': list(TRAIN_SEEDS),
      'test_seeds': list(TEST_SEEDS), 'calibration': {}, 'runs': []}
  print(json.dumps({key: results[key] for key in ('device', 'jax', 'keras', 'precision')}),
        flush=True)
  pad_depth = max(phantom.at_z_step(TABLE_SPEC, step).shape[0] for step in args.z_steps)
  pad_depth = max(pad_depth, TILE_DEPTH)
  height, width = TABLE_SPEC.shape[1:]

  def crop_pair(key, volumes, depth, dims):
    """One (input, target) [D, S, S, 1] (3D) or [S, S, 1] (2D) pair, augmented."""
    crop_depth, size, _, _ = args.recipes[dims]
    keys = jax.random.split(key, 10)
    volume = jax.random.randint(keys[0], (), 0, volumes.shape[0])
    z = jax.random.randint(keys[1], (), 0, depth - crop_depth + 1)
    y = jax.random.randint(keys[2], (), 0, height - size + 1)
    x = jax.random.randint(keys[3], (), 0, width - size + 1)
    pair = jax.lax.dynamic_slice(volumes, (volume, 0, z, y, x),
                                 (1, 2, crop_depth, size, size))[0]
    flip = lambda index: jax.random.bernoulli(keys[4 + index])
    pair = jnp.where(flip(0), pair[::-1], pair)  # which acquisition is the input
    pair = jnp.where(flip(1), jnp.swapaxes(pair, 2, 3), pair)  # with the flips: 90-degree turns
    pair = jnp.where(flip(2), pair[:, :, ::-1], pair)
    pair = jnp.where(flip(3), pair[:, :, :, ::-1], pair)
    if dims == 3:
      pair = jnp.where(flip(4), pair[:, ::-1], pair)
    else:
      pair = pair[:, 0]
    return pair[0][..., None], pair[1][..., None]

  def make_network(dims):
    model = portable_unet.build(channels=1, spatial_dims=dims, width=args.network_width,
                                z_pools=Z_POOLS, precision=args.precision, seed=args.seed)
    if args.initial_weights:
      with np.load(args.initial_weights) as stored:
        for layer in model.layers:
          count = len(layer.get_weights())
          if count:
            layer.set_weights([stored[f'{layer.name}/{index}'] for index in range(count)])
    initial = [jnp.array(variable.value) for variable in model.trainable_variables]
    fixed = [variable.value for variable in model.non_trainable_variables]
    _, _, batch, _ = args.recipes[dims]

    def loss_of(trainable, inputs, targets):
      outputs, _ = model.stateless_call(trainable, fixed, inputs)
      return jnp.mean(jnp.square(outputs - targets))

    gradient_of = jax.value_and_grad(loss_of)

    def step(state, _, volumes, depth, peak, total):
      trainable, first, second, count, key, average = state
      key, batch_key = jax.random.split(key)
      inputs, targets = jax.vmap(lambda k: crop_pair(k, volumes, depth, dims))(
          jax.random.split(batch_key, batch))
      loss, gradients = gradient_of(trainable, inputs, targets)
      norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in gradients))
      threshold = jnp.where(average > 0, CLIP_MULTIPLE * average, jnp.inf)
      finite = jnp.isfinite(norm)
      factor = jnp.where(finite & (norm > threshold), threshold / norm, 1.0)
      gradients = [g * factor for g in gradients]
      average = jnp.where(finite, jnp.where(
          average > 0, CLIP_AVERAGE_DECAY * average
          + (1 - CLIP_AVERAGE_DECAY) * jnp.minimum(norm, threshold), norm), average)
      start = total * (1 - RAMPDOWN_FRACTION)
      progress = jnp.clip((count - start) / (total * RAMPDOWN_FRACTION), 0.0, 1.0)
      rate = peak * jnp.square(0.5 + 0.5 * jnp.cos(jnp.pi * progress))
      count = count + 1
      first = [BETA_1 * m + (1 - BETA_1) * g for m, g in zip(first, gradients)]
      second = [BETA_2 * v + (1 - BETA_2) * g * g for v, g in zip(second, gradients)]
      size = rate * jnp.sqrt(1 - BETA_2 ** count) / (1 - BETA_1 ** count)
      trainable = [w - size * m / (jnp.sqrt(v) + EPSILON)
                   for w, m, v in zip(trainable, first, second)]
      return (trainable, first, second, count, key, average), loss

    @jax.jit
    def train_call(state, volumes, depth, peak, total):
      state, losses = jax.lax.scan(
          lambda carry, item: step(carry, item, volumes, depth, peak, total), state, None,
          length=args.steps_per_call)
      return state, jnp.mean(losses)

    @jax.jit
    def denoise_call(trainable, inputs):
      outputs, _ = model.stateless_call(trainable, fixed, inputs)
      return outputs

    def fresh_state(seed):
      zeros = [jnp.zeros_like(w) for w in initial]
      return ([jnp.array(w) for w in initial], zeros, [jnp.zeros_like(w) for w in initial],
              jnp.float32(0.0), jax.random.PRNGKey(seed), jnp.float32(0.0))

    return train_call, denoise_call, fresh_state

  def denoise(denoise_call, trainable, noisy, depth, dims):
    """noisy [pad_depth, H, W] -> denoised [depth, H, W] float32."""
    if dims == 2:
      outputs = [np.asarray(denoise_call(trainable, noisy[start:start + PLANES_PER_CALL,
                                                          ..., None]))[..., 0]
                 for start in range(0, depth, PLANES_PER_CALL)]
      return np.concatenate(outputs)[:depth]
    # Never deeper than the volume: the planes past it are padding, not context.
    tile_depth = min(TILE_DEPTH, depth)
    starts, chosen = tile_starts(depth, tile_depth)
    tiles = [np.asarray(denoise_call(trainable, noisy[None, start:start + tile_depth, ..., None]))
             [0, ..., 0] for start in starts]
    return np.stack([tiles[chosen[plane]][plane - starts[chosen[plane]]]
                     for plane in range(depth)])

  networks = {dims: make_network(dims) for dims in args.dims}
  for z_step in args.z_steps:
    began = time.time()
    train, noisy, references, depth, spec = phantom_data(z_step, pad_depth)
    volumes = jnp.asarray(train)
    print(f'z step {z_step:g}: {depth} planes, data in {time.time() - began:.1f} s', flush=True)
    input_psnr = [psnr(noisy[index, :depth], reference)
                  for index, reference in enumerate(references)]
    plan = [(dims, args.recipes[dims][3]) for dims in args.dims]
    if 3 in args.dims:
      plan[args.dims.index(3) + 1:args.dims.index(3) + 1] = [(3, rate)
                                                            for rate in args.other_3d_rates]
    for dims, peak in plan:
      train_call, denoise_call, fresh_state = networks[dims]
      key = str(dims)
      if key not in results['calibration']:
        state = fresh_state(args.seed + 1)
        began = time.time()
        state, loss = train_call(state, volumes, depth, peak, 1e9)
        loss.block_until_ready()
        compile_seconds = time.time() - began
        times = []
        for _ in range(CALIBRATION_CALLS):
          began = time.time()
          state, loss = train_call(state, volumes, depth, peak, 1e9)
          loss.block_until_ready()
          times.append(time.time() - began)
        results['calibration'][key] = {
            'first_call_seconds': compile_seconds, 'call_seconds': times,
            'seconds_per_step': statistics.median(times) / args.steps_per_call}
        print(f'{dims}D: compiled in {compile_seconds:.1f} s, '
              f'{1e3 * results["calibration"][key]["seconds_per_step"]:.2f} ms per step',
              flush=True)
      per_step = results['calibration'][key]['seconds_per_step']
      calls = max(1, round(args.seconds / per_step / args.steps_per_call))
      if args.max_steps:
        calls = max(1, min(calls, args.max_steps // args.steps_per_call))
      total = calls * args.steps_per_call
      state = fresh_state(args.seed)
      losses = []
      began = time.time()
      for call in range(calls):
        state, loss = train_call(state, volumes, depth, peak, float(total))
        if call % max(1, calls // 10) == 0 or call == calls - 1:
          losses.append([(call + 1) * args.steps_per_call, float(loss)])
      jax.block_until_ready(state)
      seconds = time.time() - began
      outputs = [denoise(denoise_call, state[0], noisy[index], depth, dims)
                 for index in range(len(references))]
      scores = [psnr(output, reference) for output, reference in zip(outputs, references)]
      run = {'z_step': z_step, 'planes': depth, 'dims': dims, 'learning_rate': peak,
             'steps': total,
             'training_seconds': seconds, 'psnr': scores, 'mean_psnr': statistics.mean(scores),
             'input_psnr': input_psnr, 'losses': losses,
             'spec': dataclasses.asdict(spec)}
      results['runs'].append(run)
      json_output.write_results(args.output, results)
      print(f'z step {z_step:g} {dims}D at {peak:g}: {run["mean_psnr"]:.2f} dB ({total} steps, '
            f'{seconds:.1f} s; input {statistics.mean(input_psnr):.2f} dB)', flush=True)
  for run, against in against_planes(results):
    if against is not None:
      print(f'z step {run["z_step"]:g}, 3D at {run["learning_rate"]:g}: 3D - 2D {against:+.2f} dB',
            flush=True)


if __name__ == '__main__':
  main(sys.argv[1:])
