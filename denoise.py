"""Denoises a user's noisy images with a trained run.

  python denoise.py --model=runs/demo --input=~/noisy_photos --output_dir=~/denoised

Nothing is added to the input: it is already noisy. Each output keeps its
input's format family (lossy formats become PNG), bit depth, channels, alpha,
pages and path below the input folder. Images of any size are denoised in
overlapping tiles.

A batch never stops for one file: a file that cannot be read, denoised or
written is skipped with one line and listed at the end. Outputs that already
exist are kept (so a rerun resumes an interrupted batch) unless --overwrite.
Exit status: 0 every file denoised or already done; 3 some skipped; 2 none
could be denoised; 1 a bad flag or plan (nothing written).
"""

import json
import sys

from n2n import cli  # pylint: disable=g-bad-import-order  (quiets TF before it loads)
from absl import app
from absl import flags

from n2n import config as config_lib
from n2n import flags as n2n_flags
from n2n import hardware
from n2n.inference import batch
from n2n.inference import denoiser
from n2n.inference import devices
from n2n.inference import denoising
from n2n.inference import export
from n2n.inference import restore
from n2n.inference import sharding


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('denoise.py'):
    config = n2n_flags.config_from_flags(config_lib.DenoiseConfig)
    shard = sharding.parse_shard(config.shard)
    planned = denoising.plan_jobs(denoising.find_inputs(config.input), config.output_dir,
                                  config.format, config.overwrite)
    jobs = sharding.select(planned, shard)
    tiles_per_call = config.batch_tiles
    if export.is_export(config.model):
      if config.logical_cpu_devices > 1:
        raise ValueError(f'--logical_cpu_devices={config.logical_cpu_devices}: an export from '
                         'export.py runs on one device; pass the run\'s model_dir to use several')
      run_batch, channels, run_config = export.load_export(config.model)
      source = f'the export {config.model}'
      print('precision float32 (an export runs as it was saved)', flush=True)
    else:
      devices.split_cpu(config.logical_cpu_devices)
      precision = hardware.resolve_precision(config.precision)
      print(f'precision {precision}' + (' (auto)' if config.precision == 'auto' else ''),
            flush=True)
      strategy = devices.inference_strategy()
      restored = restore.restore_model(config.model, precision, flag_name='model',
                                       strategy=strategy)
      if strategy:
        run_batch = devices.distributed_function(restored.model, strategy)
        tiles_per_call *= strategy.num_replicas_in_sync
      else:
        run_batch = denoiser.model_function(restored.model)
      print(f'network on {devices.describe(strategy)}', flush=True)
      channels, source = restored.run_config.model.channels, restored.prefix
      run_config = json.loads(restored.run_config.to_json())
    if shard:
      print(f'shard {shard}: {len(jobs)} of the {len(planned)} planned files', flush=True)
    denoising.check_white_level_override(run_config, config.white_level)
    denoise = denoiser.tiled_denoiser(run_batch, config.tile_size, config.tile_overlap,
                                      tiles_per_call)
    if config.tta:
      denoise = denoiser.with_test_time_augmentation(denoise)
    summary = batch.denoise_files(jobs, denoise, channels, run_config, config.overwrite,
                                  config.white_level, config.prefetch, config.png_compression)
    print(batch.format_summary(summary, len(jobs), source))
  if summary.exit_status == batch.EXIT_NOTHING:
    print('denoise.py: error: no file could be denoised', file=sys.stderr)
  sys.exit(summary.exit_status)


if __name__ == '__main__':
  n2n_flags.define_flags(config_lib.DenoiseConfig, flags.FLAGS)
  app.run(main)
