# Runtime settings shared by every example: hooks, logging, environment, randomness.
default_hooks = dict(
    runtime_info=dict(type='RuntimeInfoHook'),
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=10),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=2),
    sampler_seed=dict(type='DistSamplerSeedHook'),
)
# The distributed backend follows the device (nccl on CUDA, gloo on CPU) unless set here.
env_cfg = dict(cudnn_benchmark=False, mp_cfg=dict(mp_start_method='fork'), dist_cfg=dict())
log_processor = dict(type='LogProcessor', window_size=10, by_epoch=True)
visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')])
log_level = 'INFO'
randomness = dict(seed=0, deterministic=False)
load_from = None
resume = False
