_base_ = './child.py'
_base_.model.backbone.channels = 256
pipeline_copy = {{_base_.test_pipeline}}
