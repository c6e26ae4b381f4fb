"""LabelData: label-level annotations or predictions of one sample (class labels, scores),
with conversions between label indices and one-hot vectors."""

from __future__ import annotations

import torch

from runnerx.structures.base_data_element import (
    BaseDataElement,
    TypeAssertionError,
    ValueAssertionError,
)


def _check_tensor(value: object, name: str) -> None:
    if not isinstance(value, torch.Tensor):
        raise TypeAssertionError(f"{name} must be a torch.Tensor, but got {type(value).__name__}")


class LabelData(BaseDataElement):
    """Label-level fields of one sample::

    gt = LabelData(metainfo=dict(num_classes=5), label=torch.tensor([1, 3]))
    onehot = LabelData.label_to_onehot(gt.label, num_classes=5)   # tensor([0, 1, 0, 1, 0])
    LabelData.onehot_to_label(onehot)                              # tensor([1, 3])
    """

    @staticmethod
    def onehot_to_label(onehot: torch.Tensor) -> torch.Tensor:
        """The positions of the non-zero entries of a 1-D one-hot (or multi-hot) tensor whose
        values lie in [0, 1]."""
        _check_tensor(onehot, "onehot")
        if onehot.ndim != 1 or (onehot.numel() and (onehot.max() > 1 or onehot.min() < 0)):
            raise ValueError(
                "onehot_to_label needs a 1-D tensor of values in [0, 1], but got shape "
                f"{tuple(onehot.shape)}: {onehot}"
            )
        return onehot.nonzero().squeeze(-1)

    @staticmethod
    def label_to_onehot(label: torch.Tensor, num_classes: int) -> torch.Tensor:
        """A ``num_classes`` vector of ``label``'s dtype with 1 at every label (a 0-d or 1-D
        tensor of class indices below ``num_classes``)."""
        _check_tensor(label, "label")
        if label.numel() and label.max() >= num_classes:
            raise ValueAssertionError(
                f"label {label.max().item()} is out of range for num_classes={num_classes}"
            )
        onehot = label.new_zeros((num_classes,))
        onehot[label] = 1
        return onehot
