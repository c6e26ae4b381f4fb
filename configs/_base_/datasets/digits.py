# scikit-learn's bundled handwritten digits (1,797 8x8 images), split 80/20 into train/val.
dataset_type = 'DigitsDataset'
train_dataloader = dict(
    batch_size=64,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type=dataset_type, split='train'),
)
val_dataloader = dict(
    batch_size=256,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type=dataset_type, split='val'),
)
test_dataloader = val_dataloader
val_evaluator = dict(type='Accuracy', topk=(1,))
test_evaluator = val_evaluator
