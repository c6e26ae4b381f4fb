_base_ = ['./level1.py']
model = dict(head=dict(_delete_=True, type='OtherHead', k=3))
optim_wrapper = dict(optimizer=dict(_delete_=True, type='AdamW', lr=1e-3, betas=(0.9, 0.99)))
extra = [dict(type='A'), dict(type='B', x=(1,))]
