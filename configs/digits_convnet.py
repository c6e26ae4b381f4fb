# Example 1: a small ConvNet on scikit-learn's handwritten digits, trained on CPU in seconds.
_base_ = [
    '_base_/models/digits_convnet.py',
    '_base_/datasets/digits.py',
    '_base_/schedules/sgd_10e.py',
    '_base_/default_runtime.py',
]
train_cfg = dict(max_epochs=8)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=20),
    dict(type='CosineAnnealingLR', by_epoch=True, begin=0, end=8),
]
