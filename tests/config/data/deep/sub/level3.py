_base_ = '../level2.py'
model = dict(strides=[2, 2], head=dict(k=5))
nested = dict(a=dict(b=dict(_delete_=True, z=0)))
