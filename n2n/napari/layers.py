"""What the widgets read from napari's image layers and how they add their
results: the layer's pixels and its axes in n2n's letters (denoise.py's
--axes), and a new layer placed where its source is.
"""

import numpy as np
from napari.layers import Image

from n2n.data import volumes

# The axis letters a layer's labels may give as they are (denoise.py --axes):
# time, depth, height, width, channels.
AXIS_LETTERS = volumes.CANONICAL_AXES
# A guess for a layer without usable axis labels, by its spatial dimensions
# (napari's own dimensions; an RGB layer's colours are its last axis, C).
_AXES_BY_DIMENSIONS = {2: 'YX', 3: 'ZYX', 4: 'TZYX'}
# What each layer setting copied to a result is called in napari.
_PLACEMENT = ('scale', 'translate', 'rotate', 'shear', 'units', 'axis_labels')


# The choice of no layer, where one is optional.
NO_LAYER = 'none'


def layer_choices(viewer, widget=None, optional=False):
  """The viewer's image layers as a widget's (name, layer) choices; with
  optional, (NO_LAYER, None) first. widget: magicgui's argument, unused."""
  del widget
  return ([(NO_LAYER, None)] if optional else []) + [
      (layer.name, layer) for layer in viewer.layers if isinstance(layer, Image)]


def _full_resolution(layer):
  """A layer's data, the full-resolution level of a multiscale layer (not read yet)."""
  return layer.data[0] if layer.multiscale else layer.data


def pixels(layer):
  """A layer's pixels as numpy (the full-resolution level of a multiscale layer)."""
  return np.asarray(_full_resolution(layer))


def is_stack(layer, axes):
  """Whether the layer, laid out in axes (n2n's letters), holds more than one plane
  along Z or T: a stack, which trains the 3D network. False where axes do not fit it."""
  shape = np.shape(_full_resolution(layer))
  axes = axes.strip().upper()
  return len(axes) == len(shape) and any(
      size > 1 for letter, size in zip(axes, shape) if letter in 'ZT')


def channels(layer, axes):
  """How many channels the layer has, laid out in axes (n2n's letters): its C (or S)
  axis's size, 1 without one; None where axes do not fit it."""
  shape = np.shape(_full_resolution(layer))
  axes = axes.strip().upper().replace('S', 'C')
  if len(axes) != len(shape):
    return None
  return shape[axes.index('C')] if 'C' in axes else 1


def axes_of(layer):
  """The layer's axes as n2n's letters, e.g. 'YX', 'YXC' (RGB), 'ZYX', 'TZYX':
  its axis labels where they are such letters (z, y, x...), else a guess from
  its dimensions ('' where there is none: the user types them)."""
  labels = ''.join(str(label) for label in layer.axis_labels).upper()
  colours = 'C' if layer.rgb else ''
  spatial = layer.ndim
  if len(labels) == spatial and set(labels) <= set(AXIS_LETTERS) and len(set(labels)) == spatial:
    return labels + colours
  guess = _AXES_BY_DIMENSIONS.get(spatial)
  return guess + colours if guess else ''


def planes(array, axes):
  """[H, W] or [H, W, C] planes of array, laid out in axes (n2n's letters),
  one per index of its other axes: what n2n.diagnose takes as images.

  Raises:
    ValueError: axes that do not fit array (volumes.check_axes names why).
  """
  axes = axes.strip().upper()
  volumes.check_axes(axes, array.ndim, f'a layer of shape {array.shape}')
  canonical = volumes.to_canonical(array, axes)  # [T, Z, Y, X, C]
  images = canonical.reshape((-1,) + canonical.shape[2:])
  return list(images if set('CS') & set(axes) else images[..., 0])


def add_like(viewer, data, source, name):
  """Adds data as a new image layer placed as source is (scale, translate,
  rotation, shear, units, axis labels), with its metadata, colours and contrast."""
  settings = {setting: getattr(source, setting) for setting in _PLACEMENT}
  settings.update(name=name, metadata=dict(source.metadata), rgb=source.rgb,
                  blending=source.blending, contrast_limits=source.contrast_limits)
  if not source.rgb:
    settings['colormap'] = source.colormap
  return viewer.add_image(data, **settings)
