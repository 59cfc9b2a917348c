"""Training elements from single noisy images: Neighbor2Neighbor sub-images and
blind-spot masks (pure data transforms; the methods that use them, with their
loss terms, are n2n/methods/neighbor2neighbor.py and blind_spot.py).

Neither needs a second capture or a clean image; both train the ordinary
U-Net, so validation, denoising and export are unchanged.

- Neighbor2Neighbor (Huang et al., CVPR 2021): Noise2Noise on two
  half-resolution sub-images of one noisy image. In every 2x2 cell a random
  neighbour sub-sampler picks two different, adjacent pixels (horizontal or
  vertical neighbours, as the paper's sampler), one for each sub-image; the
  network maps the first sub-image to the second. The regulariser compares
  that difference with the same sub-sampling of the network's output on the
  whole noisy image, computed without gradient (n2n/methods/neighbor2neighbor.py).
- Blind-spot (Noise2Void, Krull et al., CVPR 2019, with N2V2's replacement,
  Hoeck et al. 2022): a small fraction of pixels is replaced by the median of
  its 5x5 neighbourhood without the pixel itself, and the loss is taken at
  those pixels only (the masked L2 loss), so the network cannot learn the
  identity.

Every function is pure TensorFlow with explicit stateless seeds, for tf.data.
"""

import itertools

import tensorflow as tf

# The 2x2 cell's pixels are numbered 0 1 / 2 3. The sampler's ordered pairs of
# different, adjacent pixels: right/left and down/up neighbours (never diagonal).
NEIGHBOUR_PAIRS = ((0, 1), (0, 2), (1, 3), (2, 3), (1, 0), (2, 0), (3, 1), (3, 2))
# A 2x2x2 cell's voxels are numbered 4 z + 2 y + x. The ordered pairs of voxels
# adjacent along one axis (z, y or x; never diagonal): the 12 edges of the cube,
# each either way.
VOXEL_NEIGHBOUR_PAIRS = tuple((first, first ^ step) for first in range(8) for step in (1, 2, 4))
# --neighbor2neighbor_cells: 2x2 cells in each xy plane, or 2x2x2 cells.
PLANE_CELLS, CUBE_CELLS = 'xy', 'xyz'
# N2V2's replacement window: the median of the 5x5 neighbourhood without its centre.
BLIND_SPOT_WINDOW = 5


def even_crop(images):
  """[B, H, W, C] -> [B, H - H % 2, W - W % 2, C]: sub-sampling needs whole cells."""
  height, width = tf.shape(images)[1], tf.shape(images)[2]
  return images[:, :height - height % 2, :width - width % 2]


def neighbour_positions(batch, height, width, seed):
  """The sampler's choice for every 2x2 cell of a batch.

  Args:
    batch, height, width: ints or scalar tensors; height and width of the
      images (even).
    seed: [2] int32 stateless seed; per image and per step by the caller's fold-in.

  Returns:
    [batch, height // 2, width // 2, 2] int32 in 0..3: the cell pixel of the
    first and of the second sub-image, always two different neighbours.
  """
  choice = tf.random.stateless_uniform([batch, height // 2, width // 2], seed, 0,
                                       len(NEIGHBOUR_PAIRS), dtype=tf.int32)
  return tf.gather(tf.constant(NEIGHBOUR_PAIRS, tf.int32), choice)


def _cells(images):
  """[B, H, W, C] (H, W even) -> [B, H/2, W/2, 4, C]: each 2x2 cell's pixels 0 1 / 2 3."""
  shape = tf.shape(images)
  batch, height, width = shape[0], shape[1], shape[2]
  channels = images.shape[-1]
  cells = tf.reshape(images, [batch, height // 2, 2, width // 2, 2, channels])
  return tf.reshape(tf.transpose(cells, [0, 1, 3, 2, 4, 5]),
                    [batch, height // 2, width // 2, 4, channels])


def _planes(volumes):
  """[B, D, H, W, C] -> [B * D, H, W, C]: a volume's xy planes as images."""
  shape = tf.shape(volumes)
  return tf.reshape(volumes, tf.concat([[shape[0] * shape[1]], shape[2:]], axis=0))


def _volumes(planes, depth):
  """The inverse of _planes: [B * D, ...] -> [B, D, ...]."""
  shape = tf.shape(planes)
  return tf.reshape(planes, tf.concat([[shape[0] // depth, depth], shape[1:]], axis=0))


def _voxel_cells(volumes):
  """[B, D, H, W, C] (D, H, W even) -> [B, D/2, H/2, W/2, 8, C]: each 2x2x2
  cell's voxels, numbered 4 z + 2 y + x."""
  shape = tf.shape(volumes)
  batch, depth, height, width = shape[0], shape[1], shape[2], shape[3]
  channels = volumes.shape[-1]
  cells = tf.reshape(volumes, [batch, depth // 2, 2, height // 2, 2, width // 2, 2, channels])
  return tf.reshape(tf.transpose(cells, [0, 1, 3, 5, 2, 4, 6, 7]),
                    [batch, depth // 2, height // 2, width // 2, 8, channels])


def voxel_neighbour_positions(batch, depth, height, width, seed):
  """The sampler's choice for every 2x2x2 cell of a batch of volumes (D, H, W even):
  [batch, depth // 2, height // 2, width // 2, 2] int32 in 0..7, two voxels of
  the cell adjacent along z, y or x (VOXEL_NEIGHBOUR_PAIRS, drawn uniformly)."""
  choice = tf.random.stateless_uniform([batch, depth // 2, height // 2, width // 2], seed, 0,
                                       len(VOXEL_NEIGHBOUR_PAIRS), dtype=tf.int32)
  return tf.gather(tf.constant(VOXEL_NEIGHBOUR_PAIRS, tf.int32), choice)


def subsample(images, positions, cells=PLANE_CELLS):
  """One pixel of every 2x2 cell: [B, H, W, C] (H, W even), [B, H/2, W/2] in 0..3
  -> [B, H/2, W/2, C]. Every channel takes the same pixel.

  Volumes [B, D, H, W, C] with positions [B, D, H/2, W/2] are sub-sampled plane
  by plane in xy (-> [B, D, H/2, W/2, C]): z keeps every plane. With
  cells=CUBE_CELLS, one voxel of every 2x2x2 cell: positions [B, D/2, H/2, W/2]
  in 0..7 -> [B, D/2, H/2, W/2, C].
  """
  if images.shape.rank == 5:
    if cells == CUBE_CELLS:
      return tf.gather(_voxel_cells(images), positions, axis=4, batch_dims=4)
    depth = tf.shape(images)[1]
    return _volumes(subsample(_planes(images), _planes(positions)), depth)
  return tf.gather(_cells(images), positions, axis=3, batch_dims=3)


def neighbor2neighbor_pair(noisy, seed, cells=PLANE_CELLS):
  """The training element of one batch of noisy crops.

  Args:
    noisy: [B, S, S, C] float32, S a multiple of 64 (the sub-images pass the
      U-Net's five poolings); or volumes [B, D, S, S, C], by default
      sub-sampled plane by plane in xy with a sampler draw of their own (z keeps
      every plane: on anisotropic stacks a z neighbour is several xy pixels
      away, and thin crops could not lose half their planes).
    seed: [2] int32 stateless seed.
    cells: for volumes, PLANE_CELLS (as above) or CUBE_CELLS: 2x2x2 cells, the
      two voxels adjacent along z, y or x, sub-volumes [B, D/2, S/2, S/2, C]
      (D a multiple of twice the network's z multiple).

  Returns:
    {'input': first sub-image, 'target': second sub-image ([B, S/2, S/2, C]),
     'full': noisy, 'positions': [B, S/2, S/2, 2] int32} for the regulariser
    (n2n/methods/neighbor2neighbor.py); volumes' have D (or D/2) after B.
  """
  if noisy.shape.rank == 5 and cells == CUBE_CELLS:
    shape = tf.shape(noisy)
    positions = voxel_neighbour_positions(shape[0], shape[1], shape[2], shape[3], seed)
    both = tf.gather(_voxel_cells(noisy), positions, axis=4, batch_dims=4)
    return {'input': both[..., 0, :], 'target': both[..., 1, :], 'full': noisy,
            'positions': positions}
  if noisy.shape.rank == 5:
    depth = tf.shape(noisy)[1]
    planes = neighbor2neighbor_pair(_planes(noisy), seed)
    return {'input': _volumes(planes['input'], depth), 'target': _volumes(planes['target'], depth),
            'full': noisy, 'positions': _volumes(planes['positions'], depth)}
  shape = tf.shape(noisy)
  positions = neighbour_positions(shape[0], shape[1], shape[2], seed)
  # Both sub-images in one gather from one rearrangement of the crops.
  both = tf.gather(_cells(noisy), positions, axis=3, batch_dims=3)  # [B, S/2, S/2, 2, C]
  return {'input': both[..., 0, :], 'target': both[..., 1, :], 'full': noisy,
          'positions': positions}


def _reflected(index, size):
  """Coordinates mirrored into 0..size-1 about the edge pixels, as numpy's and
  TensorFlow's 'reflect' padding (-1 -> 1, -2 -> 2, size -> size - 2).

  Args:
    index: int32 tensor of coordinates, any integers.
    size: scalar int32, the axis length (>= 1; an axis of 1 maps everything to 0).
  """
  period = tf.maximum(2 * (size - 1), 1)
  index = tf.math.floormod(index, period)
  return tf.where(index >= size, period - index, index)


def _usable_axes(rank, line_axis):
  """The spatial axes (0 = the first after the batch) in which a neighbour must
  differ from the masked pixel to be usable: any of them, or with a structN2V
  line every axis but the line's (rows run along x, the last axis; columns
  along y, the one before it), so the line's pixels are left out."""
  axes = list(range(rank))
  if line_axis == 'rows':
    axes.remove(rank - 1)
  elif line_axis == 'columns':
    axes.remove(rank - 2)
  return axes


def medians_without_centre(images, positions, line_axis=None):
  """The median of the 5x5 neighbourhood without the pixel itself, per channel,
  at the given pixels only; for volumes the 5x5x5 neighbourhood.

  With line_axis 'rows' the window's whole centre row is left out, with
  'columns' its centre column (structN2V): noise correlated along that line
  then cannot reach the median. In a volume the line lies in the masked
  voxel's xy plane; the same row of other planes stays in the window (row
  noise is per plane: per frame of a camera).

  At the borders the window's coordinates are mirrored into the image. A
  mirrored coordinate can land on the pixel itself (in rows and columns 1 and
  S-2, an offset of 2 towards the edge reflects back onto it): those copies are
  left out, so the median is over the other neighbours and the pixel's own
  value never reaches its replacement (a blind spot that saw itself would let
  the network learn the identity there).

  Args:
    images: [B, H, W, C] or [B, D, H, W, C] float32.
    positions: [N, 3] int32 (image, row, column), or [N, 4] (volume, plane,
      row, column).
    line_axis: None, 'rows' or 'columns'.

  Returns:
    [N, C] float32.
  """
  half = BLIND_SPOT_WINDOW // 2
  rank = images.shape.rank - 2
  sizes = tf.shape(images)[1:1 + rank]
  centre = [positions[:, 1 + axis] for axis in range(rank)]
  compared = _usable_axes(rank, line_axis)
  neighbours, usable = [], []
  for offsets in itertools.product(range(-half, half + 1), repeat=rank):
    if not any(offsets):
      continue
    coordinates = [_reflected(centre[axis] + offsets[axis], sizes[axis])
                   for axis in range(rank)]
    neighbours.append(tf.gather_nd(images, tf.stack([positions[:, 0]] + coordinates, axis=-1)))
    # Compared after mirroring: a mirrored copy of the pixel (or of its line) is the pixel.
    usable.append(tf.reduce_any(tf.stack([coordinates[axis] != centre[axis]
                                          for axis in compared]), axis=0))
  values = tf.stack(neighbours, axis=-1)  # [N, C, 24] (124 in a volume)
  usable = tf.stack(usable, axis=-1)[:, tf.newaxis, :]  # [N, 1, 24]
  # The pixel's own mirrored copies sort to the end, past every usable value.
  largest = tf.fill(tf.shape(values), values.dtype.max)
  ordered = tf.sort(tf.where(usable, values, largest), axis=-1)
  count = tf.broadcast_to(tf.reduce_sum(tf.cast(usable, tf.int32), axis=-1),
                          tf.shape(values)[:2])  # [N, C]
  lower = tf.gather(ordered, tf.maximum(count - 1, 0) // 2, batch_dims=2)
  upper = tf.gather(ordered, count // 2, batch_dims=2)
  median = 0.5 * (lower + upper)
  # A 1x1 image has no neighbour at all: it keeps its value.
  return tf.where(count > 0, median, tf.gather_nd(images, positions))


def line_positions(positions, line_axis, span, sizes):
  """The other pixels of each masked pixel's structN2V line, inside the image.

  Args:
    positions: [N, 1 + k] int32 (image, then k spatial coordinates) of the
      masked pixels.
    line_axis: 'rows' (the line runs along the row: x, the last axis) or
      'columns' (along y); in a volume the line lies in the pixel's xy plane.
    span: the line's length in pixels, odd, the masked pixel at its centre.
    sizes: [k] int32, the images' spatial size.

  Returns:
    [N * (span - 1), 1 + k] int32; offsets past the border are clipped onto it
    (a line pixel counted twice is replaced twice with the same value).
  """
  half = span // 2
  offsets = tf.constant([offset for offset in range(-half, half + 1) if offset], tf.int32)
  rank = positions.shape[-1] - 1
  along = 1 + (rank - 1 if line_axis == 'rows' else rank - 2)
  repeated = tf.repeat(positions, span - 1, axis=0)
  shifts = tf.tile(offsets, tf.shape(positions)[:1])
  moved = tf.clip_by_value(repeated[:, along] + shifts, 0, sizes[along - 1] - 1)
  return tf.concat([repeated[:, :along], moved[:, tf.newaxis], repeated[:, along + 1:]], axis=1)


def blind_spot_pair(noisy, fraction, seed, line_axis=None, line_span=1):
  """The training element of one batch of noisy crops for blind-spot training.

  Exactly round(fraction * H * W) pixels per image (at least one) are masked,
  at positions drawn without replacement, the same for every channel; each is
  replaced by its neighbourhood's median, which never includes itself. Only
  the masked pixels' medians are computed: at Noise2Void's 0.2% that is 1 in
  500 of what a median filter of the whole crop would cost. Volumes mask
  round(fraction * D * H * W) voxels, each replaced by the median of its
  5x5x5 neighbourhood (Noise2Void's 3D window).

  With line_axis (structN2V, Broaddus et al., ISBI 2020), the line_span - 1
  other pixels of a line through each masked pixel, along its row ('rows') or
  column ('columns'), are replaced with the same median, which leaves out the
  window's centre row or column: noise correlated along that line cannot show
  the network the masked pixel's noise.

  Args:
    noisy: [B, H, W, C] or [B, D, H, W, C] float32.
    fraction: the share of pixels masked, in (0, 1).
    seed: [2] int32 stateless seed.
    line_axis: None, 'rows' or 'columns'.
    line_span: the structN2V line's length, odd (1: Noise2Void's single pixel).

  Returns:
    {'input': noisy with the masked pixels replaced, 'target': noisy,
     'target_mask': [B, H, W, 1] ([B, D, H, W, 1]) float32, 1 at masked
    pixels}: with the masked L2 loss the loss is taken at the masked pixels only.
  """
  shape = tf.shape(noisy)
  batch, sizes = shape[0], shape[1:-1]
  pixels = tf.reduce_prod(sizes)
  count = tf.maximum(1, tf.cast(tf.round(fraction * tf.cast(pixels, tf.float32)), tf.int32))
  # The count smallest of independent uniforms: a uniform draw without replacement.
  scores = tf.random.stateless_uniform([batch, pixels], seed)
  _, chosen = tf.math.top_k(-scores, k=count, sorted=False)  # [B, count]
  images = tf.repeat(tf.range(batch)[:, tf.newaxis], count, axis=1)
  coordinates = tf.unravel_index(tf.reshape(chosen, [-1]), sizes)  # [k, B * count]
  positions = tf.concat([tf.reshape(images, [1, -1]), coordinates], axis=0)
  positions = tf.transpose(positions)  # [B * count, 1 + k]
  medians = medians_without_centre(noisy, positions, line_axis)
  if line_axis and line_span > 1:
    # The line first, the masked pixels last: where lines cross a masked pixel
    # its own median wins.
    line = line_positions(positions, line_axis, line_span, sizes)
    noisy_input = tf.tensor_scatter_nd_update(noisy, line,
                                              tf.repeat(medians, line_span - 1, axis=0))
  else:
    noisy_input = noisy
  replaced = tf.tensor_scatter_nd_update(noisy_input, positions, medians)
  mask = tf.scatter_nd(positions, tf.ones([batch * count, 1], noisy.dtype),
                       tf.concat([shape[:-1], [1]], axis=0))
  return {'input': replaced, 'target': noisy, 'target_mask': mask}
