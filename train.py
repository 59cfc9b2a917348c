from n2n.apps.train import run
if __name__ == '__main__':
  run()
