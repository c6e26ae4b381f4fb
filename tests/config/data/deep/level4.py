_base_ = './sub/level3.py'
model = dict(type='Net4')
extra = None
flag = True
ratio = 0.25
