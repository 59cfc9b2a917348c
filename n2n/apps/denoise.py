"""Denoises a user's noisy images with a trained run (denoise.py, n2n-denoise).

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

import hashlib
import os
import sys

from absl import flags

from n2n import apps
from n2n import shipped
from n2n import config as config_lib
from n2n import config_flags
from n2n import hardware
from n2n.inference import file_batch
from n2n.data import volumes
from n2n.inference import noisy_files
from n2n.inference import devices
from n2n.inference import exported_model
from n2n.inference import loading
from n2n.inference import sharding


# --help's list of the models the package ships, from their declaration.
SHIPPED_MODELS_HELP = ('\nModels n2n ships, for --model=NAME (no training):\n' + ''.join(
    f'  {name}: {model.what}.\n' for name, model in shipped.MODELS.items()))


def plan(config):
  """(this shard's file jobs, the OME-Zarr jobs, the parsed shard or None, how many
  files were planned in all). Files are split between shards; every shard takes
  its share of the chunks of every OME-Zarr input.

  Raises:
    ValueError: a bad --input, --output_dir or --shard (nothing is written).
  """
  shard = sharding.parse_shard(config.shard)
  planned = noisy_files.plan_jobs(noisy_files.find_inputs(config.input), config.output_dir,
                                config.format, config.overwrite)
  files = [job for job in planned if job.family != noisy_files.ZARR_FAMILY]
  zarrs = [job for job in planned if job.family == noisy_files.ZARR_FAMILY]
  return sharding.select(files, shard), zarrs, shard, len(files)


def resolved_precision(config):
  """The precision --model runs at here: an export's float32, else --precision resolved."""
  if exported_model.is_export(config.model):
    return 'float32'
  return hardware.resolve_precision(config.precision)


def load_network(config):
  """loading.Network of --model, printing the precision and devices it runs on."""
  if exported_model.is_export(config.model):
    if config.logical_cpu_devices > 1:
      raise ValueError(f'--logical_cpu_devices={config.logical_cpu_devices}: an export from '
                       'export.py runs on one device; pass the run\'s model_dir to use several')
    network = loading.from_export(config.model)
    print('precision float32 (an export runs as it was saved)', flush=True)
    return network
  devices.split_cpu(config.logical_cpu_devices)
  precision = hardware.resolve_precision(config.precision)
  print(f'precision {precision}' + (' (auto)' if config.precision == 'auto' else ''),
        flush=True)
  strategy = devices.inference_strategy()
  network = loading.from_checkpoint(config.model, precision, strategy)
  print(f'network on {devices.describe(strategy)}', flush=True)
  return network


def model_identity(config, network):
  """What an OME-Zarr output records of the model: the checkpoint's (or export's) file
  name and a digest of its weights' index, which names every variable and where its
  bytes lie (shards on hosts that mount runs elsewhere agree; two runs' checkpoints
  of one name do not)."""
  if exported_model.is_export(config.model):
    index, name = os.path.join(config.model, 'variables', 'variables.index'), 'export'
  else:
    index, name = network.source + '.index', os.path.basename(network.source)
  with open(index, 'rb') as weights_index:
    return f'{name} {hashlib.sha256(weights_index.read()).hexdigest()[:16]}'


def main(argv):
  program = os.path.basename(argv[0])
  with apps.configured(argv, config_lib.DenoiseConfig) as config:
    jobs, zarr_jobs, shard, planned = plan(config)
    network = load_network(config)
    if shard:
      print(f'shard {shard}: {len(jobs)} of the {planned} planned files' +
            (f', its chunks of {len(zarr_jobs)} OME-Zarr input(s)' if zarr_jobs else ''),
            flush=True)
    noisy_files.check_white_level_override(network.serving, config.white_level)
    denoise = loading.denoise_function(network, config)
    summary = file_batch.denoise_files(jobs, denoise, network.serving, config.overwrite,
                                       config.white_level, config.prefetch,
                                       config.png_compression,
                                       volumes.parse_axes_flag(config.axes))
    if zarr_jobs:
      tile, margin = config_lib.volume_tiling(config, network.serving.volume_depth)
      summary = file_batch.merge(summary, file_batch.denoise_zarr_jobs(
          zarr_jobs, denoise, network.serving, margin, config.white_level, shard,
          config.overwrite,
          {'model': model_identity(config, network), 'tile': tile,
           'precision': resolved_precision(config)}))
    print(file_batch.format_summary(summary, len(jobs) + len(zarr_jobs), network.source))
  if summary.exit_status == file_batch.EXIT_NOTHING:
    print(f'{program}: error: no file could be denoised', file=sys.stderr)
  sys.exit(summary.exit_status)


def run(argv=None):
  """The program: defines the flags and runs main."""
  config_flags.define_flags(config_lib.DenoiseConfig, flags.FLAGS)
  apps.start(main, __doc__ + SHIPPED_MODELS_HELP, argv)
