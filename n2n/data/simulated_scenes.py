"""Scene folders of simulated captures, made from clean photographs.

For trying the real-data path (datasets/make_tfrecords.py --scenes, train.py
--noise=none) without a camera, and for its tests. Three pipelines:
- sensor: Gaussian noise of signal-dependent variance, gain * x +
  read_variance (shot plus read noise), on the photograph's own values,
  clipped and quantised to 16 bits; independent from pixel to pixel;
- camera: the photograph unprocessed to raw, mosaicked, given raw shot and
  read noise and processed forward again (n2n/data/camera_pipeline.py): 8-bit
  sRGB whose noise is correlated over several pixels, as real photographs';
- microscope: sCMOS-like 16-bit counts, Poisson-Gaussian plus row and column
  noise (n2n/data/microscope_noise.py), grayscale.
None of n2n's synthetic corruptions produces these, so a model that denoises
them has learnt from the noisy files alone.
"""

import dataclasses

import os

import numpy as np

from n2n.data import camera_pipeline
from n2n.data import file_lists
from n2n.data import microscope_noise
from n2n.data import native_images
from n2n.data import rgb_images

PIPELINES = ('sensor', 'camera', 'microscope')


@dataclasses.dataclass(frozen=True)
class CameraOptions:
  """The camera pipeline's choices; each scene draws its own camera
  (camera_pipeline.random_settings) with them.

  Attributes:
    shot_range: (low, high) raw shot-noise variance, drawn log-uniformly per
      scene (Brooks et al.'s range is 0.0001-0.012).
    sharpen: unsharp-mask amount (0: none).
    jpeg_quality: 1-100, or 0 for no JPEG.
    chroma_blur, luma_blur: chroma and luma noise reduction, pixels
      (camera_pipeline.CameraSettings; 0: none).
    optics_blur: the lens's blur of the scene, pixels (the same; 0: none).
  """
  shot_range: tuple = (0.001, 0.01)
  sharpen: float = 0.0
  jpeg_quality: int = 0
  chroma_blur: float = 0.0
  luma_blur: float = 0.0
  optics_blur: float = 0.0


def sensor_noise(clean, gain, read_variance, rng):
  """One noisy capture of a clean image.

  Args:
    clean: [H, W, C] float in [0, 1].
    gain: variance per unit signal (shot noise).
    read_variance: signal-independent variance (read noise).
    rng: numpy Generator.

  Returns:
    [H, W, C] float32 in [0, 1].
  """
  sigma = np.sqrt(gain * clean + read_variance)
  return np.clip(clean + sigma * rng.standard_normal(clean.shape), 0.0, 1.0).astype(np.float32)


def to_uint16(values):
  """[0, 1] float -> uint16 (rounded)."""
  return np.round(np.clip(values, 0.0, 1.0) * 65535).astype(np.uint16)


def _sensor_pages(clean, count, gain, read_variance, reference, rng):
  pages = [to_uint16(sensor_noise(clean, gain, read_variance, rng)) for _ in range(count)]
  return pages + ([to_uint16(clean)] if reference else [])


def _camera_pages(clean, count, options, reference, rng):
  settings = camera_pipeline.random_settings(
      rng, options.shot_range, sharpen=options.sharpen, jpeg_quality=options.jpeg_quality,
      chroma_blur=options.chroma_blur, luma_blur=options.luma_blur,
      optics_blur=options.optics_blur)
  captures, rendering = camera_pipeline.captures_of(camera_pipeline.even_crop(clean), settings,
                                                    count, rng)
  return captures + ([rendering] if reference else [])


def _microscope_pages(clean, count, settings, reference, rng):
  luma = clean[:, :, 0]
  pages = [microscope_noise.capture(luma, settings, rng) for _ in range(count)]
  return pages + ([microscope_noise.reference(luma, settings)] if reference else [])


def write_scenes(clean_dir, output_dir, captures=2, gain=0.01, read_variance=0.0004,
                 grayscale=False, reference=True, crop=0, seed=0, pipeline='sensor',
                 camera=CameraOptions(), microscope=microscope_noise.ScmosSettings()):
  """Writes one scene folder per clean image: `captures` noisy PNGs
  (capture_00.png, ...) and, if asked, reference.png.

  Args:
    clean_dir: folder of clean photographs (any format n2n reads).
    output_dir: where the scene folders go, one per photograph, named after it.
    captures: noisy captures per scene.
    gain, read_variance: the sensor pipeline's noise (see sensor_noise).
    grayscale: write single-channel captures (luma); the microscope pipeline
      always does, the camera pipeline never.
    reference: write reference.png: the clean image (sensor), the noise-free
      rendering of the same camera (camera: demosaicked, processed, no JPEG), or
      the expected counts (microscope).
    crop: if > 0, keep only the top-left crop x crop pixels (small test scenes).
    seed: seed of the noise (and of each scene's camera).
    pipeline: 'sensor' (16-bit), 'camera' (8-bit sRGB) or 'microscope' (16-bit
      grayscale counts).
    camera: CameraOptions of the camera pipeline.
    microscope: microscope_noise.ScmosSettings of the microscope pipeline.

  Returns:
    list of the scene folders written.
  """
  if pipeline not in PIPELINES:
    raise ValueError(f'pipeline {pipeline!r} is not one of {", ".join(PIPELINES)}')
  if pipeline == 'camera' and grayscale:
    raise ValueError('the camera pipeline makes RGB photographs (a Bayer sensor); grayscale '
                     'applies to the sensor pipeline')
  written = []
  rng = np.random.default_rng(seed)
  for path in file_lists.files_below(clean_dir):
    try:
      image = native_images.read_pages(path)[0]
    except rgb_images.ImageDecodeError:
      continue
    colour, _ = native_images.split_alpha(image)
    clean = native_images.to_unit_range(colour)
    if clean.shape[2] == 1 and (pipeline == 'camera' or not grayscale):
      clean = np.repeat(clean, 3, axis=2)
    if (grayscale or pipeline == 'microscope') and clean.shape[2] == 3:
      clean = rgb_images.convert_channels(clean, 1)
    if crop:
      clean = clean[:crop, :crop]
    if pipeline == 'sensor':
      pages = _sensor_pages(clean, captures, gain, read_variance, reference, rng)
    elif pipeline == 'camera':
      pages = _camera_pages(clean, captures, camera, reference, rng)
    else:
      pages = _microscope_pages(clean, captures, microscope, reference, rng)
    folder = os.path.join(output_dir, os.path.splitext(os.path.basename(path))[0])
    os.makedirs(folder, exist_ok=True)
    names = [f'capture_{index:02d}.png' for index in range(captures)] + ['reference.png'][:reference]
    for name, page in zip(names, pages):
      if page.ndim == 3 and page.shape[2] == 1:
        page = page[:, :, 0]
      with open(os.path.join(folder, name), 'wb') as output:
        output.write(native_images.encode_pages([page], 'png'))
    written.append(folder)
  return written
