_base_ = './c.py'
b = 1
