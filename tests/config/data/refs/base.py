img_scale = (640, 480)
train_pipeline = [
    dict(type='Load'),
    dict(type='Resize', scale=(1333, 800), keep_ratio=True),
    dict(type='Pack'),
]
model = dict(type='Net', backbone=dict(type='Backbone', channels=64), num_classes=10)
lr = 0.01
