default_scope = "minidet"

default_hooks = dict(
    timer=dict(type="IterTimerHook"),
    logger=dict(type="LoggerHook", interval=5),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", interval=1, save_best="toy/mIoU", rule="greater"),
    sampler_seed=dict(type="DistSamplerSeedHook"),
)
env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method="fork", opencv_num_threads=0),
    dist_cfg=dict(backend="nccl"),
)
visualizer = dict(type="MiniDetVisualizer", vis_backends=[dict(type="LocalVisBackend")])
log_processor = dict(type="LogProcessor", window_size=5, by_epoch=True)
log_level = "INFO"
load_from = None
resume = False
randomness = dict(seed=0)
