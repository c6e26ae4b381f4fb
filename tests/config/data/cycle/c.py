_base_ = './a.py'
c = 1
