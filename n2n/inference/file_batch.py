"""denoise.py's batch: every planned file read, denoised and written, a failing
file skipped with one line, the I/O of the next and previous files beside the
network (--prefetch), and the summary and exit status a script can act on.
"""

import collections
import concurrent.futures
import dataclasses
import itertools
import time

from absl import logging
import tensorflow as tf

from n2n import errors
from n2n.inference import chunked_volumes
from n2n.inference import noisy_files
from n2n.inference import noisy_volumes


# denoise.py's exit statuses: a script can tell a finished batch from a partial one.
EXIT_DONE = 0          # every file denoised now or already done by an earlier run
EXIT_NOTHING = 2       # no file could be denoised
EXIT_SOME_SKIPPED = 3  # some files were skipped (listed), the rest written


@dataclasses.dataclass
class Summary:
  """What a denoise run did."""
  written: list
  skipped: list  # (path, reason)
  already_done: list  # destinations that existed and were kept
  megapixels: float
  seconds: float

  @property
  def exit_status(self):
    if not self.skipped:
      return EXIT_DONE
    return EXIT_SOME_SKIPPED if self.written or self.already_done else EXIT_NOTHING


def _file_stages(denoise, serving, white_level_override, png_compression, axes):
  """(read(job), denoise(read file), write(job, denoised, read file)): images
  page by page, or, for a 3D run, TIFF stacks volume by volume."""
  if serving.is_volume:
    return (lambda job: noisy_volumes.read_stack(job.source, axes),
            lambda stack: noisy_volumes.denoise_stack(stack, denoise, serving,
                                                      white_level_override),
            lambda job, denoised, stack: noisy_volumes.write_stack(job.destination, denoised,
                                                                   stack))
  return (lambda job: noisy_files.read_input(job, serving, white_level_override),
          lambda image: noisy_files.denoise_image(image, denoise, serving, white_level_override),
          lambda job, denoised, image: noisy_files.write_output(job, denoised, image,
                                                                png_compression))


def denoise_files(jobs, denoise, serving, overwrite=False, white_level_override=0.0, prefetch=2,
                  png_compression=-1, axes=''):
  """Denoises every job's file, each on its own: a file that fails is skipped
  with one plain line and the batch goes on.

  The network runs on the calling thread, file after file. With prefetch > 0
  one reader thread reads and decodes up to prefetch files ahead, and one
  writer thread encodes and writes up to prefetch finished files behind, so a
  folder of small files pays its I/O beside the network instead of after it.
  Outputs are written in the batch's order either way.

  Args:
    denoise: fn(network values) -> same (loading.denoise_function).
    serving: serving.Serving of the network (serving.without_run(channels)
      for a bare denoise function).
    overwrite: replace existing outputs; else a job whose output exists is
      already done (a rerun of an interrupted batch resumes it).
    white_level_override: --white_level (0: the run's).
    prefetch: files read ahead and written behind (0: one stage after the other).
    png_compression: zlib level of PNG outputs (-1: zlib's default).
    axes: for a 3D run, the axes of TIFF stacks that do not say them (--axes).

  Returns:
    Summary (a 3D run counts megavoxels as megapixels).
  """
  read_file, denoise_file, write_file = _file_stages(
      denoise, serving, white_level_override, png_compression, axes)
  summary = Summary([], [], [], 0.0, 0.0)
  started = time.perf_counter()
  todo = []
  for job in jobs:
    if not overwrite and tf.io.gfile.exists(job.destination):
      summary.already_done.append(job.destination)
    else:
      todo.append(job)
  done = len(jobs) - len(todo)

  def skip(job, error):
    reason = errors.first_line(error)
    logging.warning('Skipping %s: %s', job.source, reason)
    summary.skipped.append((job.source, reason))

  def finish(job, file_started, written):
    try:
      megapixels = written.result()
    except Exception as error:  # pylint: disable=broad-except  (one bad file never stops a batch)
      skip(job, error)
      return
    summary.written.append(job.destination)
    summary.megapixels += megapixels
    finished = len(summary.written) + len(summary.skipped)
    _log_progress(job, done + finished, len(jobs), megapixels,
                  time.perf_counter() - file_started,
                  (time.perf_counter() - started) / finished * (len(todo) - finished))

  with _Stages(prefetch) as stages:
    reads = collections.deque()
    writes = collections.deque()
    upcoming = iter(todo)

    def read_ahead(count):
      for job in itertools.islice(upcoming, max(0, count - len(reads))):
        reads.append((job, stages.read(read_file, job)))

    for _ in todo:
      read_ahead(max(1, prefetch))
      job, read = reads.popleft()
      read_ahead(prefetch)  # read while this file is denoised
      file_started = time.perf_counter()
      try:
        image = read.result()
        denoised = denoise_file(image)
      except Exception as error:  # pylint: disable=broad-except  (one bad file never stops a batch)
        skip(job, error)
        continue
      writes.append((job, file_started, stages.write(write_file, job, denoised, image)))
      del image, denoised
      while len(writes) > prefetch:
        finish(*writes.popleft())
    while writes:
      finish(*writes.popleft())
  summary.seconds = time.perf_counter() - started
  return summary


def denoise_zarr_jobs(jobs, denoise, serving, margin, white_level_override=0.0, shard=None,
                      overwrite=False, settings=None):
  """Denoises OME-Zarr jobs chunk by chunk (n2n/inference/chunked_volumes.py): with a
  shard, this worker's chunks of each; an output from an interrupted run is resumed.

  serving: serving.Serving of the network: a one-channel 3D run's.
  settings: what the chunks are denoised with, recorded in each output
    (chunked_volumes.denoise_ome_zarr).

  Returns:
    Summary: an output counts as written when this run wrote chunks of it, as
    already done when every chunk of this shard was done before; megapixels
    are megavoxels.
  """
  summary = Summary([], [], [], 0.0, 0.0)
  started = time.perf_counter()
  for job in jobs:
    try:
      if not serving.is_volume:
        raise ValueError('an OME-Zarr input needs a 3D run (--spatial_dims=3)')
      if serving.channels != 1:
        raise ValueError(f'OME-Zarr is denoised channel by channel; the run has '
                         f'{serving.channels} channels (train it with --channels=1)')
      done = chunked_volumes.denoise_ome_zarr(job.source, job.destination, denoise, margin,
                                              serving, white_level_override, shard,
                                              overwrite, settings)
    except Exception as error:  # pylint: disable=broad-except  (one bad input never stops a batch)
      reason = errors.first_line(error)
      logging.warning('Skipping %s: %s', job.source, reason)
      summary.skipped.append((job.source, reason))
      continue
    (summary.written if done.written else summary.already_done).append(job.destination)
    summary.megapixels += done.megavoxels
  summary.seconds = time.perf_counter() - started
  return summary


def merge(first, second):
  """One Summary of two parts of a run (files, then OME-Zarr inputs)."""
  return Summary(first.written + second.written, first.skipped + second.skipped,
                 first.already_done + second.already_done,
                 first.megapixels + second.megapixels, first.seconds + second.seconds)


def _log_progress(job, index, total, megapixels, seconds, eta_seconds):
  logging.info('[%d/%d] %s: %.2f MP in %.1f s (%.2f MP/s), ETA %s', index, total,
               job.destination, megapixels, seconds, megapixels / max(seconds, 1e-9),
               time.strftime('%H:%M:%S', time.gmtime(eta_seconds)))


class _Stages:
  """The read and write stages of denoise_files: a thread each with prefetch,
  else run at once on the calling thread (as finished futures)."""

  def __init__(self, prefetch):
    self._pools = ([concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=name)
                    for name in ('n2n-read', 'n2n-write')] if prefetch else [])

  def __enter__(self):
    return self

  def __exit__(self, *exc_info):
    for pool in self._pools:
      pool.shutdown(wait=True)

  def _run(self, index, function, *args):
    if self._pools:
      return self._pools[index].submit(function, *args)
    future = concurrent.futures.Future()
    try:
      future.set_result(function(*args))
    except Exception as error:  # pylint: disable=broad-except  (reported by the caller)
      future.set_exception(error)
    return future

  def read(self, function, *args):
    return self._run(0, function, *args)

  def write(self, function, *args):
    return self._run(1, function, *args)


def format_summary(summary, total, source):
  """The closing lines of denoise.py: counts, then each skipped file and why."""
  done = (f', {len(summary.already_done)} already done (kept; --overwrite replaces them)'
          if summary.already_done else '')
  skipped = f', {len(summary.skipped)} skipped' if summary.skipped else ''
  lines = [f'denoised {len(summary.written)} of {total} files{done}{skipped} '
           f'({summary.megapixels:.1f} MP) in {summary.seconds:.1f} s with {source}']
  lines += [f'  skipped {path}: {reason}' for path, reason in summary.skipped]
  return '\n'.join(lines)
