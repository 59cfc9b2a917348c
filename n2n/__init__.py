"""n2n: Noise2Noise image denoisers in TensorFlow 2."""
