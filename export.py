from n2n.apps.export import run
if __name__ == '__main__':
  run()
