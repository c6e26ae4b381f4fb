"""RuntimeInfoHook: puts progress, learning rates, losses and metrics in the MessageHub."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any

from torch import Tensor

from runnerx.hooks.hook import Hook
from runnerx.logging.message_hub import ScalarRecorder
from runnerx.registry import HOOKS
from runnerx.utils.errors import TypeAssertionError
from runnerx.version import __version__


@HOOKS.register_module()
class RuntimeInfoHook(Hook):
    """Puts what other components read into ``runner.message_hub`` (one of the default hooks).

    Info: the config text, seed, experiment name, 'max_epochs', 'max_iters', the current
    'epoch' and 'iter', and 'loop_stage' ('train', 'val' or 'test' while that loop runs; a
    validation during training puts 'train' back at its end, as MMEngine's hook does).
    Scalars: 'train/lr' (one per optimizer for several), and before it 'train/base_lr' for an
    optimizer with several param groups (``optim_wrapper.get_lr()``'s keys and first values,
    as MMEngine logs them), every value the model's ``train_step`` returns as 'train/<name>',
    and the metrics as 'val/<name>' and 'test/<name>'. Loss tensors are stored as they are; the
    MessageHub converts them only when a line is logged, so no iteration waits for the device.
    Per iteration, each value costs a list append (:class:`~runnerx.logging.ScalarRecorder`).

    The learning rates are read from the param groups, as the stock ``get_lr()`` gives them;
    an optim wrapper whose class overrides ``get_lr`` (or an OptimWrapperDict holding one) has
    its ``get_lr()`` called every iteration instead, as MMEngine does: each ``name: [lr, ...]``
    it returns is logged as 'train/<name>'. Which of the two is settled once per run.
    ``last_loop_stage`` (MMEngine's) is the stage a running validation interrupted ('train'),
    else None.
    """

    priority = "VERY_HIGH"

    def __init__(self) -> None:
        self._hub: Any = None  # the hub the recorder writes to
        self._recorder: ScalarRecorder | None = None
        # (key, param groups whose first one's 'lr' is logged, appender), read from the optim
        # wrapper once: 'train/base_lr' (several param groups) and 'train/lr' of each optimizer
        self._lr_records: list[tuple[str, Any, Callable]] | None = None
        self._output_records: dict[str, tuple[str, Callable]] = {}  # 'loss' -> key, appender
        self._get_lr: Callable[[], Any] | None = None  # an optim wrapper's own get_lr
        self.last_loop_stage: str | None = None  # 'train' during a validation within training

    def _bind(self, hub: Any) -> None:
        """Record into ``hub`` from now on (a new run, or hook points called directly)."""
        self._hub = hub
        self._recorder = ScalarRecorder(hub)
        self._lr_records = None
        self._get_lr = None
        self._output_records = {}

    def before_run(self, runner: Any) -> None:
        """Record the run's description and its length."""
        hub = runner.message_hub
        hub.update_info("cfg", getattr(runner, "cfg_text", None) or "")
        hub.update_info("seed", runner.seed)
        hub.update_info("experiment_name", runner.experiment_name)
        hub.update_info("runnerx_version", __version__)

    def before_train(self, runner: Any) -> None:
        """Record the training length and where training starts (after a resume, where it
        resumes). Not in before_run: a val- or test-only run has no training length."""
        hub = runner.message_hub
        hub.update_info("loop_stage", "train")
        hub.update_info("max_epochs", runner.max_epochs)
        hub.update_info("max_iters", runner.max_iters)
        hub.update_info("epoch", runner.epoch)
        hub.update_info("iter", runner.iter)
        self._hub = None  # read the optim wrapper and the hub again for this run
        dataset = getattr(runner.train_dataloader, "dataset", None)
        metainfo = getattr(dataset, "metainfo", None)
        if metainfo is not None:
            hub.update_info("dataset_meta", metainfo)

    def after_train(self, runner: Any) -> None:
        """Training is over: no 'loop_stage'."""
        runner.message_hub.pop_info("loop_stage")

    def before_val(self, runner: Any) -> None:
        """'loop_stage' is 'val' (the stage it replaces comes back after)."""
        self.last_loop_stage = runner.message_hub.get_info("loop_stage")
        runner.message_hub.update_info("loop_stage", "val")

    def after_val(self, runner: Any) -> None:
        """'loop_stage' is 'train' again in a validation during training, else gone."""
        if self.last_loop_stage == "train":
            runner.message_hub.update_info("loop_stage", "train")
        else:
            runner.message_hub.pop_info("loop_stage")
        self.last_loop_stage = None

    def before_test(self, runner: Any) -> None:
        """'loop_stage' is 'test'."""
        runner.message_hub.update_info("loop_stage", "test")

    def after_test(self, runner: Any) -> None:
        """The test is over: no 'loop_stage'."""
        runner.message_hub.pop_info("loop_stage")

    def before_train_epoch(self, runner: Any) -> None:
        """Keep 'epoch' current."""
        runner.message_hub.update_info("epoch", runner.epoch)

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Keep 'iter' current and record the learning rate of each optimizer's first group
        (and its base_lr, see :meth:`~runnerx.optim.OptimWrapper.base_lr_source`)."""
        hub = runner.message_hub
        if hub is not self._hub:
            self._bind(hub)
        hub.update_info("iter", runner.iter)
        records = self._lr_records
        if records is None:
            records = self._lr_records = self._read_lr_sources(runner.optim_wrapper)
        if self._get_lr is not None:
            _record_lrs(hub, self._get_lr())
            return
        for key, param_groups, append in records:
            lr = param_groups[0]["lr"]
            if type(lr) is float:
                append(lr)
            else:  # an int, or a tensor (capturable optimizers): checked and converted
                hub.update_scalar(key, lr)

    def _read_lr_sources(self, optim_wrapper: Any) -> list[tuple[str, Any, Callable]]:
        """Once per run: the records of the learning rates read from the param groups, or
        none, with ``self._get_lr`` set, when ``optim_wrapper`` has a ``get_lr`` of its own."""
        if _overrides_get_lr(optim_wrapper):
            self._get_lr = optim_wrapper.get_lr
            return []
        append = self._recorder.appender  # type: ignore[union-attr]
        return [(key, groups, append(key)) for key, groups in _lr_sources(optim_wrapper)]

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Record every value ``train_step`` returned (0-dim tensors, kept unconverted)."""
        hub = runner.message_hub
        if hub is not self._hub:
            self._bind(hub)
        if outputs:
            records = self._output_records
            for name, value in outputs.items():
                record = records.get(name)
                if record is None:
                    key = f"train/{name}"
                    record = records[name] = (key, self._recorder.appender(key))  # type: ignore[union-attr]
                if (type(value) is Tensor and value.numel() == 1) or type(value) is float:
                    record[1](value)
                else:  # anything else is checked (and refused with the key's name) by the hub
                    hub.update_scalar(record[0], value)
        self._recorder.end_iteration()  # type: ignore[union-attr]

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Record the validation metrics as 'val/<name>'."""
        _record_metrics(runner.message_hub, "val", metrics)

    def after_test_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Record the test metrics as 'test/<name>'."""
        _record_metrics(runner.message_hub, "test", metrics)


def _overrides_get_lr(optim_wrapper: Any) -> bool:
    """Whether ``optim_wrapper`` (or a wrapper in an OptimWrapperDict) has a ``get_lr`` other
    than runnerx's, whose values the param groups give directly."""
    from runnerx.optim import OptimWrapper, OptimWrapperDict

    wrappers = [optim_wrapper]
    if isinstance(optim_wrapper, OptimWrapperDict):
        wrappers += [wrapper for _, wrapper in optim_wrapper.items()]
    stock = (None, OptimWrapper.get_lr, OptimWrapperDict.get_lr)  # None: no get_lr at all
    methods = [getattr(wrapper, "get_lr", None) for wrapper in wrappers]
    return any(getattr(method, "__func__", method) not in stock for method in methods)


def _record_lrs(hub: Any, lrs: Any) -> None:
    """Log the first value of each ``name: [lr, ...]`` (or ``name: lr``) of an optim wrapper's
    own ``get_lr()`` as 'train/<name>'."""
    if not isinstance(lrs, dict):
        raise TypeAssertionError(
            "runner.optim_wrapper.get_lr() should return a dict of learning rates, "
            f"{{name: [lr of each param group]}}, got {type(lrs).__name__}: {lrs!r}"
        )
    for name, values in lrs.items():
        hub.update_scalar(
            f"train/{name}", values[0] if isinstance(values, (list, tuple)) else values
        )


def _lr_sources(optim_wrapper: Any) -> list[tuple[str, Any]]:
    """Where the learning rates are read from (``groups[0]['lr']``), once, under the keys
    ``get_lr()`` names: 'train/lr' for one optimizer, 'train/<name>.lr' for each of an
    OptimWrapperDict, each after its 'base_lr' when it has several param groups (so the hub
    lists and logs base_lr first, as MMEngine does)."""
    if hasattr(optim_wrapper, "items"):
        named = [(f"train/{name}.", wrapper) for name, wrapper in optim_wrapper.items()]
    else:
        named = [("train/", optim_wrapper)]
    sources = []
    for prefix, wrapper in named:
        base = getattr(wrapper, "base_lr_source", lambda: None)()
        if base is not None:
            group, factor = wrapper.param_groups[base[0]], base[1]
            sources.append(
                (f"{prefix}base_lr", [group] if factor == 1.0 else _Scaled(group, factor))
            )
        sources.append((f"{prefix}lr", wrapper.param_groups))
    return sources


class _Scaled:
    """Stands in for a record's param groups when the lr to log is a group's lr times
    ``factor`` (base_lr when every group has a multiplier): ``self[0]['lr']`` gives it."""

    def __init__(self, group: dict, factor: float) -> None:
        self.group, self.factor = group, factor

    def __getitem__(self, key: Any) -> Any:
        return self if key == 0 else self.group[key] * self.factor


def _record_metrics(hub: Any, mode: str, metrics: dict | None) -> None:
    """Scalars go to the history (for logging and plotting), anything else to the info."""
    for name, value in (metrics or {}).items():
        if _is_scalar(value):
            hub.update_scalar(f"{mode}/{name}", value)
        else:
            hub.update_info(f"{mode}/{name}", value)


def _is_scalar(value: Any) -> bool:
    """A number, or a tensor or array holding exactly one number."""
    if isinstance(value, Number):
        return True
    numel = getattr(value, "numel", None)  # torch tensors
    if callable(numel):
        return numel() == 1
    size = getattr(value, "size", None)  # numpy arrays
    return isinstance(size, int) and size == 1
