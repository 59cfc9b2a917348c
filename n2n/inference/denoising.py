"""denoise.py's library: find the user's noisy files, denoise each page, write
it back in its own format, bit depth and channel layout.

Channels: an RGB model denoises a grayscale image as three equal channels and
returns their mean; a grayscale model denoises each channel of a colour image
on its own. An alpha channel is passed through untouched.
"""

import dataclasses
import os
import time

from absl import logging
import numpy as np
import tensorflow as tf

from n2n import errors
from n2n.data import files as files_lib
from n2n.data import image_files
from n2n.data import image_io


@dataclasses.dataclass(frozen=True)
class Job:
  """One input file, where its output goes, and in which format family."""
  source: str
  destination: str
  family: str


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
    if tf.io.gfile.isdir(part):
      found += [(path, os.path.relpath(path, part)) for path in files_lib.files_below(part)]
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


def plan_jobs(inputs, output_dir, output_format, overwrite):
  """Jobs for every input; refuses to write into an input folder or over an input.

  Raises:
    ValueError: unless overwrite, when an output would replace an input file or
      the output folder lies inside a folder given as input.
  """
  output_dir = os.path.abspath(os.path.expanduser(output_dir))
  jobs = []
  for path, relative in inputs:
    source = os.path.abspath(path)
    # The folder the input was found in: outputs there would be read as inputs next time.
    root = source[:-len(relative)].rstrip(os.sep) or os.sep
    if not overwrite and os.path.commonpath([output_dir, root]) == root:
      raise ValueError(f'--output_dir={output_dir!r} is inside the input folder {root!r}; '
                       'choose another folder or pass --overwrite')
    family = image_files.output_family(path, output_format)
    jobs.append(Job(path, os.path.join(output_dir, os.path.splitext(relative)[0] +
                                       image_files.output_suffix(family)), family))
  return jobs


def data_white_level(run_config, dtype):
  """The value that was 1.0 in training for pixels of dtype: the run's white
  level when dtype is the training data's own (e.g. 4095 for 12-bit data in
  16-bit files), else None (the dtype's full range)."""
  if run_config is None or dtype.name != run_config.get('data_dtype', 'uint8'):
    return None
  return run_config.get('white_level') or None


def denoise_page(page, denoise, model_channels, run_config=None):
  """Denoises one page, keeping its dtype, shape and alpha.

  Args:
    page: [H, W] or [H, W, C] array of any image dtype.
    denoise: fn([H, W, model_channels] float32) -> same shape float32.
    model_channels: 1 or 3.
    run_config: the run's config.json dict, or None: pixels of the training
      data's dtype are scaled by its white level (data_white_level).

  Returns:
    Array of page's shape and dtype.
  """
  colour, alpha = image_files.split_alpha(page)
  white_level = data_white_level(run_config, colour.dtype)
  values = image_files.to_unit_range(colour, white_level)
  if values.shape[2] == model_channels:
    denoised = denoise(values)
  elif model_channels == 3:
    denoised = denoise(np.repeat(values, 3, axis=2)).mean(axis=2, keepdims=True)
  else:
    denoised = np.concatenate([denoise(values[:, :, [channel]])
                               for channel in range(values.shape[2])], axis=2)
  # Dropped before converting back: on a 24-MP image each float copy is 288 MB.
  del values
  result = image_files.like_input(denoised, colour, white_level)
  del denoised
  if alpha is not None:
    result = np.concatenate([result, alpha], axis=2)
  return result.reshape(page.shape)


@dataclasses.dataclass
class Summary:
  """What a denoise run did."""
  written: list
  skipped: list  # (path, reason)
  megapixels: float
  seconds: float


def denoise_files(jobs, denoise, model_channels, run_config=None):
  """Denoises every job's file; unreadable ones are skipped with one warning each.

  Returns:
    Summary.
  """
  summary = Summary([], [], 0.0, 0.0)
  started = time.perf_counter()
  for index, job in enumerate(jobs):
    try:
      pages = image_files.read_pages(job.source)
    except (image_io.ImageDecodeError, tf.errors.OpError, OSError) as error:
      reason = errors.first_line(error)
      logging.warning('Skipping %s: %s', job.source, reason)
      summary.skipped.append((job.source, reason))
      continue
    page_started = time.perf_counter()
    denoised = [denoise_page(page, denoise, model_channels, run_config) for page in pages]
    data = image_files.encode_pages(denoised, job.family)
    tf.io.gfile.makedirs(os.path.dirname(job.destination))
    # Written beside and renamed: an interrupted run never leaves a truncated
    # file under the final name, and the name appears only when complete.
    partial = job.destination + '.partial'
    with tf.io.gfile.GFile(partial, 'wb') as output:
      output.write(data)
    tf.io.gfile.rename(partial, job.destination, overwrite=True)
    seconds = time.perf_counter() - page_started
    megapixels = sum(page.shape[0] * page.shape[1] for page in pages) / 1e6
    summary.written.append(job.destination)
    summary.megapixels += megapixels
    elapsed = time.perf_counter() - started
    eta = elapsed / (index + 1) * (len(jobs) - index - 1)
    logging.info('[%d/%d] %s: %.2f MP in %.1f s (%.2f MP/s), ETA %s', index + 1, len(jobs),
                 job.destination, megapixels, seconds, megapixels / max(seconds, 1e-9),
                 time.strftime('%H:%M:%S', time.gmtime(eta)))
  summary.seconds = time.perf_counter() - started
  return summary
