# A small ConvNet for 8x8 handwritten digits (10 classes).
model = dict(
    type='DigitsConvNet',
    channels=(16, 32),
    num_classes=10,
    data_preprocessor=dict(type='BaseDataPreprocessor'),
)
