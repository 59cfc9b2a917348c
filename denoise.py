# denoise.py: the program of n2n/apps/denoise.py (installed as n2n-denoise); --help says more.
from n2n import apps

if __name__ == '__main__':
  apps.run_denoise()
