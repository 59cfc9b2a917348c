import numpy as np

from n2n.inference import whole_images
from n2n.inference import tiling
from n2n.model import unet


def test_pad_to_multiple_reflects_and_crops_back():
  image = np.arange(5 * 7 * 1, dtype=np.float32).reshape(5, 7, 1)
  padded = tiling.pad_to_multiple(image)
  assert padded.shape == (32, 32, 1)
  np.testing.assert_array_equal(padded[:5, :7], image)
  np.testing.assert_array_equal(padded[5, :7], image[3])  # reflection, edge not repeated


def test_denoiser_takes_any_size_and_returns_it():
  denoise = whole_images.make_denoiser(unet.build_unet(1, seed=0))
  for height, width in ((5, 7), (33, 64), (40, 31)):
    output = denoise(np.random.default_rng(0).uniform(size=(height, width, 1)).astype(np.float32))
    assert output.shape == (height, width, 1) and output.dtype == np.float32
