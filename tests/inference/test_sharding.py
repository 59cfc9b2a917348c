"""denoise.py --shard (issue 24): a deterministic, size-balanced split of the
planned files; N shards run in parallel write every file of one unsharded run
exactly once, and a rerun writes nothing."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from n2n import config as config_lib
from n2n.apps import denoise as denoise_app
from n2n.data import native_images
from n2n.inference import file_batch
from n2n.inference import noisy_files
from n2n.inference import serving
from n2n.inference import sharding
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize('spec, environ, expected', [
    ('', {}, None),
    ('2/5', {}, sharding.Shard(2, 5)),
    ('auto', {'SLURM_ARRAY_TASK_ID': '3', 'SLURM_ARRAY_TASK_COUNT': '4'}, sharding.Shard(3, 4)),
    # --array=1-4: task IDs 1..4 are shards 0..3.
    ('auto', {'SLURM_ARRAY_TASK_ID': '4', 'SLURM_ARRAY_TASK_COUNT': '4',
              'SLURM_ARRAY_TASK_MIN': '1'}, sharding.Shard(3, 4)),
    ('auto', {'JOB_COMPLETION_INDEX': '0', 'N2N_SHARD_COUNT': '10'}, sharding.Shard(0, 10)),
])
def test_shards_from_the_flag_and_from_the_schedulers_variables(spec, environ, expected):
  assert sharding.parse_shard(spec, environ) == expected


@pytest.mark.parametrize('spec, environ, message', [
    ('3/3', {}, r'^--shard=3/3: need 0 <= K < N$'),
    ('1', {}, r"^--shard='1' must be K/N"),
    ('a/2', {}, r"^--shard part 'a' of 'a/2'='a' is not a whole number$"),
    ('auto', {}, r'^--shard=auto: neither SLURM_ARRAY_TASK_ID .* nor JOB_COMPLETION_INDEX'),
    ('auto', {'JOB_COMPLETION_INDEX': '1'}, r'N2N_SHARD_COUNT is not; set it to the Job'),
    ('auto', {'SLURM_ARRAY_TASK_ID': '5', 'SLURM_ARRAY_TASK_COUNT': '4'},
     r'^--shard=auto: SLURM_ARRAY_TASK_ID=5 gives shard 5 of 4$'),
])
def test_bad_shards_are_one_line_naming_the_flag_or_variable(spec, environ, message):
  with pytest.raises(ValueError, match=message):
    sharding.parse_shard(spec, environ)


def test_the_partition_balances_sizes_and_depends_on_nothing_else():
  sizes = [100, 1, 1, 1, 50, 50, 1, 1]
  parts = sharding.partition(sizes, 3)
  assert parts == sharding.partition(list(sizes), 3)
  totals = [sum(size for size, part in zip(sizes, parts) if part == shard) for shard in range(3)]
  assert sorted(totals) == [52, 53, 100] and sorted(set(parts)) == [0, 1, 2]
  assert sharding.partition([5] * 6, 3) == [0, 1, 2, 0, 1, 2]


def _write_folder(folder, count):
  rng = np.random.default_rng(0)
  for index in range(count):
    side = int(rng.integers(16, 48))
    page = rng.integers(0, 255, (side, side + 3, 3)).astype(np.uint8)
    path = folder / f'sub{index % 3}' / f'{index:02d}.png'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(native_images.encode_pages([page], 'png'))


def test_shards_select_every_planned_file_once(tmp_path):
  _write_folder(tmp_path / 'in', 20)
  jobs = noisy_files.plan_jobs(noisy_files.find_inputs(str(tmp_path / 'in')), str(tmp_path / 'out'),
                             'auto', False)
  chosen = [sharding.select(jobs, sharding.Shard(index, 3)) for index in range(3)]
  assert sorted(job.source for part in chosen for job in part) == sorted(job.source
                                                                           for job in jobs)
  assert all(part == sorted(part, key=jobs.index) for part in chosen)  # the batch's order
  assert sharding.select(jobs, None) == jobs


def _denoise(*flags, **environ):
  return subprocess.Popen([sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), *flags],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=REPO_ROOT, env={**os.environ, **environ})


@pytest.mark.slow
def test_three_parallel_shards_write_one_runs_files_once_and_a_rerun_writes_nothing(
    denoise_model_dir, tmp_path):
  _write_folder(tmp_path / 'in', 12)
  common = (f'--model={denoise_model_dir}', f'--input={tmp_path / "in"}')
  whole = _denoise(*common, f'--output_dir={tmp_path / "whole"}')
  # Three processes at once, as a job array starts them; the third from SLURM's variables.
  shards = [_denoise(*common, f'--output_dir={tmp_path / "sharded"}', '--shard=0/3'),
            _denoise(*common, f'--output_dir={tmp_path / "sharded"}', '--shard=1/3'),
            _denoise(*common, f'--output_dir={tmp_path / "sharded"}', '--shard=auto',
                     SLURM_ARRAY_TASK_ID='2', SLURM_ARRAY_TASK_COUNT='3')]
  outputs = [process.communicate(timeout=300) for process in [whole] + shards]
  assert all(process.returncode == 0 for process in [whole] + shards), outputs
  written = []
  for index, (stdout, stderr) in enumerate(outputs[1:]):
    assert f'shard {index}/3: ' in stdout
    written += re.findall(r'\] \[\d+/\d+\] (\S+): [\d.]+ MP in ', stderr)
  expected = sorted(str(path.relative_to(tmp_path / 'whole'))
                    for path in (tmp_path / 'whole').rglob('*.png'))
  assert len(expected) == 12
  assert sorted(os.path.relpath(path, tmp_path / 'sharded') for path in written) == expected
  for relative in expected:
    (ours,), (theirs,) = (native_images.read_pages(str(tmp_path / folder / relative))
                          for folder in ('sharded', 'whole'))
    assert np.abs(ours.astype(int) - theirs).max() <= 1
  # A fourth pass over the whole folder finds every file done and runs no network:
  # denoise.py's plan and batch as its main calls them, without a process (the
  # messy-folder test in tests/test_denoise_cli.py reruns the program).
  jobs, _, _, planned = denoise_app.plan(config_lib.DenoiseConfig(
      model=str(denoise_model_dir), input=str(tmp_path / 'in'),
      output_dir=str(tmp_path / 'sharded')))
  summary = file_batch.denoise_files(jobs, lambda values: pytest.fail('denoised again'),
                                     serving.without_run(3))
  assert summary.exit_status == 0
  assert 'denoised 0 of 12 files, 12 already done' in file_batch.format_summary(
      summary, planned, str(denoise_model_dir))
