# export.py: the program of n2n/apps/export.py (installed as n2n-export); --help says more.
from n2n import apps

if __name__ == '__main__':
  apps.run_export()
