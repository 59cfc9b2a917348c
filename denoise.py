from n2n.apps.denoise import run
if __name__ == '__main__':
  run()
