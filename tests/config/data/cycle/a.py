_base_ = './b.py'
a = 1
