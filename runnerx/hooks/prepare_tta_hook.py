"""PrepareTTAHook and build_runner_with_tta: test with test-time augmentation by wrapping the
Runner's model in a ``tta_model`` when the test starts (MMEngine's), and the config rewrite of
``tools/test.py --tta``."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS, MODELS


@HOOKS.register_module()
class PrepareTTAHook(Hook):
    """Wraps ``runner.model`` in the test-time augmentation model ``tta_cfg`` describes (a
    ``BaseTTAModel`` subclass, given ``module=runner.model``) in ``before_test``.

    Weights are loaded before that (``load_from``), into the plain model, and the model is
    already on its device and wrapped for distributed runs: the wrapper only splits views and
    merges predictions. ``build_runner_with_tta(cfg)`` registers it::

        runner.register_hook(PrepareTTAHook(tta_cfg=dict(type='MyTTAModel')))

    MMEngine stores the model into ``tta_cfg`` and wraps again on every test, so a second
    ``runner.test()`` wraps the TTA model in another one; here ``tta_cfg`` is left as it is
    and a model that is already a ``BaseTTAModel`` is not wrapped again.
    """

    def __init__(self, tta_cfg: Mapping) -> None:
        if not isinstance(tta_cfg, Mapping):
            raise TypeError(
                "PrepareTTAHook tta_cfg must be the tta_model config dict (e.g. "
                f"dict(type='MyTTAModel')), but got {type(tta_cfg).__name__}"
            )
        self.tta_cfg = tta_cfg

    def before_test(self, runner: Any) -> None:
        """Replace ``runner.model`` by the TTA model wrapping it."""
        from runnerx.model import BaseTTAModel

        if not isinstance(runner.model, BaseTTAModel):
            runner.model = MODELS.build({**self.tta_cfg, "module": runner.model})


def build_runner_with_tta(cfg: MutableMapping) -> Any:
    """A Runner (or the config's ``runner_type``) that tests with test-time augmentation:
    the test dataset's pipeline becomes ``cfg.tta_pipeline``, and a ``PrepareTTAHook`` wraps
    the model in ``cfg.tta_model`` when the test starts (MMEngine's function; ``cfg`` is
    changed in place)::

        runner = build_runner_with_tta(Config.fromfile('configs/my_tta.py'))
        runner.test()
    """
    from runnerx.runner.cli import build_runner

    tta_model = _required(cfg, "tta_model")
    use_tta_pipeline(cfg)
    runner = build_runner(cfg)
    runner.register_hook(PrepareTTAHook(tta_cfg=tta_model))
    return runner


def use_tta_model(cfg: MutableMapping) -> str:
    """What ``tools/test.py --tta`` does to the config, as OpenMMLab's test scripts do: the
    test dataset's pipeline becomes ``cfg.tta_pipeline`` and ``cfg.model`` becomes
    ``cfg.tta_model`` wrapping it (``dict(**tta_model, module=model)``). Returns the key of
    the dataset whose pipeline changed, as :func:`use_tta_pipeline` does."""
    tta_model = _required(cfg, "tta_model")
    dataset_key = use_tta_pipeline(cfg)
    cfg["model"] = {**tta_model, "module": cfg["model"]}
    return dataset_key


def use_tta_pipeline(cfg: MutableMapping) -> str:
    """Set the test dataset's ``pipeline`` to ``cfg.tta_pipeline``; for dataset wrappers
    (``RepeatDataset`` and the like, as mmdet's test script does) the innermost dataset's.
    Returns that dataset's key (``'test_dataloader.dataset.dataset'`` under one wrapper)."""
    pipeline = _required(cfg, "tta_pipeline")
    dataloader = cfg.get("test_dataloader")
    if not isinstance(dataloader, Mapping) or not isinstance(dataloader.get("dataset"), Mapping):
        raise KeyError(
            "test-time augmentation replaces test_dataloader.dataset.pipeline with "
            "tta_pipeline, but the config has no test_dataloader.dataset dict"
        )
    key, dataset = "test_dataloader.dataset", dataloader["dataset"]
    while isinstance(dataset.get("dataset"), Mapping):
        key, dataset = f"{key}.dataset", dataset["dataset"]
    dataset["pipeline"] = pipeline
    return key


def _required(cfg: Mapping, key: str) -> Any:
    if cfg.get(key) is None:
        example = {
            "tta_model": "tta_model = dict(type='MyTTAModel')  # a registered BaseTTAModel",
            "tta_pipeline": "tta_pipeline = [..., dict(type='TestTimeAug', transforms=[...])]",
        }[key]
        raise KeyError(
            f"test-time augmentation needs {key} in the config, which has none; add it, "
            f"e.g. {example}"
        )
    return cfg[key]
