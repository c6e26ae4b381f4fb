# SGD with momentum for 10 epochs: a short linear warm-up, then cosine decay.
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.1, momentum=0.9, weight_decay=1e-4),
)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=20),
    dict(type='CosineAnnealingLR', by_epoch=True, begin=0, end=10),
]
train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()
# lr above is for a total batch of 64; --auto-scale-lr rescales it for other batch sizes.
auto_scale_lr = dict(enable=False, base_batch_size=64)
