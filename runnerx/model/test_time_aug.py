"""BaseTTAModel: test-time augmentation, a model wrapper that predicts on every augmented view
of a batch and merges each sample's predictions (MMEngine's BaseTTAModel)."""

from __future__ import annotations

import warnings
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

from torch import nn

from runnerx.model.base_model import BaseModel
from runnerx.registry import MODELS
from runnerx.utils.errors import TypeAssertionError


@MODELS.register_module()
class BaseTTAModel(BaseModel):
    """Runs the wrapped ``module``'s ``test_step`` once per augmented view, then
    ``merge_preds`` turns each sample's per-view predictions into one prediction.

    A test pipeline that ends in ``TestTimeAug`` gives every sample as a dict of lists (one
    entry per view); the default ``pseudo_collate`` then gives a batch whose values are lists
    of views, each view a list over the samples::

        dict(inputs=[[img1_view1, img2_view1], [img1_view2, img2_view2]],
             data_samples=[[sample1_view1, sample2_view1], [sample1_view2, sample2_view2]])

    ``test_step`` calls ``module.test_step(dict(inputs=[img1_view1, img2_view1], ...))`` for
    each view (a batch that is a list or tuple of fields is split the same way), and passes
    ``merge_preds`` one tuple per sample holding that sample's prediction from every view.
    The wrapped model must return one prediction per sample (a list), as MMEngine models do.
    A subclass implements ``merge_preds``::

        @MODELS.register_module()
        class AverageScores(BaseTTAModel):
            def merge_preds(self, data_samples_list):
                return [dict(pred_score=sum(v['pred_score'] for v in views) / len(views),
                             gt_label=views[0]['gt_label']) for views in data_samples_list]

        tta_model = dict(type='AverageScores')   # tools/test.py --tta adds module=cfg.model

    Args:
        module: the model to test, a config dict built with ``MODELS`` or a module.
        data_preprocessor: when given and ``module`` is a dict, it replaces the dict's
            ``data_preprocessor`` (the wrapped model preprocesses each view itself). A module
            that is already built keeps its own (MMEngine ignores it silently; here a warning
            says so).

    ``load_from`` (and so ``tools/test.py --tta CHECKPOINT``) loads the checkpoint into the
    wrapped ``module``, as MMEngine does: a checkpoint of the plain model fits.
    """

    def __init__(
        self, module: Mapping | nn.Module, data_preprocessor: Mapping | nn.Module | None = None
    ) -> None:
        super().__init__()
        if isinstance(module, nn.Module):
            if data_preprocessor is not None:
                warnings.warn(
                    f"{type(self).__name__}: data_preprocessor is ignored because module is "
                    "an already built model, which keeps its own",
                    stacklevel=2,
                )
            self.module = module
        elif isinstance(module, Mapping):
            if data_preprocessor is not None:
                module = {**module, "data_preprocessor": data_preprocessor}
            self.module = MODELS.build(module)
        else:
            raise TypeError(
                f"{type(self).__name__} module must be a model config dict (e.g. "
                f"dict(type='MyNet', ...)) or an nn.Module, but got {type(module).__name__}"
            )
        if not callable(getattr(self.module, "test_step", None)):
            raise TypeAssertionError(
                f"{type(self).__name__} wraps {type(self.module).__name__}, which has no "
                "test_step; the module must be a model with test_step (e.g. a BaseModel)"
            )

    @abstractmethod
    def merge_preds(self, data_samples_list: list[tuple]) -> Any:
        """One merged prediction per sample, from ``data_samples_list``: for each sample of
        the batch, a tuple of its predictions from every view, in view order."""

    def test_step(self, data: Any) -> Any:
        """Predict each view of the batch with the wrapped model; return ``merge_preds``."""
        predictions = [self.module.test_step(view) for view in split_views(data)]
        return self.merge_preds(list(zip(*predictions)))

    def val_step(self, data: Any) -> Any:
        """What ``test_step`` does, so that validation can use test-time augmentation too
        (MMEngine's falls through to ``forward``, which raises)."""
        return self.test_step(data)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        """Not used: testing goes through ``test_step``. A subclass may implement it."""
        raise NotImplementedError(
            f"{type(self).__name__}.forward is not called in training or testing: use "
            "test_step, which runs the wrapped model on every view and merges the predictions "
            "(implement forward in your subclass to call the model directly)"
        )


def split_views(data: Any) -> list:
    """A test-time-augmented batch as one batch per view: ``dict(inputs=[view1, view2])``
    becomes ``[dict(inputs=view1), dict(inputs=view2)]``, and a list or tuple of fields, each
    a list of views, becomes one list of fields per view."""
    if isinstance(data, Mapping):
        fields = dict(data)
    elif isinstance(data, (list, tuple)):
        fields = dict(enumerate(data))
    else:
        raise TypeError(
            "a test-time augmentation batch must be a dict (or a list or tuple) whose values "
            f"hold one entry per augmented view, but got {type(data).__name__}"
        )
    if not fields:
        raise ValueError("a test-time augmentation batch has no fields: nothing to predict")
    counts = {key: _length(value) for key, value in fields.items()}
    num_views = next(iter(counts.values()))
    if num_views is None or any(count != num_views for count in counts.values()):
        raise ValueError(
            "every field of a test-time augmentation batch must be a list with one entry per "
            f"augmented view (the TestTimeAug transform makes them), but the number of views "
            f"per field is {counts}"
        )
    views = [{key: value[index] for key, value in fields.items()} for index in range(num_views)]
    if isinstance(data, Mapping):
        return views
    return [list(view.values()) for view in views]


def _length(value: Any) -> int | None:
    """How many views a batch field holds (None when it is not a sequence of views)."""
    if isinstance(value, (str, bytes, Mapping)):
        return None
    try:
        return len(value)
    except TypeError:
        return None
