"""BaseLoop, the base of every loop: the training loops of :mod:`runnerx.runner.loops`, the
evaluation loops of :mod:`runnerx.runner.eval_loops`, and custom loops (MMEngine's path
``mmengine.runner.base_loop``: ``from runnerx.runner.base_loop import BaseLoop``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from torch.utils.data import IterableDataset

from runnerx.data.build import LoopDefaultSampler

__all__ = ["BaseLoop", "accepted_keywords", "refuse_uneven_batches"]


class BaseLoop:
    """A loop over one dataloader, run by a Runner. A dataloader config whose ``sampler`` is
    None gets the loop's ``default_sampler``, as MMEngine's docs say (epoch_to_iter), unless
    its dataset is an IterableDataset, which takes no sampler (as in MMEngine). The
    dataset's ``metainfo`` goes to the runner's visualizer (``dataset_meta``), as in MMEngine.

    The Runner is ``self._runner``, read through the ``runner`` property, as in MMEngine: a
    loop written for MMEngine that sets ``self._runner`` itself and skips
    ``super().__init__()`` (a list of dataloaders, say) works."""

    mode = "train"
    default_sampler: dict = {"type": "DefaultSampler", "shuffle": True}

    def __init__(self, runner: Any, dataloader: Any) -> None:
        self._runner = runner
        # the dataset, built with the loader, decides whether the default applies
        defaulted = (
            isinstance(dataloader, Mapping)
            and "sampler" in dataloader
            and dataloader["sampler"] is None
        )
        if defaulted:
            dataloader = {**dataloader, "sampler": LoopDefaultSampler(self.default_sampler)}
        build = runner.build_dataloader
        self.dataloader = build(
            dataloader,
            seed=runner.seed,
            diff_rank_seed=runner._randomness_cfg.get("diff_rank_seed", False),
            **accepted_keywords(build, cfg_key=f"{self.mode}_dataloader"),
        )
        dataset = getattr(self.dataloader, "dataset", None)
        if defaulted and not isinstance(dataset, IterableDataset):
            runner.logger.info(
                f"{self.mode}_dataloader.sampler is None: using {self.default_sampler}"
            )
        # what the dataset says of itself (classes, palette), for the visualizer to draw with,
        # as MMEngine's loops hand it over
        self.dataset_meta = getattr(dataset, "metainfo", None)
        if self.dataset_meta is not None:
            runner.visualizer.dataset_meta = self.dataset_meta

    @property
    def runner(self) -> Any:
        """The Runner running this loop (settable, for loops that assign it)."""
        return self._runner

    @runner.setter
    def runner(self, runner: Any) -> None:
        self._runner = runner


def accepted_keywords(method: Callable, **keywords: Any) -> dict:
    """Those of runnerx's extra ``keywords`` that ``method`` takes: all for runnerx's own
    builders, none for a Runner subclass's override with MMEngine's signature
    (``build_dataloader(dataloader, seed=None, diff_rank_seed=False)``,
    ``build_evaluator(evaluator)``)."""
    parameters = inspect.signature(method).parameters.values()
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters):
        return keywords
    names = {parameter.name for parameter in parameters}
    return {name: value for name, value in keywords.items() if name in names}


def refuse_uneven_batches(dataloader: Any, key: str, why: str, cure: str) -> None:
    """Raise when ``dataloader`` (``key`` in the config) gives the ranks of a distributed run
    different numbers of batches, saying ``why`` that cannot work and the ``cure``; one
    all-gather, which every rank must reach. Nothing in a single process."""
    from runnerx.dist import all_gather_object, get_world_size

    if get_world_size() == 1:
        return
    counts = all_gather_object(len(dataloader))
    if len(set(counts)) > 1:
        each = ", ".join(f"rank {rank}: {count}" for rank, count in enumerate(counts))
        raise ValueError(
            f"{key} gives the ranks different numbers of batches ({each}): {why}; {cure}"
        )
