"""MMEngine's ``mmengine.model.wrappers.utils`` path: ``is_model_wrapper`` is
:func:`runnerx.parallel.unwrap.is_model_wrapper`."""

from runnerx.parallel.unwrap import is_model_wrapper

__all__ = ["is_model_wrapper"]
