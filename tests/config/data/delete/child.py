_base_ = './base.py'
model = dict(backbone=dict(_delete_=True, type='Swin', embed_dims=96))
runner = dict(_delete_=True, type='IterBasedRunner', max_iters=1000)
items = [9]
value = dict(_delete_=True, a=1)
