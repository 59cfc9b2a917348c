"""Training methods, one module each, and the registry everything else asks."""
