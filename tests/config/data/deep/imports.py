import os.path as osp
from math import sqrt

work_dir = osp.join('work_dirs', 'imports')
root = sqrt(16)
