"""The process environment of a run: random seeds, multiprocessing, cuDNN, the distributed
settings and the default scope (checked), version info, and the run's own folder in the work
dir.

.. code-block:: python

    randomness = dict(seed=0, deterministic=False, diff_rank_seed=False)
    env_cfg = dict(cudnn_benchmark=False, mp_cfg=dict(mp_start_method='fork'), dist_cfg=dict(),
                   resource_limit=4096)
"""

from __future__ import annotations

import contextlib
import numbers
import os
import platform
import random
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from runnerx.dist import broadcast_object, get_rank
from runnerx.dist.launch import check_dist_cfg
from runnerx.suggest import did_you_mean
from runnerx.utils.dl_utils.setup_env import MP_CFG_DEFAULTS, set_multi_processing

ENV_CFG_KEYS = (
    "cudnn_benchmark",
    "mp_cfg",
    "dist_cfg",
    "resource_limit",
    "matmul_precision",
    "channels_last",
)
RANDOMNESS_KEYS = ("seed", "deterministic", "diff_rank_seed")


def check_keys(cfg: dict, allowed: tuple[str, ...], name: str) -> None:
    """Refuse keys a config dict should not have, naming the closest allowed one."""

    for key in cfg:
        if key not in allowed:
            hint = did_you_mean(key, allowed)
            raise KeyError(f"{name}.{key} is not a known key (known: {', '.join(allowed)}){hint}")


def set_random_seed(
    seed: int | None = None, deterministic: bool = False, diff_rank_seed: bool = False
) -> int:
    """Seed python, numpy and torch on every rank and return the seed used.

    ``seed=None`` draws one on rank 0 and shares it, so all ranks agree; ``diff_rank_seed``
    adds the rank so that ranks differ; ``deterministic`` asks torch for deterministic
    algorithms (slower) and turns cuDNN benchmarking off, with MMEngine's warning when it was
    on. The seed (the rank added) must lie in [0, 2**32), as NumPy, and so MMEngine, requires.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise TypeError(
            f"randomness.seed must be an int, or None for a random one that all ranks share, "
            f"but got {seed!r} ({type(seed).__name__})"
        )
    if seed is None:
        seed = broadcast_object(random.randint(0, 2**31 - 1))
    seed = int(seed)  # a NumPy integer too: random.seed takes no other
    if diff_rank_seed:
        seed += get_rank()
    if not 0 <= seed < 2**32:
        plus_rank = " plus the rank (diff_rank_seed=True)" if diff_rank_seed else ""
        raise ValueError(
            f"randomness.seed{plus_rank} must lie in [0, 2**32) (NumPy's seeds), got {seed}"
        )
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if deterministic:
        if torch.backends.cudnn.benchmark:
            warnings.warn(
                "torch.backends.cudnn.benchmark is going to be set as `False` to cause cuDNN "
                "to deterministically select an algorithm (randomness.deterministic=True wins "
                "over env_cfg.cudnn_benchmark=True)",
                stacklevel=2,
            )
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.use_deterministic_algorithms(True, warn_only=True)
    return seed


@contextlib.contextmanager
def modes_kept(model: torch.nn.Module) -> Iterator[None]:
    """Each module of ``model`` leaves the block in the train/eval mode it entered it in (a
    frozen part's eval included), whatever the block set."""
    modes = [(module, module.training) for module in model.modules()]
    try:
        yield
    finally:
        for module, training in modes:
            module.training = training


def capture_rng_state() -> dict[str, Any]:
    """This process's random number generator states (Python, NumPy, torch, CUDA), in types
    that a ``weights_only`` checkpoint load accepts."""
    version, internal, gauss = random.getstate()
    kind, keys, position, has_gauss, cached = np.random.get_state()
    state: dict[str, Any] = {
        "python": (version, internal, gauss),
        "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), position, has_gauss, cached),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put back what :func:`capture_rng_state` returned."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, position, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), position, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def signal_handlers() -> dict[int, Any]:
    """The process's Python-level signal handlers now (empty outside the main thread, where
    they cannot be changed), for :func:`restore_signal_handlers`."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {number: signal.getsignal(number) for number in signal.valid_signals()}


def restore_signal_handlers(saved: dict[int, Any]) -> None:
    """Put back the handlers :func:`signal_handlers` saved, where they changed (a training
    that fails never reaches the hooks that give the stop signals back)."""
    for number, handler in saved.items():
        if handler is not None and signal.getsignal(number) is not handler:
            signal.signal(number, handler)


def setup_env(env_cfg: dict, distributed: bool = False) -> None:
    """Apply ``env_cfg`` as MMEngine's Runner does: cuDNN benchmarking, ``mp_cfg`` through
    :func:`~runnerx.utils.dl_utils.set_multi_processing` (start method, OpenCV threads and, when
    ``distributed``, ``OMP_NUM_THREADS``/``MKL_NUM_THREADS``; MMEngine's defaults when
    ``mp_cfg`` is not given), and the open-files limit. Unknown keys and bad ``mp_cfg``
    values are refused before anything is set."""
    if "backend" in env_cfg:  # written by MMEngine's runner tutorial, which ignores it
        warnings.warn(
            f"env_cfg.backend={env_cfg['backend']!r} is ignored, as in MMEngine: the "
            "distributed backend is env_cfg.dist_cfg.backend",
            stacklevel=2,
        )
        env_cfg = {key: value for key, value in env_cfg.items() if key != "backend"}
    check_keys(env_cfg, ENV_CFG_KEYS, "env_cfg")
    check_dist_cfg(env_cfg.get("dist_cfg") or {})
    mp_cfg = env_cfg.get("mp_cfg") or {}
    check_keys(mp_cfg, tuple(MP_CFG_DEFAULTS), "env_cfg.mp_cfg")
    set_multi_processing(**mp_cfg, distributed=distributed)  # checks its values first
    if env_cfg.get("cudnn_benchmark"):
        torch.backends.cudnn.benchmark = True
    raise_open_files_limit(env_cfg.get("resource_limit"))


def raise_open_files_limit(wanted: int | None = None) -> None:
    """Raise this process's soft limit of open files to ``wanted`` (None: 4096), never lower
    it, and never past the hard limit, as MMEngine does on every run but on Windows: many
    dataloader workers otherwise fail with "Too many open files" (``env_cfg.resource_limit``)."""
    if wanted is None:
        wanted = 4096
    if isinstance(wanted, bool) or not isinstance(wanted, numbers.Integral) or wanted < 0:
        raise ValueError(
            "env_cfg.resource_limit must be an int >= 0 (the open files a process may have at "
            f"least; 4096 when not given, 0 leaves the limit as it is), got {wanted!r}"
        )
    if sys.platform == "win32":
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = resource.RLIM_INFINITY
    target = int(wanted) if hard == unlimited else min(int(wanted), hard)
    if soft != unlimited and target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def unknown_scope_warning(scope: str) -> str | None:
    """What to warn when no registry has the scope ``default_scope`` names, after the
    ``<scope>.registry`` import a lookup tries (MMEngine warns too); None when one has it.
    Lookups then fall back to runnerx's root registries."""
    import runnerx.registry as registries
    from runnerx.registry.scopes import MMENGINE_SCOPE, import_failure

    roots = [getattr(registries, name) for name in registries.__all__]
    roots = [root for root in roots if isinstance(root, registries.Registry)]
    if any(root.registry_for_scope(scope) is not None for root in roots):
        return None
    known = {MMENGINE_SCOPE}
    pending = list(roots)
    while pending:
        registry = pending.pop()
        known.add(registry.scope)
        pending.extend(registry.children.values())
    hint = did_you_mean(scope, known)
    why = import_failure(scope)
    tried = f" (importing {scope}.registry failed: {why})" if why else ""
    return (
        f"default_scope={scope!r} is not the scope of any registry{tried} (known: "
        f"{', '.join(sorted(known))}){hint}. Components are looked up in runnerx's registries; "
        "a package's scope exists once its registries are imported (custom_imports)"
    )


def make_run_dir(work_dir: str) -> str:
    """Create the run's folder in ``work_dir`` and return its name: the start time,
    ``20261121_150405``, with ``_1``, ``_2``... added when a run that started in the same
    second has that folder already (so that no two runs share a log file)."""
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime())
    name, count = stamp, 0
    while True:
        try:
            os.makedirs(os.path.join(work_dir, name))
            return name
        except FileExistsError:
            count += 1
            name = f"{stamp}_{count}"
        except OSError as error:
            raise _unmakeable(work_dir, error) from error


def _unmakeable(work_dir: str, error: OSError) -> OSError:
    """``error`` (same type) saying that it is the work dir that cannot be made, and why."""
    existing = os.path.abspath(work_dir)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    given = f"work_dir {work_dir!r} (from --work-dir or the config's work_dir)"
    why, test_hint = error.strerror or error, ""
    if not os.path.isdir(existing):
        problem = f"cannot be created: {existing!r} is a file, not a folder"
    elif existing == os.path.abspath(work_dir):
        problem = f"exists but takes no new folder ({why}), which each run needs for its log"
        test_hint = (
            " (to test a checkpoint kept there, give tools/test.py the checkpoint's path and "
            "another --work-dir)"
        )
    else:
        problem = f"cannot be created: {existing!r} did not take a new folder ({why})"
    return type(error)(f"{given} {problem}; choose a folder you can write to{test_hint}")


def environment_summary() -> dict[str, Any]:
    """Versions and devices worth having at the top of every log."""
    from runnerx.version import __version__

    summary = {
        "Python": sys.version.split()[0],
        "platform": platform.platform(),
        "PyTorch": torch.__version__,
        "runnerx": __version__,
        "CUDA available": torch.cuda.is_available(),
        "CPU threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        summary["GPU"] = torch.cuda.get_device_name(0)
        summary["CUDA"] = torch.version.cuda
    return summary


def runtime_summary(
    env_cfg: dict, randomness: dict, seed: int, launcher: str, world_size: int
) -> dict[str, Any]:
    """The run's settings that MMEngine logs as its "Runtime environment": cuDNN benchmarking
    (as it is now: off when ``randomness.deterministic`` won), ``mp_cfg`` with its defaults,
    ``dist_cfg``, the other ``env_cfg`` keys given, the randomness and the launcher."""
    summary: dict[str, Any] = {
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "mp_cfg": {**MP_CFG_DEFAULTS, **(env_cfg.get("mp_cfg") or {})},
        "dist_cfg": dict(env_cfg.get("dist_cfg") or {}),
    }
    for key in ENV_CFG_KEYS:
        if key in env_cfg and key not in summary:
            summary[key] = env_cfg[key]
    summary["seed"] = seed
    summary["deterministic"] = bool(randomness.get("deterministic", False))
    summary["diff_rank_seed"] = bool(randomness.get("diff_rank_seed", False))
    summary["Distributed launcher"] = launcher
    summary["Distributed training"] = world_size > 1
    summary["world size"] = world_size
    return summary
