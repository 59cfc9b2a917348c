# train.py: the program of n2n/apps/train.py (installed as n2n-train); --help says more.
from n2n import apps

if __name__ == '__main__':
  apps.run_train()
