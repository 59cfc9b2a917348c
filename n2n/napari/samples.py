"""The plugin's sample data (File > Open Sample > n2n), made procedurally: the
demo photographs live in the repository's datasets/, not in the installed
package, and nothing is downloaded.

Each function returns napari layer data: [(data, layer settings, 'image'), ...].
"""

import numpy as np

from n2n.data import phantom

PICTURE_SIZE = 512
# The paper's Gaussian level for the picture's noise, in 0-255 units.
PICTURE_SIGMA = 25.0
SEED = 2026


def clean_picture(size=PICTURE_SIZE):
  """A landscape drawn from shapes: [size, size, 3] float64 in [0.2, 0.8].

  Sky with a sun, two hills, a house with a roof, a door and windows, a fence
  and a striped field: flat areas (where the noise shows), edges and fine
  texture (what a denoiser must keep). The colours keep 0.2 from black and
  white, so that sigma-25 noise seldom clips: the diagnosis leaves clipped
  patches out (clipped noise is narrower than the noise), and a picture that
  clipped everywhere left it too few patches to tell the noise's kind.
  """
  y, x = np.mgrid[0:size, 0:size] / size
  image = np.empty((size, size, 3))
  image[:] = np.stack([0.35 + 0.4 * y, 0.55 + 0.35 * y, 0.95 - 0.1 * y], axis=-1)

  def paint(mask, colour):
    image[mask] = colour

  paint((x - 0.78) ** 2 + (y - 0.2) ** 2 < 0.08 ** 2, (1.0, 0.85, 0.3))
  paint(y > 0.62 + 0.06 * np.sin(6.0 * x), (0.35, 0.6, 0.25))
  paint(y > 0.72 + 0.04 * np.cos(9.0 * x + 1.0), (0.25, 0.5, 0.2))
  field = y > 0.86
  stripes = (np.floor(x * 32 + y * 8) % 2).astype(bool)
  paint(field & stripes, (0.6, 0.45, 0.2))
  paint(field & ~stripes, (0.7, 0.55, 0.3))
  house = (x > 0.18) & (x < 0.46) & (y > 0.5) & (y < 0.8)
  paint(house, (0.85, 0.8, 0.7))
  paint((y > 0.32) & (y <= 0.5) & (np.abs(x - 0.32) < (y - 0.32) * 0.85), (0.6, 0.15, 0.12))
  paint((x > 0.29) & (x < 0.35) & (y > 0.66) & (y < 0.8), (0.35, 0.2, 0.1))
  for left in (0.21, 0.38):
    paint((x > left) & (x < left + 0.05) & (y > 0.56) & (y < 0.62), (0.3, 0.45, 0.65))
  posts = (np.floor(x * 40) % 3 == 0) & (y > 0.74) & (y < 0.84) & (x > 0.5)
  paint(posts | ((x > 0.5) & (np.abs(y - 0.77) < 0.006)), (0.95, 0.95, 0.9))
  return 0.2 + 0.6 * image


def noisy_picture():
  """The landscape with Gaussian noise of sigma 25 (0-255 units), 8-bit RGB."""
  rng = np.random.default_rng(SEED)
  clean = clean_picture() * 255.0
  noisy = clean + rng.normal(0.0, PICTURE_SIGMA, clean.shape)
  pixels = np.clip(np.round(noisy), 0, 255).astype(np.uint8)
  return [(pixels, {'name': 'noisy picture', 'rgb': True,
                    'metadata': {'n2n_sample': 'procedural landscape, Gaussian sigma 25/255'}},
           'image')]


def noisy_stack():
  """Two noisy acquisitions of one fluorescence-like phantom (n2n/data/phantom.py):
  uint16 [Z, Y, X] 16-bit camera counts, z sampled 4 times coarser than x and y
  (the layers' scale says so)."""
  spec = phantom.PhantomSpec()
  captures, _ = phantom.phantom_scene(spec, SEED, acquisitions=2)
  settings = {'scale': (spec.z_spacing, 1.0, 1.0), 'colormap': 'gray',
              'metadata': {'n2n_sample': 'procedural phantom (n2n.data.phantom)'}}
  return [(capture, {**settings, 'name': f'noisy stack {index + 1}',
                     'visible': index == 0}, 'image')
          for index, capture in enumerate(captures)]
