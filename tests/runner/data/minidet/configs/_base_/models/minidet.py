model = dict(
    type="MiniDet",
    data_preprocessor=dict(type="MiniDetDataPreprocessor"),
    backbone=dict(type="ConvBNReLUBackbone", channels=(16, 32), norm_eval=True),
    head=dict(type="BoxClsHead", in_channels=32, feat_size=8, num_classes=3),
)
