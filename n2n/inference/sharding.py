"""denoise.py --shard: one deterministic part of a batch, for job arrays.

Every shard plans the same list of files (noisy_files.plan_jobs: sorted paths)
and keeps its own part, so N processes started by a scheduler (a SLURM job
array, a Kubernetes Indexed Job) together denoise every file exactly once,
with no coordination between them. The parts are balanced by file size (one
stat per file; a proxy for pixels that needs no decoding). With denoise.py's
resume (existing outputs are kept), rerunning a preempted shard finishes only
what it had left.
"""

import dataclasses
import os

import tensorflow as tf

# Where --shard=auto reads the shard: a SLURM job array (task IDs may start at
# SLURM_ARRAY_TASK_MIN), or a Kubernetes Indexed Job, whose pods know their
# index but not the Job's completions: the manifest passes that count.
SLURM_INDEX, SLURM_COUNT, SLURM_MIN = ('SLURM_ARRAY_TASK_ID', 'SLURM_ARRAY_TASK_COUNT',
                                       'SLURM_ARRAY_TASK_MIN')
KUBERNETES_INDEX, KUBERNETES_COUNT = 'JOB_COMPLETION_INDEX', 'N2N_SHARD_COUNT'


@dataclasses.dataclass(frozen=True)
class Shard:
  """Part index (0-based) of count."""
  index: int
  count: int

  def __str__(self):
    return f'{self.index}/{self.count}'


def _whole_number(text, what):
  try:
    return int(text)
  except (TypeError, ValueError):
    raise ValueError(f'{what}={text!r} is not a whole number') from None


def parse_shard(spec, environ=None):
  """The Shard of --shard, or None for the whole batch.

  Args:
    spec: '' (no sharding), 'K/N' (0 <= K < N), or 'auto' (from the scheduler's
      environment variables).
    environ: the environment (os.environ when None).

  Raises:
    ValueError: naming the flag or the environment variable at fault.
  """
  environ = os.environ if environ is None else environ
  if not spec:
    return None
  if spec == 'auto':
    if SLURM_INDEX in environ:
      index = _whole_number(environ[SLURM_INDEX], SLURM_INDEX)
      count = _whole_number(environ.get(SLURM_COUNT), SLURM_COUNT)
      index -= _whole_number(environ.get(SLURM_MIN, '0'), SLURM_MIN)
      source = f'{SLURM_INDEX}={environ[SLURM_INDEX]}'
    elif KUBERNETES_INDEX in environ:
      index = _whole_number(environ[KUBERNETES_INDEX], KUBERNETES_INDEX)
      if KUBERNETES_COUNT not in environ:
        raise ValueError(f'--shard=auto: {KUBERNETES_INDEX} is set but {KUBERNETES_COUNT} is not; '
                         "set it to the Job's completions (or pass --shard=K/N)")
      count = _whole_number(environ[KUBERNETES_COUNT], KUBERNETES_COUNT)
      source = f'{KUBERNETES_INDEX}={environ[KUBERNETES_INDEX]}'
    else:
      raise ValueError(f'--shard=auto: neither {SLURM_INDEX} (a SLURM job array) nor '
                       f'{KUBERNETES_INDEX} (a Kubernetes Indexed Job) is set; pass --shard=K/N')
    if not 0 <= index < count:
      raise ValueError(f'--shard=auto: {source} gives shard {index} of {count}')
    return Shard(index, count)
  parts = spec.split('/')
  if len(parts) != 2:
    raise ValueError(f'--shard={spec!r} must be K/N (part K of N, 0 <= K < N) or auto')
  index, count = (_whole_number(part, f'--shard part {part!r} of {spec!r}') for part in parts)
  if not 0 <= index < count:
    raise ValueError(f'--shard={spec}: need 0 <= K < N')
  return Shard(index, count)


def partition(sizes, count):
  """Assigns items to count parts, balancing their total size.

  Largest first, each to the part with the smallest total so far (ties: the
  lower part): a pure function of the sizes and their order, so every shard
  computes the same partition.

  Args:
    sizes: list of item sizes (bytes), in the batch's order.
    count: number of parts.

  Returns:
    list of the part of each item.
  """
  totals = [0] * count
  parts = [0] * len(sizes)
  for item in sorted(range(len(sizes)), key=lambda item: (-sizes[item], item)):
    part = min(range(count), key=lambda candidate: (totals[candidate], candidate))
    parts[item] = part
    totals[part] += sizes[item]
  return parts


def select(jobs, shard):
  """The jobs of one shard (all of them for None), in the batch's order.

  Args:
    jobs: noisy_files.Job list from plan_jobs (sorted, the same in every shard).
    shard: Shard or None.
  """
  if shard is None:
    return list(jobs)
  sizes = [tf.io.gfile.stat(job.source).length for job in jobs]
  parts = partition(sizes, shard.count)
  return [job for job, part in zip(jobs, parts) if part == shard.index]
