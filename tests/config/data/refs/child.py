_base_ = ['./base.py']
_base_.train_pipeline[1]['scale'] = (800, 600)
num_classes = {{_base_.model.num_classes}}
head = dict(type='Head', in_channels=_base_.model.backbone.channels, num_classes={{ _base_.model.num_classes }})
test_pipeline = _base_.train_pipeline
scaled_lr = _base_.lr * 2
model = dict(backbone=dict(channels=_base_.model.backbone.channels * 2))
whole_model = {{_base_.model}}
