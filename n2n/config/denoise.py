"""What denoise.py reads, how it runs the network, and its tiles of volumes."""

import dataclasses

from n2n import shipped
from n2n.config.run import PRECISIONS
from n2n.settings import check_settings
from n2n.settings import setting

@dataclasses.dataclass(frozen=True)
class DenoiseConfig:
  """What denoise.py reads, how it runs the network, and where it writes."""
  model: str = setting('', "A run's model_dir (newest checkpoint), a checkpoint prefix "
                       '(model_dir/ckpt-N), a folder export.py wrote, or the name of a model '
                       f'n2n ships: {shipped.help_text()}.', required=True)
  input: str = setting('', 'Noisy images: a file, a folder (recursive), a glob, or a '
                       'comma-separated list of these. An OME-Zarr folder (*.zarr) is one '
                       'input, denoised chunk by chunk by a 3D run.', required=True)
  output_dir: str = setting('', 'Where the denoised files go, at the same path relative to '
                            'the input folder.', required=True)
  format: str = setting('auto', 'Output format. auto: PNG, TIFF and BMP stay as they are, JPEG '
                        'and other lossy or rare formats become PNG.',
                        choices=('auto', 'png', 'tiff', 'jpeg'))
  tile_size: int = setting(1024, 'Tile side in pixels (a multiple of 32); larger images are '
                           'denoised in overlapping tiles. 1024 measured near the fastest on '
                           'AVX2 and bfloat16 hosts alike (512: 10-25% slower; 1536: up to a '
                           'quarter faster at about twice the memory per tile; '
                           'docs/performance.md).', multiple_of=32)
  tile_overlap: int = setting(64, 'Pixels neighbouring tiles share and blend over.', minimum=0)
  batch_tiles: int = setting(1, 'Tiles per network call on each device: with several GPUs (or '
                            'logical CPU devices) each call splits that many times their count '
                            'across them.', minimum=1)
  logical_cpu_devices: int = setting(0, 'Split the CPU into this many logical devices and run '
                                     'the network on all of them (tf.distribute), as on a host '
                                     'with several GPUs; for trying and measuring multi-device '
                                     'runs. 0: no split. Ignored where there are GPUs.',
                                     minimum=0)
  precision: str = setting('auto', 'Inference precision. auto: mixed_bfloat16 where the '
                           'hardware runs bfloat16 natively (CPUs with AVX512-BF16 or AMX, GPUs '
                           'of compute capability 8.0+, TPUs), mixed_float16 on older GPUs of '
                           'capability 7.x, else float32.', choices=PRECISIONS)
  white_level: float = setting(0.0, "The pixel value that maps to 1.0 for the network, in the "
                               "files' own units (e.g. 4095 for 12-bit data in 16-bit files). "
                               "0: the run's, for files of the training data's type, else the "
                               "type's full range.", minimum=0.0)
  overwrite: bool = setting(False, 'Replace outputs that already exist (without it they are '
                            'kept as done, so rerunning an interrupted batch resumes it), and '
                            'allow --output_dir inside an input folder.')
  tta: bool = setting(False, 'Test-time augmentation: average the outputs of the 8 flips and '
                      'rotations of each image (8 times the time). A run whose inference '
                      'scheme averages them already (single-image runs on correlated noise) '
                      'takes no second mean.')
  shard: str = setting('', 'K/N: denoise only part K (0-based) of N of the planned files, a '
                       'deterministic split balanced by file size, for job arrays (together the N '
                       'shards write every file once). auto: K and N from SLURM_ARRAY_TASK_ID and '
                       'SLURM_ARRAY_TASK_COUNT, or from JOB_COMPLETION_INDEX and N2N_SHARD_COUNT '
                       '(a Kubernetes Indexed Job). Empty: every file.')
  png_compression: int = setting(
      2, 'zlib compression level of PNG outputs, 0 (none, fastest) to 9 (smallest, slowest); '
      'zlib\'s own default is 6. Pixels are the same at every level.',
      minimum=0, maximum=9)
  prefetch: int = setting(2, 'Files read and decoded ahead, and encoded and written behind, '
                          'while the network runs (0: one after the other).', minimum=0)
  axes: str = setting('', 'With a 3D run (--spatial_dims=3): the axes of TIFF stacks whose '
                      'files do not say them, in file order, e.g. ZYX or TYX (a movie: time is '
                      'the depth the network sees). Empty: as each file says.')
  volume_tile: str = setting('0,128,128', 'With a 3D run: the tile\'s depth, height and width '
                             'in voxels (depth a multiple of 2**z_pools, height and width of '
                             '32); larger stacks are denoised in overlapping tiles. Depth 0: '
                             'the depth of the run\'s training crops (docs/volumes.md: whole '
                             'stacks lost 1.2-15 dB against it).')
  volume_overlap: str = setting('auto', 'With a 3D run: voxels neighbouring tiles share and '
                                'blend over, in z, y and x; for OME-Zarr inputs also the '
                                'context read around each chunk. auto: half the tile depth in '
                                'z, 32 in y and x.')

  def __post_init__(self):
    check_settings(self)
    if self.tile_overlap * 2 >= self.tile_size:
      raise ValueError(f'--tile_overlap={self.tile_overlap} must be less than half of '
                       f'--tile_size={self.tile_size}')
    volume_tiling(self, None)


def _three_sizes(value, flag, minimum):
  try:
    sizes = tuple(int(part) for part in value.split(','))
  except ValueError:
    sizes = ()
  if len(sizes) != 3 or min(sizes) < minimum:
    raise ValueError(f'--{flag}={value} must be three whole numbers of at least {minimum}, '
                     'depth,height,width')
  return sizes


# --volume_overlap auto: y and x overlap (z: half the tile depth).
AUTO_VOLUME_OVERLAP_XY = 32


def volume_tiling(config, crop_depth):
  """((depth, height, width) of 3D tiles, (z, y, x) overlaps) of a DenoiseConfig.

  crop_depth: the depth of the run's training crops, which a tile depth of 0
  means; None where no run is known yet (the depth stays 0 and its overlap
  unchecked). A 3D network trained on thin crops denoises best in tiles as deep:
  on the phantom, 60-150 steps on 8-plane crops, whole 16- and 48-plane
  stacks scored 1.2-15.2 dB below 8-plane tiles overlapping by half, of which
  the half overlaps alone gave 0.75-1.19 dB (docs/bench/volume_tile_depth.json).
  """
  tile = _three_sizes(config.volume_tile, 'volume_tile', 0)
  if tile[1] % 32 or tile[2] % 32 or not tile[1] or not tile[2]:
    raise ValueError(f'--volume_tile={config.volume_tile}: height and width must be multiples '
                     'of 32')
  tile = (tile[0] or crop_depth,) + tile[1:]
  if config.volume_overlap == 'auto':
    overlap = ((tile[0] or 0) // 2, AUTO_VOLUME_OVERLAP_XY, AUTO_VOLUME_OVERLAP_XY)
  else:
    overlap = _three_sizes(config.volume_overlap, 'volume_overlap', 0)
  for axis, size, shared in zip('zyx', tile, overlap):
    # At most half: a tile's rising and falling ramps (tiling._ramp) then never overlap
    # each other (where they would, a voxel would get the lesser of one tile's two edges).
    if size and shared * 2 > size:
      raise ValueError(f'--volume_overlap={config.volume_overlap}: the {axis} overlap {shared} '
                       f'must be at most half of the tile\'s {size}')
  return tile, overlap


def default_volume_tiling(crop_depth):
  """volume_tiling of denoise.py's defaults (--volume_tile, --volume_overlap) for
  a run trained on crops crop_depth planes deep: what training's evaluation,
  validate.py and the benches run 3D networks in."""
  return volume_tiling(DenoiseConfig(model='-', input='-', output_dir='-'), crop_depth)
