"""Neighbouring frames of a movie as Noise2Noise pairs (DeepCAD-RT's idea: Li et al.,
Nature Biotechnology 2023), for time-lapse movies of one noisy acquisition.

A training crop of 2 x --crop_depth consecutive frames becomes a pair: its
even frames are the input, its odd frames the target. Each input frame's
target is the next frame: the same scene a frame later with independent
noise, which is a Noise2Noise pair as long as the scene does not move between
frames. The 3D network (time as depth) then denoises the whole movie, every
frame. Motion between frames is the known limit: what moves in one frame
interval is averaged with its neighbour, so fast objects blur and trail. To see
it, look at the residual (noisy minus denoised) around moving objects: noise
alone there is fine; their edges or ghosts in the residual mean the frames are
too far apart for this method (docs/volumes.md).
"""

from n2n.corruptions import catalog
from n2n.methods import base


class NeighbouringFrames(base.Method):
  name = 'neighbouring_frames'
  summary = ('movies of one acquisition (--noise=none, 3D): each frame\'s target is the '
             'next frame (DeepCAD-RT).')
  # One acquisition per movie, but not a single-image method in base.Method's
  # sense: it has no held-out loss and no pixel-shuffle scheme.
  single_image = False
  volumes = True
  images = False
  frames_per_crop_plane = 2
  citations = (('Li et al. Real-time denoising enables high-sensitivity fluorescence '
                'time-lapse imaging beyond the shot-noise limit (DeepCAD-RT). Nature '
                'Biotechnology 2023.', '10.1038/s41587-022-01450-8'),)

  def describe(self, config):
    return 'Noise2Noise between neighbouring frames of a movie (DeepCAD-RT)'

  def check(self, config):
    if config.corruption.noise != catalog.NO_NOISE:
      raise ValueError(f'--method=neighbouring_frames trains on real movies (--noise=none), '
                       f'not --noise={config.corruption.noise}')
    if config.method.target != 'noisy':
      raise ValueError('--method=neighbouring_frames has no clean target (--target=noisy)')


METHOD = NeighbouringFrames()
