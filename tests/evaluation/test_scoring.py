import numpy as np
import tensorflow as tf

from n2n.evaluation import scoring


def test_evaluate_is_deterministic_and_scores_identity_as_input():
  rng = np.random.default_rng(0)
  images = [('a', rng.integers(0, 256, (40, 33, 3), dtype=np.uint8)),
            ('b', rng.integers(0, 256, (32, 64, 3), dtype=np.uint8))]
  identity = lambda noisy: noisy
  first = scoring.evaluate(identity, images, 'gaussian', [25.0, 10.0], seed=0, keep_images=1)
  again = scoring.evaluate(identity, images, 'gaussian', [25.0, 10.0], seed=0)
  assert [scores.level for scores in first] == [25.0, 10.0]
  assert [scores.tag for scores in first] == ['gaussian_25', 'gaussian_10']
  for ours, theirs in zip(first, again):
    assert [image.psnr for image in ours.images] == [image.psnr for image in theirs.images]
  kept, dropped = first[0].images
  assert kept.name == 'a' and kept.denoised is not None and dropped.denoised is None
  # The clean image travels with the score: no matching by index.
  np.testing.assert_array_equal(kept.clean * 255.0, images[0][1])
  # The identity "denoiser" scores close to the input; clipping makes it slightly better.
  assert 0.0 <= kept.psnr - kept.input_psnr < 1.0
  assert abs(kept.input_psnr - 20.17) < 0.3
  assert first[1].mean_input_psnr > first[0].mean_input_psnr
  assert first[0].mean_psnr == np.mean([kept.psnr, dropped.psnr])


def test_format_level_and_results():
  assert scoring.format_level(25.0) == '25' and scoring.format_level(0.5) == '0.5'
  scores = scoring.LevelScores('text', 0.25, (scoring.ImageScore('a.png', 30.0, 20.0),
                                              scoring.ImageScore('b.png', 32.0, 22.0)))
  assert scoring.format_results([scores]) == 'text 0.25: 31.00 dB (input 21.00 dB)'


def test_evaluation_noise_is_drawn_on_the_cpu():
  # GPUs may run float32 matmuls in TF32, too coarse for the Poisson CDF tables.
  corrupt = scoring.make_corruption('poisson')
  graph = corrupt.get_concrete_function(
      tf.TensorSpec([None, None, 3], tf.float32), tf.TensorSpec([], tf.float32),
      tf.TensorSpec([2], tf.int32)).graph
  # The table matmuls sit in branch functions; the ops that call them carry the device.
  placed = [op for op in graph.get_operations() if op.type not in ('Placeholder', 'Identity')]
  assert any(op.type in ('If', 'StatelessIf') for op in placed)
  assert all('CPU:0' in op.device for op in placed), [op.name for op in placed
                                                      if 'CPU:0' not in op.device]


def test_scores_carry_each_images_colour_error_and_what_the_noise_explains():
  rng = np.random.default_rng(0)
  images = [('a', rng.integers(60, 200, (64, 64, 3), dtype=np.uint8))]
  identity, = scoring.evaluate(lambda noisy: noisy, images, 'gaussian', [25.0], seed=0)
  kept = identity.images[0]
  # The noisy input's own mean offset is within what the noise explains.
  assert all(abs(error) <= explained for error, explained
             in zip(kept.colour_error, kept.colour_error_explained))
  greener, = scoring.evaluate(lambda noisy: noisy + np.array([0.0, 0.05, 0.0], np.float32),
                              images, 'gaussian', [25.0], seed=0)
  assert abs(greener.images[0].colour_error[1] - kept.colour_error[1] - 0.05) < 1e-3
  assert scoring.colour_shift_warnings([identity], 0.03) == []
  warning, = scoring.colour_shift_warnings([greener], 0.03)
  assert warning.startswith('a (gaussian_25): denoised colours moved (R ')
  assert 'G +0.05' in warning
  # A shift under the floor, or a floor of 0, warns about nothing.
  assert scoring.colour_shift_warnings([greener], 0.06) == []
  assert scoring.colour_shift_warnings([greener], 0.0) == []


def _volume_psnr(estimate, reference):
  """dB over every voxel of [D, H, W, C] arrays on the [0, 1] scale, float64."""
  error = np.mean((np.asarray(estimate, np.float64) - np.asarray(reference, np.float64)) ** 2)
  return 10.0 * np.log10(1.0 / error)


def test_a_volume_scene_is_scored_over_every_voxel_and_shows_its_middle_plane():
  from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(3)
  step = 1.0 / 600.0
  reference = np.round(rng.uniform(0.2, 0.8, (5, 8, 12, 1)) / step) * step
  # The noise grows with the plane, so a mean of per-plane PSNRs (or any one
  # plane's) differs from the PSNR over every voxel by more than the bound below.
  sigma = np.array([0.01, 0.02, 0.05, 0.1, 0.2]).reshape(5, 1, 1, 1)
  first = (reference + sigma * rng.normal(size=reference.shape)).astype(np.float32)
  second = (reference + sigma * rng.normal(size=reference.shape)).astype(np.float32)
  scene = eval_data.EvalScene('stack', first, second, reference.astype(np.float32), step)
  # Not the identity: clipping and rounding to the step both act on the output.
  denoise = lambda volume: 1.1 * volume - 0.03
  [scores] = scoring.evaluate_scenes(denoise, [scene], keep_images=1)
  [score] = scores.images
  output = 1.1 * first.astype(np.float64) - 0.03
  quantized = np.round(np.clip(output, 0.0, 1.0) / step) * step
  assert abs(score.psnr - _volume_psnr(quantized, reference)) < 1e-3
  per_plane = np.mean([_volume_psnr(quantized[index], reference[index]) for index in range(5)])
  assert abs(per_plane - _volume_psnr(quantized, reference)) > 1.0
  assert abs(score.input_psnr - _volume_psnr(first, reference)) < 1e-3
  assert abs(score.noisy_target_mse - np.mean((output - second) ** 2)) < 1e-6
  np.testing.assert_allclose(score.colour_error, [np.mean(np.clip(output, 0, 1) - reference)],
                             atol=1e-6)
  # The comparison strip's images: the middle xy plane (index 2 of 5) of each.
  np.testing.assert_array_equal(score.noisy, first[2])
  np.testing.assert_allclose(score.denoised, output[2], atol=1e-6)
  np.testing.assert_array_equal(score.clean, reference[2].astype(np.float32))
