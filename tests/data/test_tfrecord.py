import numpy as np
import tensorflow as tf

from n2n.data import rgb_images
from n2n.data import tfrecord


def test_serialize_then_parse_round_trips_pixels_and_name():
  image = np.random.default_rng(1).integers(0, 256, size=(17, 23, 3), dtype=np.uint8)
  record = tfrecord.serialize_image(rgb_images.encode_png(image), 17, 23, 'dir/a.png')
  parsed = tfrecord.parse_image(tf.constant(record))
  np.testing.assert_array_equal(parsed['image'].numpy(), image)
  assert parsed['name'].numpy() == b'dir/a.png'


def test_parse_works_in_a_dataset_map():
  image = np.zeros((8, 8, 3), np.uint8)
  records = [tfrecord.serialize_image(rgb_images.encode_png(image), 8, 8, f'{i}') for i in range(3)]
  dataset = tf.data.Dataset.from_tensor_slices(records).map(
      lambda record: tfrecord.parse_image(record)['image'], num_parallel_calls=2)
  assert [element.shape for element in dataset.as_numpy_iterator()] == [(8, 8, 3)] * 3
