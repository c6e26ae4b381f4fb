_base_ = 'level0.py'
model = dict(depth=34, widths=[32, 64, 128])
optim_wrapper = dict(optimizer=dict(lr=0.05))
nested = dict(a=dict(b=dict(c=dict(d=2))))
