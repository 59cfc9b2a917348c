"""Each training method's tensors: how it makes training examples of the data
(a tf.data pipeline of input, target and optionally a mask), the term its loss
adds, and its loss on held-out noisy images. What a method is (its name,
settings, checks, inference scheme) is declared in n2n/methods/, which imports
no TensorFlow; the trainer and evaluation ask n2n/pipelines/registry.py."""
