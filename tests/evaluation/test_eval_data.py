"""The evaluation's data: clean images from a folder or TFRecords (scenes are
tested with scene training, tests/training/test_scene_training.py)."""

import numpy as np
import pytest

from n2n.evaluation import eval_data


def test_eval_images_from_folder_skip_non_images(image_folder):
  images = eval_data.load_eval_images(str(image_folder))
  names = [name for name, _ in images]
  assert 'broken.png' not in names and len(names) == 6
  assert all(image.shape[-1] == 3 and image.dtype == np.uint8 for _, image in images)
  gray = eval_data.load_eval_images(str(image_folder), channels=1, max_images=2)
  assert len(gray) == 2 and gray[0][1].shape[-1] == 1


def test_eval_images_from_tfrecords(tfrecord_dir):
  images = eval_data.load_eval_images(str(tfrecord_dir / '*.tfrecord'))
  assert len(images) == 6


def test_eval_folder_without_images_is_an_error(tmp_path):
  (tmp_path / 'readme.txt').write_text('no images here')
  with pytest.raises(ValueError, match='--val_data: no readable image in'):
    eval_data.load_eval_images(str(tmp_path))
