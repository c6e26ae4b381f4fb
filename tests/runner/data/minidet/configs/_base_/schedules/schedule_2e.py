optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="Adam", lr=0.01))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=4),
    dict(type="MultiStepLR", by_epoch=True, milestones=[3], gamma=0.1),
]
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=2, val_interval=1)
val_cfg = dict(type="ValLoop")
test_cfg = dict(type="TestLoop")
