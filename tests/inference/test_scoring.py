import numpy as np

from n2n.evaluation import scoring as evaluation


def test_pad_to_multiple_reflects_and_crops_back():
  image = np.arange(5 * 7 * 1, dtype=np.float32).reshape(5, 7, 1)
  padded = evaluation.pad_to_multiple(image)
  assert padded.shape == (32, 32, 1)
  np.testing.assert_array_equal(padded[:5, :7], image)
  np.testing.assert_array_equal(padded[5, :7], image[3])  # reflection, edge not repeated


def test_evaluate_is_deterministic_and_scores_identity_as_input():
  rng = np.random.default_rng(0)
  images = [('a', rng.integers(0, 256, (40, 33, 3), dtype=np.uint8)),
            ('b', rng.integers(0, 256, (32, 64, 3), dtype=np.uint8))]
  identity = lambda noisy: noisy
  first = evaluation.evaluate(identity, images, 'gaussian', [25.0, 10.0], seed=0, keep_images=1)
  again = evaluation.evaluate(identity, images, 'gaussian', [25.0, 10.0], seed=0)
  for level in (25.0, 10.0):
    assert [row['psnr'] for row in first[level]] == [row['psnr'] for row in again[level]]
  row = first[25.0][0]
  assert 'denoised' in row and 'denoised' not in first[25.0][1]
  # The identity "denoiser" scores close to the input; clipping makes it slightly better.
  assert 0.0 <= row['psnr'] - row['input_psnr'] < 1.0
  assert abs(row['input_psnr'] - 20.17) < 0.3
  mean_psnr, mean_input = evaluation.mean_psnrs(first[10.0])
  assert mean_input > evaluation.mean_psnrs(first[25.0])[1]


def test_format_level():
  assert evaluation.format_level(25.0) == '25' and evaluation.format_level(0.5) == '0.5'
