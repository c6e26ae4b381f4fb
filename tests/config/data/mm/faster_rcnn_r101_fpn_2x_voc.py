_base_ = './faster_rcnn_r50_fpn_1x_coco.py'
model = dict(
    backbone=dict(
        depth=101,
        init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet101')),
    roi_head=dict(bbox_head=dict(num_classes=20)))
train_cfg = dict(max_epochs=24)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),
    dict(type='MultiStepLR', begin=0, end=24, by_epoch=True, milestones=[16, 22], gamma=0.1)
]
optim_wrapper = dict(optimizer=dict(lr=0.01), clip_grad=dict(max_norm=35, norm_type=2))
train_dataloader = dict(batch_size=4, dataset=dict(ann_file='voc/train.json'))
