"""Writing a trained run in the formats other programs run: the SavedModel
(saved_model), TensorFlow Lite (tflite_model), ONNX (onnx_model) and the
BioImage Model Zoo package (bioimageio_package). Reading an export back is
serving's: n2n/inference/exported_model.py."""
