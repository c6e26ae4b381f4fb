"""get_metric_value: look a metric up by its full name or by its name without the prefix.

MMEngine's ``mmengine.evaluator.utils`` path, so custom hooks that pick one value out of the
evaluator's results port by renaming the import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runnerx.suggest import SENTENCE, did_you_mean

__all__ = ["get_metric_value"]


def get_metric_value(indicator: str, metrics: Mapping[str, Any]) -> Any:
    """The value in ``metrics`` (what ``Evaluator.evaluate`` returns) that ``indicator``
    names: a full key such as ``'accuracy/top1'``, or a name without prefix such as
    ``'top1'`` that exactly one key ends in (``'<prefix>/top1'``, or ``'top1'`` itself)::

        metrics = {'accuracy/top1': 71.2, 'accuracy/top5': 90.1}
        assert get_metric_value('top5', metrics) == 90.1

    A ValueError says when nothing matches (with the keys there are) or, for a name without
    prefix, when several keys do.
    """
    if not isinstance(indicator, str):
        raise TypeError(f"indicator must be a metric name (str), but got {indicator!r}")
    if "/" in indicator:
        matched = [indicator] if indicator in metrics else []
    else:
        matched = [key for key in metrics if str(key).rsplit("/", 1)[-1] == indicator]
    if len(matched) == 1:
        return metrics[matched[0]]
    if matched:
        raise ValueError(
            f"The indicator {indicator!r} matches multiple metrics {matched}; "
            "give the full name with its prefix"
        )
    hint = did_you_mean(indicator, metrics, form=SENTENCE)
    raise ValueError(
        f"The indicator {indicator!r} can not match any metric in {list(metrics)}.{hint}"
    )
