"""Small smooth photographs: the suite's image folder and records (tests/conftest.py's
image_folder and tfrecord_dir fixtures) and the clean photographs scene tests simulate
captures from. No TensorFlow until a writer runs: the suite's conftest imports this."""

import imageio.v3 as iio
import numpy as np


def smooth_image(rng, height, width, channels=3):
  """A random smooth uint8 image (low-frequency blobs): denoisable content."""
  coarse = rng.uniform(0, 255, size=(height // 8 + 2, width // 8 + 2, channels))
  image = np.kron(coarse, np.ones((8, 8, 1)))[:height, :width]
  return image.astype(np.uint8)


def write_clean_photo_splits(root, splits, height, width, seed=0):
  """Writes smooth RGB PNGs: root/clean_SPLIT/photoI.png for each (split, count).

  The clean photographs simulated_scenes.write_scenes makes scene tests' captures from.
  """
  rng = np.random.default_rng(seed)
  from n2n.data import native_images  # pylint: disable=g-import-not-at-top
  for split, count in splits:
    (root / f'clean_{split}').mkdir()
    for index in range(count):
      (root / f'clean_{split}' / f'photo{index}.png').write_bytes(
          native_images.encode_pages([smooth_image(rng, height, width)], 'png'))


def write_image_folder(folder):
  """Writes 6 small PNGs (one grayscale, one RGBA) plus a corrupt file into folder."""
  rng = np.random.default_rng(0)
  for index in range(4):
    iio.imwrite(folder / f'rgb{index}.png', smooth_image(rng, 72 + 8 * index, 96))
  iio.imwrite(folder / 'gray.png', smooth_image(rng, 80, 80, 1)[:, :, 0])
  rgba = np.concatenate([smooth_image(rng, 64, 88), np.full((64, 88, 1), 128, np.uint8)], -1)
  iio.imwrite(folder / 'alpha.png', rgba)
  (folder / 'broken.png').write_bytes(b'\x89PNG\r\n\x1a\n not really a png')
  return folder


def write_image_records(image_folder, output):
  """TFRecords of image_folder written by the dataset tool's library (2 shards) into output."""
  from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
  dataset_writer.write_dataset(str(image_folder), str(output), num_shards=2, min_size=32)
  return output


def write_image_data(root):
  """The suite's image folder and its records under root: (root/images, root/records),
  what the image_folder and tfrecord_dir fixtures hold (for tools that run tests' setups)."""
  (root / 'images').mkdir()
  (root / 'records').mkdir()
  return (write_image_folder(root / 'images'),
          write_image_records(root / 'images', root / 'records'))

