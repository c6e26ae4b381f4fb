# AdamW for 2,000 iterations: linear warm-up, then cosine decay; validate every 500.
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1),
    clip_grad=dict(max_norm=1.0),
)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.01, by_epoch=False, begin=0, end=100),
    dict(type='CosineAnnealingLR', by_epoch=False, begin=100, end=2000, eta_min_ratio=0.1),
]
train_cfg = dict(by_epoch=False, max_iters=2000, val_interval=500)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(enable=False, base_batch_size=32)
