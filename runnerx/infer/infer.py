"""BaseInferencer: predictions of a trained model on raw inputs (MMEngine's
``mmengine.infer``), the base of downstream inferencers and of users' demo scripts.

A subclass says how one raw input becomes a sample (:meth:`~BaseInferencer._init_pipeline`),
how predictions are drawn (:meth:`~BaseInferencer.visualize`) and what the caller gets back
(:meth:`~BaseInferencer.postprocess`); the base builds the model from a config and loads its
weights, and runs inputs through pipeline, collate function and ``model.test_step`` in
batches. See docs/infer.md::

    inferencer = MyInferencer('configs/my_config.py', weights='work_dirs/x/epoch_8.pth')
    results = inferencer(['a.npy', 'b.npy'], batch_size=2)
"""

from __future__ import annotations

import contextlib
import itertools
import os
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

import torch
from torch import nn

from runnerx.checkpoint.loader import CheckpointLoader
from runnerx.checkpoint.model_state import load_checkpoint_to_model
from runnerx.config import Config, ConfigDict
from runnerx.config.errors import ConfigKeyError
from runnerx.data.build import resolve_function
from runnerx.data.collate import pseudo_collate
from runnerx.device import get_device
from runnerx.fileio import get_file_backend
from runnerx.logging import ProgressBar, Visualizer
from runnerx.registry import MODELS, VISUALIZERS, DefaultScope
from runnerx.suggest import close_matches
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

from .config_source import config_of, saved_config
from .model_zoo import find_zoo_model, list_zoo_models, zoo_models, zoo_root

__all__ = ["BaseInferencer", "InferencerMeta"]

#: the class attributes naming the ``__call__`` arguments each step takes
STEP_KWARGS = ("preprocess_kwargs", "forward_kwargs", "visualize_kwargs", "postprocess_kwargs")


class InferencerMeta(ABCMeta):
    """Checks, when an inferencer class is defined, that each ``*_kwargs`` attribute is a set
    and that no argument name is in two of them (``__call__`` could not tell where it goes)."""

    def __init__(cls, *args: Any) -> None:
        super().__init__(*args)
        owner: dict[str, str] = {}
        for attribute in STEP_KWARGS:
            keys = getattr(cls, attribute)
            if not isinstance(keys, set):
                raise TypeAssertionError(
                    f"{cls.__name__}.{attribute} must be a set of argument names, "
                    f"got {type(keys).__name__}"
                )
            for key in sorted(keys):
                if key in owner:
                    raise ValueAssertionError(
                        f"{cls.__name__}: {key!r} is in both {owner[key]} and {attribute}; "
                        "each argument of __call__ goes to one step"
                    )
                owner[key] = attribute


class BaseInferencer(metaclass=InferencerMeta):
    """Runs a trained model on raw inputs: ``inferencer(inputs, batch_size=1, **kwargs)``
    lists the inputs (:meth:`_inputs_to_list`), runs them in chunks of ``batch_size`` through
    the pipeline and the collate function (:meth:`preprocess`) and ``model.test_step``
    (:meth:`forward`), then returns what :meth:`postprocess` makes of the predictions and of
    :meth:`visualize`'s drawings. ``kwargs`` go to the step whose ``*_kwargs`` set names them.

    ``model`` is a config file, a ``Config``/dict, ``'pkg::path/to/config.py'`` (a config an
    installed package ships, see :mod:`runnerx.hub`), the name of a model in the model zoo
    of ``scope``'s package (its weights are used unless ``weights`` is given), or None (the
    config saved in the ``weights`` checkpoint). ``weights`` is a checkpoint path or URL, read
    safely; None leaves the model as built (with a warning). ``device=None`` is
    ``runnerx.device.get_device()``; ``scope=None`` is the current default scope, else the
    config's ``default_scope``: the model, pipeline, collate function and visualizer are built
    in it. ``show_progress`` draws a :class:`~runnerx.logging.ProgressBar` on a terminal.
    """

    preprocess_kwargs: set = set()
    forward_kwargs: set = set()
    visualize_kwargs: set = set()
    postprocess_kwargs: set = set()

    def __init__(
        self,
        model: str | os.PathLike | Mapping | None = None,
        weights: str | None = None,
        device: str | None = None,
        scope: str | None = None,
        show_progress: bool = True,
    ) -> None:
        if scope is None:
            current = DefaultScope.get_current_instance()
            scope = None if current is None else current.scope_name
        self.scope = scope
        cfg, weights = config_of(model, weights, self._load_model_from_metafile)
        device = get_device() if device is None else device
        self.model = self._init_model(cfg, weights, device)
        with DefaultScope.overwrite_default_scope(self.scope):
            self.pipeline = self._init_pipeline(cfg)
            self.collate_fn = self._init_collate(cfg)
            self.visualizer = self._init_visualizer(cfg)
        self.cfg = cfg
        self.show_progress = show_progress

    def __call__(
        self, inputs: Any, return_datasamples: bool = False, batch_size: int = 1, **kwargs: Any
    ) -> Any:
        """Predict ``inputs`` (one input, a list of them, or a folder of files) and return
        what :meth:`postprocess` makes of the predictions and the drawings."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        preprocess_kwargs, forward_kwargs, visualize_kwargs, postprocess_kwargs = (
            self._dispatch_kwargs(**kwargs)
        )
        ori_inputs = self._inputs_to_list(inputs)
        batches = self.preprocess(ori_inputs, batch_size=batch_size, **preprocess_kwargs)
        preds: list = []
        progress = ProgressBar(len(ori_inputs)) if self.show_progress else None
        with progress or contextlib.nullcontext():
            for data in batches:
                done = len(preds)
                preds.extend(self.forward(data, **forward_kwargs))
                if progress is not None:
                    progress.update(len(preds) - done)
        visualization = self.visualize(ori_inputs, preds, **visualize_kwargs)
        return self.postprocess(preds, visualization, return_datasamples, **postprocess_kwargs)

    def _inputs_to_list(self, inputs: Any) -> list:
        """``inputs`` as a list: a list or tuple as it is, a folder (a str a storage backend
        can list) as the paths of its files (sorted; not the files of sub-folders), anything
        else as a list of one."""
        if isinstance(inputs, str):
            backend = get_file_backend(inputs)
            if hasattr(backend, "isdir") and backend.isdir(inputs):
                names = backend.list_dir_or_file(inputs, list_dir=False)
                inputs = [backend.join_path(inputs, name) for name in sorted(names)]
        return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]

    def preprocess(self, inputs: list, batch_size: int = 1, **kwargs: Any) -> Iterator[Any]:
        """Yield the model's batches: each input through :attr:`pipeline`, then chunks of
        ``batch_size`` through :attr:`collate_fn`."""
        chunks = self._get_chunk_data(map(self.pipeline, inputs), batch_size)
        yield from map(self.collate_fn, chunks)

    @torch.no_grad()
    def forward(self, inputs: Any, **kwargs: Any) -> Any:
        """The predictions of one batch: ``model.test_step(inputs)``, without gradients."""
        return self.model.test_step(inputs)

    @abstractmethod
    def visualize(self, inputs: list, preds: Any, show: bool = False, **kwargs: Any) -> Any:
        """Draw the predictions ``preds`` of the listed ``inputs`` (``show``: in a window);
        what it returns (images, usually) goes to :meth:`postprocess`."""

    @abstractmethod
    def postprocess(
        self, preds: Any, visualization: Any, return_datasample: bool = False, **kwargs: Any
    ) -> Any:
        """What ``__call__`` returns, usually ``dict(predictions=..., visualization=...)``:
        the predictions as plain data (as data samples with ``return_datasample``)."""

    @abstractmethod
    def _init_pipeline(self, cfg: Config) -> Callable[[Any], Any]:
        """The function that turns one raw input into one sample for :attr:`collate_fn`
        (often a :class:`~runnerx.data.Compose` of the config's test pipeline)."""

    def _load_model_from_metafile(self, model: str) -> tuple[Config, str | None]:
        """The config and weights the model zoo of :attr:`scope`'s package lists as
        ``model`` (its name or an alias)."""
        if self.scope is None:
            raise ValueAssertionError(
                f"model={model!r} is not a config file; to look it up as a model name, pass "
                "scope= (the package whose model zoo lists it, e.g. scope='mmpretrain')"
            )
        return find_zoo_model(self.scope, model)

    _get_repo_or_mim_dir = staticmethod(zoo_root)
    _get_models_from_metafile = staticmethod(zoo_models)

    def _init_model(
        self, cfg: Config | ConfigDict, weights: str | None, device: str = "cpu"
    ) -> nn.Module:
        """The config's model, built in :attr:`scope` (the config's ``default_scope`` when
        there is none), with the ``weights`` loaded, on ``device``, in eval mode. An empty
        ``cfg`` is filled in from the checkpoint's saved config first."""
        checkpoint = None if weights is None else self._read_checkpoint(weights)
        if not cfg:
            cfg.update(saved_config(checkpoint, weights).to_dict())
        if self.scope is None:
            self.scope = cfg.get("default_scope")
        if not isinstance(cfg.get("model"), Mapping):
            raise ConfigKeyError(
                "the config has no `model` dict to build (e.g. model=dict(type='DigitsConvNet'))"
                f", got {cfg.get('model')!r}"
            )
        # a backbone's pretrained weights would only be overwritten by the checkpoint's
        cfg.model.pop("pretrained", None)
        with DefaultScope.overwrite_default_scope(self.scope):
            model = MODELS.build(cfg.model)
        model.cfg = cfg
        self._load_weights_to_model(model, checkpoint, cfg)
        model.to(device)
        model.eval()
        return model

    def _read_checkpoint(self, weights: str) -> Any:
        try:
            checkpoint = CheckpointLoader.load_checkpoint(weights, map_location="cpu")
        except FileNotFoundError as error:
            raise FileNotFoundError(f"weights={weights!r}: {error}") from None
        if not isinstance(checkpoint, Mapping):
            raise TypeError(
                f"weights={weights!r} holds a {type(checkpoint).__name__}, not a checkpoint dict"
            )
        return checkpoint

    def _load_weights_to_model(
        self, model: nn.Module, checkpoint: Mapping | None, cfg: Config | ConfigDict | None
    ) -> None:
        """Load the checkpoint's weights into ``model`` (keys that do not match are reported
        as a warning) and keep its ``meta.dataset_meta`` (class names, palette) as
        ``model.dataset_meta``; subclasses may take more from ``checkpoint`` and ``cfg``.
        MMEngine's base leaves ``dataset_meta`` to the subclasses (mmdet's and mmpretrain's
        inferencers keep it the same way)."""
        if checkpoint is None:
            warnings.warn(
                "no checkpoint was loaded (weights=None): the predictions come from the "
                "randomly initialized model",
                stacklevel=4,
            )
            return
        load_checkpoint_to_model(model, checkpoint)
        meta = checkpoint.get("meta")
        if isinstance(meta, Mapping) and meta.get("dataset_meta") is not None:
            model.dataset_meta = meta["dataset_meta"]

    def _init_collate(self, cfg: Config | ConfigDict) -> Callable[[list], Any]:
        """The config's ``test_dataloader.collate_fn`` (a ``dict(type=...)``, a registered
        name or a function), else ``pseudo_collate``. MMEngine's base raises a TypeError for
        the dict form, the one its configs use: a bug, not followed here."""
        spec = (cfg.get("test_dataloader") or {}).get("collate_fn")
        if spec is None:
            return pseudo_collate
        spec = dict(type=spec) if isinstance(spec, str) else spec
        return resolve_function(spec, "test_dataloader.collate_fn")

    def _init_visualizer(self, cfg: Config | ConfigDict) -> Visualizer | None:
        """The config's ``visualizer``, built under a name no other Visualizer has (its
        ``name``, with a timestamp added when that is taken), or None without one."""
        spec = cfg.get("visualizer")
        if spec is None:
            return None
        stamp = str(datetime.now().timestamp())
        name = spec.get("name", stamp)
        if Visualizer.check_instance_created(name):
            name = f"{name}-{stamp}"
        spec.name = name
        return VISUALIZERS.build(spec)

    def _get_chunk_data(self, inputs: Iterable, chunk_size: int) -> Iterator[list]:
        """``inputs`` in lists of ``chunk_size`` (the last one may be shorter)."""
        iterator = iter(inputs)
        while chunk := list(itertools.islice(iterator, chunk_size)):
            yield chunk

    def _dispatch_kwargs(self, **kwargs: Any) -> tuple[dict, dict, dict, dict]:
        """``kwargs`` split into those of preprocess, forward, visualize and postprocess, by
        the ``*_kwargs`` sets; a name in none of them is a ValueError."""
        steps = [getattr(self, attribute) for attribute in STEP_KWARGS]
        accepted = set().union(*steps)
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            close = [match for name in unknown for match in close_matches(name, accepted, n=1)]
            hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
            raise ValueError(
                f"{type(self).__name__} got unknown argument(s) {', '.join(map(repr, unknown))}"
                f"; {hint}it accepts "
                + "; ".join(
                    f"{attribute.removesuffix('_kwargs')}: {sorted(keys) or 'none'}"
                    for attribute, keys in zip(STEP_KWARGS, steps, strict=True)
                )
            )
        return tuple(  # type: ignore[return-value]
            {key: value for key, value in kwargs.items() if key in keys} for keys in steps
        )

    @staticmethod
    def list_models(scope: str | None = None, patterns: str = r".*") -> list[str]:
        """The names and aliases of the models in ``scope``'s model zoo (the current default
        scope's by default) that match the regular expression ``patterns``; also logged.
        MMEngine ignores the default scope here (an AssertionError): a bug, not followed."""
        if scope is None:
            current = DefaultScope.get_current_instance()
            if current is None:
                raise ValueAssertionError(
                    "list_models: pass scope= (the package whose model zoo to list, e.g. "
                    "'mmpretrain'); no default scope is set"
                )
            scope = current.scope_name
        return list_zoo_models(scope, patterns)
