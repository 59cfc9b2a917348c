from n2n.apps.denoise import __doc__, run  # noqa: F401  (absl's --help prints __main__'s __doc__)
if __name__ == '__main__':
  run()
