# validate.py: the program of n2n/apps/validate.py (installed as n2n-validate); --help says more.
from n2n import apps

if __name__ == '__main__':
  apps.run_validate()
