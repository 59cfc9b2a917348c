"""denoise.py's library: find the user's noisy files, denoise each page, write
it back in its own format, bit depth and channel layout.

Channels: an RGB model denoises a grayscale image as three equal channels and
returns their mean; a grayscale model denoises each channel of a colour image
on its own. An alpha channel is passed through untouched.
"""

import dataclasses
import os

from absl import logging
import numpy as np
import tensorflow as tf

from n2n.data import file_lists
from n2n.data import native_images
from n2n.data import ome_zarr
from n2n.data import normalization
from n2n.diagnosis import noise_statistics
from n2n.diagnosis import report as diagnosis_report


@dataclasses.dataclass(frozen=True)
class Job:
  """One input file, where its output goes, and in which format family."""
  source: str
  destination: str
  family: str


# Job.family of an OME-Zarr input (denoised chunk by chunk: n2n/inference/chunked_volumes.py).
ZARR_FAMILY = 'zarr'


def find_inputs(spec):
  """(path, path relative to its input root) of every file named by --input.

  Raises:
    ValueError: a part names nothing.
  """
  found = []
  for part in (part.strip() for part in spec.split(',')):
    if not part:
      continue
    part = os.path.expanduser(part)
    if ome_zarr.is_ome_zarr(part):
      found.append((part.rstrip('/'), os.path.basename(part.rstrip('/'))))
    elif tf.io.gfile.isdir(part):
      found += [(path, os.path.relpath(path, part)) for path in _units_below(part)]
    elif tf.io.gfile.exists(part):
      found.append((part, os.path.basename(part)))
    else:
      matched = sorted(path for path in tf.io.gfile.glob(part) if not tf.io.gfile.isdir(path))
      if not matched:
        raise ValueError(f'--input: nothing matches {part!r}')
      found += [(path, os.path.basename(path)) for path in matched]
  if not found:
    raise ValueError('--input names no file')
  return found


def _units_below(folder):
  """Every file below folder, except that an OME-Zarr folder (*.zarr) is one
  input, not the chunk files inside it."""
  marker = ome_zarr.SUFFIX + os.sep
  units = set()
  for path in file_lists.files_below(folder):
    inside = path.find(marker)
    units.add(path if inside < 0 else path[:inside + len(ome_zarr.SUFFIX)])
  return sorted(units)


def plan_jobs(inputs, output_dir, output_format, overwrite):
  """Jobs for every input, every destination decided before any work.

  Raises:
    ValueError: two inputs would be written to one output (naming both), or,
      unless overwrite, the output folder lies inside a folder given as input.
  """
  output_dir = os.path.abspath(os.path.expanduser(output_dir))
  jobs = []
  sources_by_destination = {}
  for path, relative in inputs:
    source = os.path.abspath(path)
    # The folder the input was found in: outputs there would be read as inputs next time.
    root = source[:-len(relative)].rstrip(os.sep) or os.sep
    if not overwrite and os.path.commonpath([output_dir, root]) == root:
      raise ValueError(f'--output_dir={output_dir!r} is inside the input folder {root!r}; '
                       'choose another folder or pass --overwrite')
    if ome_zarr.is_ome_zarr(path):
      # An OME-Zarr stays one, under its own name, whatever --format says.
      family, destination = ZARR_FAMILY, os.path.join(output_dir, relative)
    else:
      family = native_images.output_family(path, output_format)
      destination = os.path.join(output_dir, os.path.splitext(relative)[0] +
                                 native_images.output_suffix(family))
    # a.jpg and a.png both become a.png: one would silently replace the other.
    earlier = sources_by_destination.setdefault(destination, path)
    if earlier != path:
      raise ValueError(f'--input: {earlier} and {path} would both be written to {destination}; '
                       'move or rename one of them (nothing was written)')
    jobs.append(Job(path, destination, family))
  return jobs


def values_by_map(pixels, pixel_map):
  """(pixels [...] as float32 network values by a normalization.PixelMap, and
  back: fn(denoised values) -> pixels' dtype, rounded and clipped)."""
  return (normalization.normalize(pixels, pixel_map),
          lambda denoised: native_images.in_dtype_of(
              normalization.denormalize(denoised, pixel_map), pixels))


def values_by_white_level(pixels, white_level):
  """(pixels [...] as float32 network values, 1.0 at white_level (None: the
  dtype's range), and back: fn(denoised values) -> pixels' dtype and range)."""
  return (native_images.to_unit_range(pixels, white_level),
          lambda denoised: native_images.like_input(denoised, pixels, white_level))


def network_values(pixels, serving, white_level_override=0.0):
  """pixels as the run's network sees them, and the way back.

  Args:
    pixels: an image [H, W, C] or a volume [D, H, W, C], any image dtype.
    serving, white_level_override: as denoise_page.

  Returns:
    (values: pixels' shape float32; back: fn(denoised values, float32 of that
    shape) -> pixels' shape and dtype). With --normalization=percentile one map
    for the whole array, never per tile: the tiles of an image share it.

  Raises:
    ValueError: a shipped model is served and refuses pixels (Serving.check_pixels).
  """
  serving.check_pixels(pixels)
  if serving.rule.per_image and pixels.dtype != bool:
    return values_by_map(pixels, normalization.percentile_map(pixels, serving.rule))
  return values_by_white_level(pixels,
                               serving.white_level_for(pixels.dtype, white_level_override))


def through_network(values, denoise, model_channels):
  """values [..., C] float32 denoised by a network of model_channels (1 or 3):
  as they are where C matches, a 1-channel image through a 3-channel network
  (repeated, then averaged back), else channel by channel."""
  if values.shape[-1] == model_channels:
    return denoise(values)
  if model_channels == 3:
    return denoise(np.repeat(values, 3, axis=-1)).mean(axis=-1, keepdims=True)
  return np.concatenate([denoise(values[..., [channel]])
                         for channel in range(values.shape[-1])], axis=-1)


def network_passes(channels, model_channels):
  """How many times through_network runs the network over values of `channels` channels."""
  return 1 if channels == model_channels or model_channels == 3 else channels


def denoise_page(page, denoise, serving, colour_channels=None, white_level_override=0.0):
  """Denoises one page, keeping its dtype, shape, alpha and extra samples.

  Args:
    page: [H, W] or [H, W, C] array of any image dtype.
    denoise: fn([H, W, serving.channels] float32) -> same shape float32.
    serving: serving.Serving of the network (serving.without_run(channels)
      for a bare one): pixels of the training data's dtype are scaled by its
      white level (Serving.white_level_for), or, with
      --normalization=percentile, every page by its own percentiles.
    colour_channels: leading colour channels, where the file says
      (native_images.split_alpha); the rest pass through untouched.
    white_level_override: --white_level (0: the run's).

  Returns:
    Array of page's shape and dtype.
  """
  colour, alpha = native_images.split_alpha(page, colour_channels)
  colour, non_finite = _fill_non_finite(colour)
  values, back = network_values(colour, serving, white_level_override)
  denoised = through_network(values, denoise, serving.channels)
  # Dropped before converting back: on a 24-MP image each float copy is 288 MB.
  del values
  result = back(denoised)
  del denoised
  if non_finite is not None:
    result[non_finite.mask] = non_finite.values
  if alpha is not None:
    result = np.concatenate([result, alpha], axis=2)
  return result.reshape(page.shape)


@dataclasses.dataclass(frozen=True)
class NonFinite:
  """Where a float page held NaN or infinity, and those values."""
  mask: np.ndarray
  values: np.ndarray


def _fill_non_finite(colour):
  """(colour with NaN and inf replaced by the median of the finite values,
  NonFinite or None). Astronomy and microscopy files mark missing pixels with
  NaN; they are put back unchanged in the output, and the rest is denoised.

  Raises:
    ValueError: the page holds no finite value at all.
  """
  if colour.dtype.kind != 'f':
    return colour, None
  finite = np.isfinite(colour)
  if finite.all():
    return colour, None
  if not finite.any():
    raise ValueError('holds no finite value (every pixel is NaN or infinite)')
  mask = ~finite
  filled = np.where(finite, colour, np.median(colour[finite])).astype(colour.dtype)
  return filled, NonFinite(mask, colour[mask])


def check_white_level_override(serving, white_level_override):
  """Raises ValueError when --white_level is given for a model (serving.Serving)
  that maps each image by its own percentiles (the override would be silently
  unused)."""
  rule = serving.rule
  if white_level_override and rule.per_image:
    raise ValueError(f'--white_level={white_level_override:g} does not apply: the model maps '
                     f'each image\'s {rule.low_percentile:g} and {rule.high_percentile:g} '
                     'percentiles to 0 and 1 (--normalization=percentile)')


def values_above_white(pages, colour_channels, serving, white_level_override=0.0):
  """(largest colour value, white level) when a page's colour channels pass the
  white level the model was trained with, else None. Alpha and extra samples
  are passed through untouched, so they do not count; nor do NaN and inf.

  Args:
    pages: ImageFile.pages; colour_channels: one entry per page (None: decided
      from the channel count), as for native_images.split_alpha.
    serving: serving.Serving of the network.
  """
  if serving.rule.per_image:
    return None  # each image is mapped by its own percentiles: nothing is clipped
  above = None
  for page, colour_count in zip(pages, colour_channels):
    colour, _ = native_images.split_alpha(page, colour_count)
    page_white_level = serving.white_level_for(colour.dtype, white_level_override)
    if colour.dtype.kind == 'f':
      colour = colour[np.isfinite(colour)]
    if page_white_level and colour.size:
      top = float(colour.max())
      if top > page_white_level and (above is None or top > above[0]):
        above = (top, page_white_level)
  return above


def read_input(job, serving, white_level_override=0.0):
  """Reads one input file and warns once if it holds values above the white
  level; returns native_images.ImageFile. (denoise_files' read stage.)

  Raises:
    Exception: of any kind, when the file cannot be read.
  """
  image = native_images.read_image(job.source)
  colour_channels = image.colour_channels or (None,) * len(image.pages)
  warn_above_white(job.source, image.pages, colour_channels, serving, white_level_override)
  warn_unlike_training(job.source, image.pages[0], colour_channels[0], serving)
  return image


def warn_above_white(source, pages, colour_channels, serving, white_level_override=0.0):
  """Logs one warning when pages hold colour values above the white level
  (values_above_white), naming source: they come back clipped to it."""
  above = values_above_white(pages, colour_channels, serving, white_level_override)
  if above:
    logging.warning('%s holds values up to %g, above the white level %g the model was trained '
                    'with; they are clipped to it. Pass --white_level to scale this file\'s '
                    'data differently.', source, above[0], above[1])


# Patches of a file its noise check reads (docs/bench/diagnosis_accuracy.md
# times it): enough to tell a camera's noise (0.56 and more at lag 1) from
# pixel-independent noise on most photographs.
NOISE_CHECK_PATCHES = 512


def warn_unlike_training(source, page, colour_channels, serving):
  """Logs one warning, naming source, when the page's noise is clearly
  correlated between neighbours and the model was trained on noise that is not
  (diagnosis.report.unlike_training); nothing for runs whose training noise is
  unknown (serving.noise_correlation < 0) or for pages too small to tell."""
  training_correlation = serving.noise_correlation
  if training_correlation < 0:
    return
  colour, _ = native_images.split_alpha(page, colour_channels)
  if min(colour.shape[:2]) < noise_statistics.PATCH * 4:
    return
  try:
    # The correlation needs no scale: the pixels are read as they are.
    profile = noise_statistics.estimate_single([colour], max_patches=NOISE_CHECK_PATCHES)
  except ValueError:  # no usable patch (flat, saturated or non-finite): nothing to tell
    return
  words = diagnosis_report.unlike_training(profile.correlation_lag1, training_correlation)
  if words:
    logging.warning('%s: %s.', source, words)


def denoise_image(image, denoise, serving, white_level_override=0.0):
  """Every page of a read file denoised (denoise_files' network stage)."""
  colour_channels = image.colour_channels or (None,) * len(image.pages)
  return [denoise_page(page, denoise, serving, colour, white_level_override)
          for page, colour in zip(image.pages, colour_channels)]


def write_output(job, denoised, image, png_compression=-1):
  """Encodes denoised pages like image and writes them to job.destination;
  returns the megapixels written. (denoise_files' write stage.)

  Args:
    png_compression: zlib level of PNG outputs (-1: zlib's default).

  Raises:
    Exception: of any kind, when the pages cannot be encoded or written.
  """
  data = native_images.encode_pages(denoised, job.family, like=image,
                                    png_compression=png_compression)
  make_parent(job.destination)
  # Written beside and renamed: an interrupted run never leaves a truncated
  # file under the final name, and the name appears only when complete.
  partial = job.destination + '.partial'
  try:
    with tf.io.gfile.GFile(partial, 'wb') as output:
      output.write(data)
    rename_into_place(partial, job.destination)
  finally:
    remove_if_left(partial)
  return sum(page.shape[0] * page.shape[1] for page in image.pages) / 1e6


def make_parent(destination):
  """Creates the folder an output goes into."""
  tf.io.gfile.makedirs(os.path.dirname(destination))


def rename_into_place(partial, destination):
  """Moves a completely written file to its final name (replacing what is there)."""
  tf.io.gfile.rename(partial, destination, overwrite=True)


def remove_if_left(partial):
  """Removes a partial file an interrupted write left behind, if any."""
  if tf.io.gfile.exists(partial):
    tf.io.gfile.remove(partial)

