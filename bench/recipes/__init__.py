"""The learning tests' recipes: the data they write and the short runs they train, in
one place for the tests (tests/, which assert bounds on them) and the spread tools
(bench/learning_test_spread.py, bench/volume_learning_spread.py, which run them over
seeds to set those bounds). Each module names the tests that use it."""


def two_logical_cpus():
  """Splits the CPU into two logical devices, as the suite runs (tests/conftest.py), so
  that MirroredStrategy has two replicas on one CPU and a recipe run by a spread tool
  sees the devices its test sees. Call it before TensorFlow runs anything."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (not when the package loads)
  cpus = tf.config.list_physical_devices('CPU')
  tf.config.set_logical_device_configuration(cpus[0],
                                             [tf.config.LogicalDeviceConfiguration()] * 2)
