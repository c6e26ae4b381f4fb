"""MMEngine's strategy objects (``mmengine._strategy``) for scripts that drive the training
loop themselves, as MMEngine's ``examples/llama2/fsdp_finetune.py`` does::

    from runnerx._strategy import FSDPStrategy

    strategy = FSDPStrategy(
        model_wrapper=dict(auto_wrap_policy=partial(
            transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer})),
        state_dict_cfg='full',
        env_kwargs=dict(randomness=dict(seed=42)))
    model, optim_wrapper, schedulers = strategy.prepare(
        model, optim_wrapper=dict(optimizer=dict(type='AdamW', lr=1e-4)),
        param_scheduler=[dict(type='StepLR', step_size=1)],
        dispatch_kwargs=dict(max_iters=max_iters, max_epochs=max_epochs))
    ...
    optim_wrapper.update_params(loss)
    strategy.logger.info(...)
    strategy.save_checkpoint('work_dirs/epoch_1.pth')

They are built on runnerx's own parts (``runnerx.dist`` for the launcher,
``runnerx.parallel.prepare_model`` with the ``STRATEGIES`` entry of the same name for the
wrapping, runnerx's optim wrapper and scheduler builders and state dict functions). For config
files, ``strategy=dict(type='FSDPStrategy', ...)`` is the same thing (``FlexibleRunner`` takes
these objects too). See docs/distributed.md.
"""

from .base import BaseStrategy
from .distributed import ColossalAIStrategy, DDPStrategy, DeepSpeedStrategy, FSDPStrategy
from .single_device import SingleDeviceStrategy

__all__ = [
    "BaseStrategy",
    "ColossalAIStrategy",
    "DDPStrategy",
    "DeepSpeedStrategy",
    "FSDPStrategy",
    "SingleDeviceStrategy",
]
