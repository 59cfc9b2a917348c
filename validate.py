from n2n.apps.validate import run
if __name__ == '__main__':
  run()
