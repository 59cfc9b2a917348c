"""Fluorescence-like test volumes and movies, made procedurally (no downloads).

A phantom is nuclei-like ellipsoids with a grainy texture and thin bright
filaments (smooth random curves) on a dim background, blurred by an
anisotropic Gaussian point-spread function (the axial width about three times
the lateral one, in physical units), sampled with a z spacing coarser than
the xy spacing. Acquisitions are Poisson shot noise of the expected photon
counts plus Gaussian read noise, offset and scaled to 16-bit camera counts,
drawn independently for each acquisition; the reference is the expected
counts without noise. A movie is the phantom's objects drifting slowly, one
rendered volume per frame.

Everything here is numpy and pure: the same seed gives the same arrays.
"""

import dataclasses

import numpy as np

from n2n.data import gaussian_blur


@dataclasses.dataclass(frozen=True)
class PhantomSpec:
  """What a phantom looks like and how it is imaged.

  Attributes:
    shape: (Z, Y, X) voxels.
    z_spacing: the z step in units of the xy pixel size (> 1: anisotropic).
    nuclei: number of ellipsoids.
    nucleus_radius: their mean radius, in xy pixels (physical units).
    filaments: number of filaments.
    psf_sigma_xy: the PSF's lateral standard deviation, xy pixels.
    psf_axial_ratio: the PSF's axial width over its lateral width.
    peak_photons: expected photons at the brightest structure (sets the noise).
    background_photons: expected photons of the background.
    read_noise: Gaussian read noise, photons (standard deviation).
    camera_offset: counts added to every voxel (a camera's baseline).
    counts_per_photon: the camera gain.
  """
  shape: tuple = (32, 128, 128)
  z_spacing: float = 4.0
  nuclei: int = 10
  nucleus_radius: float = 14.0
  filaments: int = 12
  psf_sigma_xy: float = 1.2
  psf_axial_ratio: float = 3.0
  peak_photons: float = 30.0
  background_photons: float = 2.0
  read_noise: float = 1.5
  camera_offset: float = 100.0
  counts_per_photon: float = 8.0


def at_z_step(spec, z_step):
  """spec sampled at another z step: the same physical depth (and so the same
  objects for a seed) in as many planes as that takes; ValueError naming z_step
  where that is no whole number of planes, or a value that is not positive."""
  if not z_step > 0:
    raise ValueError(f'z step {z_step:g}: not a positive number')
  planes = spec.shape[0] * spec.z_spacing / z_step
  if abs(planes - round(planes)) > 1e-9:
    raise ValueError(f'z step {z_step:g}: {spec.shape[0]} planes at z step '
                     f'{spec.z_spacing:g} are no whole number of planes at it')
  return dataclasses.replace(spec, z_spacing=z_step, shape=(int(round(planes)),) + spec.shape[1:])


def _objects(spec, rng):
  """Random object parameters in physical units (xy pixels), drawn once per phantom."""
  depth = spec.shape[0] * spec.z_spacing
  size = np.array([depth, spec.shape[1], spec.shape[2]], np.float64)
  nuclei = []
  for _ in range(spec.nuclei):
    centre = rng.uniform(0.1, 0.9, 3) * size
    radii = spec.nucleus_radius * rng.uniform(0.7, 1.3, 3)
    # A grainy texture as a few plane waves in the nucleus' own coordinates,
    # so it moves with the nucleus in a movie.
    waves = rng.normal(scale=0.6, size=(4, 3)), rng.uniform(0, 2 * np.pi, 4)
    nuclei.append((centre, radii, rng.uniform(0.3, 0.7), waves))
  filaments = []
  for _ in range(spec.filaments):
    # A smooth random walk: direction changes slowly along the curve.
    steps = int(max(size[1:]) * 1.5)
    point = rng.uniform(0.0, 1.0, 3) * size
    direction = rng.normal(size=3)
    points = []
    for _ in range(steps):
      direction = direction / np.linalg.norm(direction)
      points.append(point.copy())
      point = point + 0.5 * direction
      direction = direction + rng.normal(scale=0.08, size=3)
    filaments.append((np.array(points), rng.uniform(0.6, 1.0)))
  return nuclei, filaments


def render(spec, objects, drift=(0.0, 0.0, 0.0)):
  """The expected fluorescence of one volume, [Z, Y, X] float64 >= 0, not normalised.

  Args:
    spec: PhantomSpec.
    objects: _objects(spec, rng).
    drift: (z, y, x) displacement of every object, xy pixels (for movies).
  """
  depth, height, width = spec.shape
  nuclei, filaments = objects
  z = (np.arange(depth) + 0.5) * spec.z_spacing
  y = np.arange(height) + 0.5
  x = np.arange(width) + 0.5
  shift = np.asarray(drift, np.float64)
  volume = np.zeros(spec.shape, np.float64)
  for centre, radii, brightness, (wave_vectors, phases) in nuclei:
    dz = z[:, None, None] - (centre[0] + shift[0])
    dy = y[None, :, None] - (centre[1] + shift[1])
    dx = x[None, None, :] - (centre[2] + shift[2])
    inside = (dz / radii[0]) ** 2 + (dy / radii[1]) ** 2 + (dx / radii[2]) ** 2 <= 1.0
    texture = 1.0 + 0.1 * sum(np.sin(k[0] * dz + k[1] * dy + k[2] * dx + phase)
                              for k, phase in zip(wave_vectors, phases))
    volume = np.maximum(volume, inside * brightness * texture)
  lines = np.zeros(spec.shape, np.float64)
  for points, brightness in filaments:
    moved = points + shift
    index = np.floor(moved / np.array([spec.z_spacing, 1.0, 1.0])).astype(int)
    keep = np.all((index >= 0) & (index < np.array(spec.shape)), axis=1)
    # Each step deposits its share of a line of unit brightness per pixel length.
    np.add.at(lines, tuple(index[keep].T), brightness * 0.5)
  # Lines are a voxel thick: the PSF spreads them, so scale them up to stay visible.
  volume = volume + 2.0 * lines
  sigma_xy = spec.psf_sigma_xy
  sigma_z = spec.psf_sigma_xy * spec.psf_axial_ratio / spec.z_spacing
  return np.clip(gaussian_blur.blur(volume, (sigma_z, sigma_xy, sigma_xy)), 0.0, None)


def to_counts(fluorescence, spec, rng=None):
  """Camera counts of a fluorescence volume: uint16 [Z, Y, X].

  Args:
    fluorescence: [Z, Y, X] float64 in [0, 1].
    spec: PhantomSpec (photons, read noise, offset, gain).
    rng: numpy Generator for one noisy acquisition; None for the expected
      counts (the reference).
  """
  photons = spec.background_photons + spec.peak_photons * fluorescence
  if rng is not None:
    photons = rng.poisson(photons) + rng.normal(0.0, spec.read_noise, photons.shape)
  counts = spec.camera_offset + spec.counts_per_photon * photons
  return np.clip(np.round(counts), 0, 65535).astype(np.uint16)


def phantom_scene(spec, seed, acquisitions=2):
  """One phantom volume: its noisy acquisitions and its reference.

  Returns:
    (captures [N, Z, Y, X] uint16, reference [Z, Y, X] uint16), N = acquisitions.
  """
  rng = np.random.default_rng(seed)
  fluorescence = render(spec, _objects(spec, rng))
  fluorescence /= max(fluorescence.max(), 1e-9)
  noise_rng = np.random.default_rng([seed, 1])
  captures = np.stack([to_counts(fluorescence, spec, noise_rng) for _ in range(acquisitions)])
  return captures, to_counts(fluorescence, spec)


def phantom_movie(spec, seed, frames, drift_per_frame=(0.0, 0.3, 0.2)):
  """A movie of one focal plane (the phantom's middle z) while its objects drift.

  Args:
    spec: PhantomSpec; its shape's Z is the depth rendered around the plane.
    drift_per_frame: (z, y, x) displacement per frame, xy pixels.

  Returns:
    (noisy [T, Y, X] uint16, one acquisition per frame; reference [T, Y, X] uint16).
  """
  rng = np.random.default_rng(seed)
  objects = _objects(spec, rng)
  # Every frame on the first frame's scale: brightness stays constant over time.
  scale = 1.0 / max(render(spec, objects).max(), 1e-9)
  noise_rng = np.random.default_rng([seed, 2])
  middle = spec.shape[0] // 2
  noisy, reference = [], []
  for frame in range(frames):
    drift = tuple(frame * step for step in drift_per_frame)
    plane = np.clip(render(spec, objects, drift=drift)[middle] * scale, 0.0, 1.0)
    noisy.append(to_counts(plane[np.newaxis], spec, noise_rng)[0])
    reference.append(to_counts(plane[np.newaxis], spec)[0])
  return np.stack(noisy), np.stack(reference)
