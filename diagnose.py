# diagnose.py: the program of n2n/apps/diagnose.py (installed as n2n-diagnose); --help says more.
from n2n import apps

if __name__ == '__main__':
  apps.run_diagnose()
