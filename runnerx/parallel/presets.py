"""``tools/train.py -O {0,1,2,3}``: optimisation presets as config changes.

=====  ===============================================================================
level  changes
=====  ===============================================================================
0      none
1      ``env_cfg.matmul_precision='high'`` (TF32 matmuls on recent GPUs)
2      level 1 + bfloat16 autocast (``optim_wrapper`` becomes ``AmpOptimWrapper``,
       ``dtype='bfloat16'``; a ``dtype`` the config sets is kept, as ``--amp`` keeps it)
3      level 2 + ``compile=True`` (an existing ``compile`` dict is kept)
=====  ===============================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OPTIMIZATION_LEVELS = (0, 1, 2, 3)


def optimization_level_changes(cfg: Mapping[str, Any], level: int) -> dict[str, Any]:
    """The dotted-key changes that ``-O level`` makes to ``cfg`` (``cfg`` is not changed).

    Apply them with ``cfg.merge_from_dict(changes, source=f'-O{level}')``::

        optimization_level_changes(cfg, 2)
        # {'env_cfg.matmul_precision': 'high',
        #  'optim_wrapper': {... 'type': 'AmpOptimWrapper', 'dtype': 'bfloat16'}}
    """
    if isinstance(level, bool) or level not in OPTIMIZATION_LEVELS:
        raise ValueError(f"-O takes a level of 0, 1, 2 or 3, but got {level!r}")
    changes: dict[str, Any] = {}
    if level >= 1:
        changes["env_cfg.matmul_precision"] = "high"
    if level >= 2 and cfg.get("optim_wrapper") is not None:
        from runnerx.optim import enable_amp

        try:
            changes["optim_wrapper"] = enable_amp(cfg["optim_wrapper"], default_dtype="bfloat16")
        except ValueError as error:
            raise ValueError(
                f"-O{level} turns on bfloat16 autocast, as --amp does: {error}"
            ) from None
    if level >= 3 and not cfg.get("compile"):
        changes["compile"] = True
    return changes
