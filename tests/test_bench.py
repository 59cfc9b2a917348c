"""bench/throughput.py runs end to end in its tiny configuration and writes
well-formed JSON (the benchmark's numbers themselves are not tested)."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT


@pytest.mark.slow
@pytest.mark.evidence
def test_tiny_benchmark_writes_well_formed_json(tmp_path):
  output = tmp_path / 'bench.json'
  result = subprocess.run(
      [sys.executable, '-m', 'bench.throughput', '--tiny',
       '--corruptions=gaussian,text', '--precisions=mixed_bfloat16,float32',
       '--end_to_end_precisions=float32', '--network_width=16',
       f'--output={output}'],
      capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
  assert result.returncode == 0, result.stderr[-3000:]
  report = json.loads(output.read_text())
  assert {'machine', 'pipeline', 'training', 'validation', 'process', 'options'} <= set(report)
  assert report['network_width'] == 16
  assert {'steps_per_loop_1', 'steps_per_loop_100', 'jit_compile_True'} <= set(report['options'])
  assert [row['noise'] for row in report['pipeline']] == ['gaussian', 'text']
  for row in report['pipeline']:
    stats = row['images_per_second']
    assert 0 < stats['min'] <= stats['median'] <= stats['max']
  training = report['training'][1]
  assert [row['precision'] for row in report['training']] == ['mixed_bfloat16', 'float32']
  assert report['options']['precision'] == 'float32'
  assert [row['crop'] for row in report['precision_speedup']] == [32]
  for row in report['precision_speedup']:
    assert 0 < row['ratio_min'] <= row['ratio'] <= row['ratio_max']
  assert training['from_memory']['median'] > 0
  assert set(training['end_to_end']) == {'gaussian', 'text'}
  for entry in training['end_to_end'].values():
    assert entry['ratio_min'] <= entry['ratio'] <= entry['ratio_max'] and entry['ratio'] > 0
    assert entry['from_memory']['median'] > 0
  validation = report['validation']
  assert validation['multiply_adds_per_pixel'] > 0 and validation['floor_seconds_float32'] > 0
  assert validation['matmul_multiply_adds_per_second_float32'] == max(
      validation['matmul_rate_by_size'].values())
  assert [row['method'] for row in report['methods']] == ['pairs', 'neighbor2neighbor']
  for row in report['methods']:
    assert row['fed']['median'] > 0 and row['step_time_vs_pairs']['ratio'] > 0
  assert report['methods'][0]['step_time_vs_pairs']['ratio'] == 1.0
  assert report['process']['exit_status'] == 0 and report['process']['seconds_to_first_step'] > 0
  assert report['process']['peak_rss_mib'] > 100


def test_bench_results_are_written_as_indented_json_or_not_at_all(tmp_path):
  from bench import json_output  # pylint: disable=g-import-not-at-top
  path = tmp_path / 'results.json'
  json_output.write_results(str(path), {'runs': [{'seed': 1}]})
  json_output.write_results(str(path), {'runs': [{'seed': 1}, {'seed': 2}]})  # rewritten whole
  assert path.read_text() == '{\n "runs": [\n  {\n   "seed": 1\n  },\n  {\n   "seed": 2\n  }\n ]\n}\n'
  json_output.write_results('', {'runs': []})  # no --output: nothing written anywhere
  json_output.write_results(None, {'runs': []})
  assert [p.name for p in tmp_path.iterdir()] == ['results.json']
