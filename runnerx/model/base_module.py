"""BaseModule: an ``nn.Module`` whose weights an ``init_cfg`` initialises (MMEngine's BaseModule).

``Sequential``, ``ModuleList`` and ``ModuleDict`` are the torch containers with an ``init_cfg``
of their own, as MMEngine has them.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping

from torch import nn

from runnerx.model.initializers import PretrainedInit
from runnerx.model.weight_init import initialize

logger = logging.getLogger(__name__)


class BaseModule(nn.Module):
    """A module with ``init_cfg``; ``init_weights()`` applies it, then its children's.

    Pretrained weights are loaded last, after the children initialised themselves, so they win::

        init_cfg = [dict(type='Kaiming', layer='Conv2d'),
                    dict(type='Pretrained', checkpoint='backbone.pth')]
    """

    def __init__(self, init_cfg: Mapping | list[Mapping] | None = None) -> None:
        super().__init__()
        self._is_init = False
        self.init_cfg = copy.deepcopy(init_cfg)

    @property
    def is_init(self) -> bool:
        """Whether ``init_weights`` has run."""
        return self._is_init

    @is_init.setter
    def is_init(self, value: bool) -> None:
        self._is_init = value

    def init_weights(self) -> None:
        """Apply ``init_cfg`` to this module, call the children's ``init_weights`` (for a
        model wrapper without one, its module's), then load any ``Pretrained`` entry. A second
        call does nothing."""
        if self._is_init:
            logger.warning("init_weights of %s was called more than once", type(self).__name__)
            return
        cfgs = self.init_cfg or []
        cfgs = [cfgs] if isinstance(cfgs, Mapping) else list(cfgs)
        pretrained = [cfg for cfg in cfgs if _is_pretrained(cfg)]
        others = [cfg for cfg in cfgs if not _is_pretrained(cfg)]
        if others:
            initialize(self, others)
        for child in self.children():
            child = _unwrapped(child)
            if hasattr(child, "init_weights") and not getattr(child, "is_init", False):
                child.init_weights()
        if pretrained:
            initialize(self, pretrained)
        self._is_init = True


def _is_pretrained(cfg: Mapping) -> bool:
    return cfg.get("type") in ("Pretrained", PretrainedInit)


def _unwrapped(child: nn.Module) -> nn.Module:
    """``child.module`` when ``child`` is a model wrapper (e.g. the DDP that
    MMSeparateDistributedDataParallel puts around each sub-module) without ``init_weights``
    of its own, so that the wrapped module is still initialised; else ``child``."""
    if hasattr(child, "init_weights") or not isinstance(getattr(child, "module", None), nn.Module):
        return child
    from runnerx.parallel.unwrap import is_model_wrapper  # runnerx.parallel builds on models

    return child.module if is_model_wrapper(child) else child


class Sequential(BaseModule, nn.Sequential):
    """``nn.Sequential`` with an ``init_cfg``."""

    def __init__(self, *modules: nn.Module, init_cfg: Mapping | None = None) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.Sequential.__init__(self, *modules)


class ModuleList(BaseModule, nn.ModuleList):
    """``nn.ModuleList`` with an ``init_cfg``."""

    def __init__(
        self, modules: Iterable[nn.Module] | None = None, init_cfg: Mapping | None = None
    ) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.ModuleList.__init__(self, modules)


class ModuleDict(BaseModule, nn.ModuleDict):
    """``nn.ModuleDict`` with an ``init_cfg``."""

    def __init__(
        self, modules: Mapping[str, nn.Module] | None = None, init_cfg: Mapping | None = None
    ) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.ModuleDict.__init__(self, modules)
