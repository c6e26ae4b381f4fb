dataset_type = "ToyBoxDataset"
data_root = "data/toy/"

train_pipeline = [
    dict(type="LoadNpyImage"),
    dict(type="RandomHFlip", prob=0.5),
    dict(type="PackMiniDetInputs"),
]
test_pipeline = [dict(type="LoadNpyImage"), dict(type="PackMiniDetInputs")]

train_dataloader = dict(
    batch_size=8,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file="annotations.json",
        data_prefix=dict(img_path="images/"),
        pipeline=train_pipeline,
    ),
)
val_dataloader = dict(
    batch_size=8,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file="annotations.json",
        data_prefix=dict(img_path="images/"),
        pipeline=test_pipeline,
        test_mode=True,
    ),
)
test_dataloader = val_dataloader
val_evaluator = dict(type="BoxIoUAccuracy")
test_evaluator = val_evaluator
