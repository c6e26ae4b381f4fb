# Byte-level text read from the Python standard library's own source files (offline).
block_size = 128
train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='CharTextDataset', split='train', block_size=block_size),
)
val_dataloader = dict(
    batch_size=64,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='CharTextDataset', split='val', block_size=block_size),
)
test_dataloader = val_dataloader
val_evaluator = dict(type='Perplexity')
test_evaluator = val_evaluator
