"""More experiment-tracker backends under MMEngine's names: ClearML and DVCLive.

.. code-block:: python

    visualizer = dict(type='Visualizer', vis_backends=[
        dict(type='LocalVisBackend'),
        dict(type='ClearMLVisBackend', init_kwargs=dict(project_name='digits')),
        dict(type='DVCLiveVisBackend'),
    ])

They take MMEngine's arguments. As with W&B and MLflow, the tracker's package is imported
when the backend first writes, and only rank 0 writes. MMEngine's ``NeptuneVisBackend`` and
``AimVisBackend`` are not ported (see docs/logging.md).
"""

from __future__ import annotations

import os
from typing import Any

from runnerx.dist import master_only
from runnerx.registry import VISBACKENDS

from .vis_backends import ScalarWiseVisBackend, _scalar_value
from .vis_backends_external import (
    _artifact_files,
    _checked_init_kwargs,
    _checked_suffixes,
    _config_dict,
    _import_tracker,
)


@VISBACKENDS.register_module()
class ClearMLVisBackend(ScalarWiseVisBackend):
    """Scalars, the config and artifacts in a ClearML task (``pip install clearml``).

    The task starts on first use with ``clearml.Task.init(**init_kwargs)``; ``save_dir`` is
    not used (ClearML keeps its files itself; ``Task.set_offline(True)`` or the environment's
    ``CLEARML_OFFLINE_MODE=1`` keeps the session in a local folder). ``add_config`` connects
    the config as the task's configuration ``General``; each scalar is a plot titled by its
    name, at ``step``. ``close`` uploads the files directly in the config's ``work_dir``
    whose names end with one of ``artifact_suffix`` (MMEngine's default takes the dumped
    config and the ``.pth`` checkpoints) as artifacts named after the file, then closes the
    task. It waits for each upload (MMEngine does not, and an offline session could be
    closed before it recorded the last one). ``Task.init`` reseeds the random number
    generators; here they are put back as they were, so that the run's ``randomness.seed``
    holds (MMEngine's run goes on with ClearML's seed).

    .. code-block:: python

        dict(type='ClearMLVisBackend',
             init_kwargs=dict(project_name='digits', task_name='convnet'),
             artifact_suffix='.py')  # the dumped config, not the checkpoints
    """

    def __init__(
        self,
        save_dir: str | os.PathLike | None = None,
        init_kwargs: dict | None = None,
        artifact_suffix: str | tuple | list = (".py", ".pth"),
    ) -> None:
        super().__init__(save_dir)
        self._init_kwargs = _checked_init_kwargs("ClearMLVisBackend", init_kwargs)
        self._artifact_suffix = _checked_suffixes("ClearMLVisBackend", artifact_suffix)
        self._work_dir: str | None = None
        self._clearml: Any = None
        self._task: Any = None

    @property
    def experiment(self) -> Any:
        """The ``clearml`` module, with this backend's task started."""
        self._started_task()
        return self._clearml

    def _started_task(self) -> Any:
        if self._task is None:
            clearml = _import_tracker(
                "ClearMLVisBackend", "clearml", "pip install clearml", "clearml"
            )
            # Task.init seeds Python's, NumPy's and torch's generators (with 1337 unless told
            # otherwise), which would silently change a seeded run's weights and data order
            from runnerx.runner.environment import capture_rng_state, restore_rng_state

            state = capture_rng_state()
            self._task = clearml.Task.init(**self._init_kwargs)
            restore_rng_state(state)
            self._clearml = clearml
        return self._task

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Connect the config to the task (its work_dir is where ``close`` takes artifacts)."""
        tree = _config_dict(config)
        self._work_dir = tree.get("work_dir")
        self._started_task().connect_configuration(tree)

    @master_only
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Report the value at iteration ``step`` (title and series are ``name``)."""
        number = _scalar_value("ClearMLVisBackend", name, value)
        if number is not None:
            logger = self._started_task().get_logger()
            logger.report_scalar(title=name, series=name, value=number, iteration=step)

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Report the image at iteration ``step`` (title and series are ``name``)."""
        from .png import image_array

        array = image_array(image, f"ClearMLVisBackend.add_image({name!r})")
        logger = self._started_task().get_logger()
        logger.report_image(title=name, series=name, iteration=step, image=array)

    @master_only
    def close(self) -> None:
        """Upload the work_dir's files matching ``artifact_suffix`` and close the task; after
        :meth:`mark_failed` the task is marked failed first, with the error as its reason
        (its close then cannot mark it completed; an offline session records no status)."""
        failure = self._take_failure()
        if self._task is None:
            return
        if self._work_dir is not None and os.path.isdir(self._work_dir):
            for name in sorted(os.listdir(self._work_dir)):
                path = os.path.join(self._work_dir, name)
                if name.endswith(self._artifact_suffix) and os.path.isfile(path):
                    self._task.upload_artifact(name, path, wait_on_upload=True)
        if failure is not None:
            self._task.mark_failed(status_reason=failure.reason)
        self._task.close()
        self._task = None


@VISBACKENDS.register_module()
class DVCLiveVisBackend(ScalarWiseVisBackend):
    """Scalars, params and artifacts with DVCLive (``pip install dvclive``).

    On first use a ``dvclive.Live`` writes into ``save_dir`` (``init_kwargs`` are its
    arguments; MMEngine's defaults ``save_dvc_exp=True`` and ``cache_images=True``). As in
    MMEngine, outside any Git and DVC repository the current directory is made a DVC
    repository without Git (``dvc init --no-scm``), so that artifacts can be tracked;
    MMEngine forces that (``-f``), which wipes an existing one's cache: here an existing DVC
    repository is used as it is.

    - ``add_config``: the config as params (``params.yaml``).
    - ``add_scalars``: each value as a metric at ``step`` (``plots/metrics/<name>.tsv``,
      and the latest in ``metrics.json``).
    - ``close``: every file under ``save_dir`` whose name ends with one of
      ``artifact_suffix`` (the log's JSON lines and the dumped config when LocalVisBackend
      writes there too) is tracked with ``live.log_artifact``, DVCLive's own files aside
      (MMEngine passes them too, and DVC refuses its metrics file), then the run ends.

    .. code-block:: python

        dict(type='DVCLiveVisBackend', init_kwargs=dict(save_dvc_exp=False, report='md'))
    """

    def __init__(
        self,
        save_dir: str | os.PathLike,
        artifact_suffix: str | tuple | list = (".json", ".py", "yaml"),
        init_kwargs: dict | None = None,
    ) -> None:
        super().__init__(save_dir)
        self._artifact_suffix = _checked_suffixes("DVCLiveVisBackend", artifact_suffix)
        self._init_kwargs = _checked_init_kwargs("DVCLiveVisBackend", init_kwargs)
        self._live: Any = None

    @property
    def experiment(self) -> Any:
        """The ``dvclive.Live`` (created on first use)."""
        if self._live is None:
            dvclive = _import_tracker(
                "DVCLiveVisBackend", "dvclive", "pip install dvclive", "dvclive"
            )
            _make_dvc_repo_outside_git()
            kwargs = {"dir": self._save_dir, "save_dvc_exp": True, "cache_images": True}
            self._live = dvclive.Live(**{**kwargs, **self._init_kwargs})
        return self._live

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Log the config as params."""
        self.experiment.log_params(_param_like(_config_dict(config)))

    @master_only
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Log the value as metric ``name`` at ``step``."""
        number = _scalar_value("DVCLiveVisBackend", name, value)
        if number is not None:
            live = self.experiment
            live.step = step
            live.log_metric(name, number)

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log the image as ``<name>.png`` at ``step`` (DVCLive keeps one file per name,
        and with ``cache_images`` tracks it with DVC)."""
        from .png import image_array

        array = image_array(image, f"DVCLiveVisBackend.add_image({name!r})")
        live = self.experiment
        live.step = step
        live.log_image(f"{name}.png", array)

    @master_only
    def close(self) -> None:
        """Track the save_dir's files matching ``artifact_suffix`` and end the run."""
        live = self._live
        if live is None:
            return
        own = {os.path.abspath(p) for p in (live.metrics_file, live.params_file, live.dvc_file)}
        plots = os.path.abspath(live.plots_dir) + os.sep
        for path in _artifact_files(self._save_dir, self._artifact_suffix):
            path = os.path.abspath(path)
            if path not in own and not path.startswith(plots):
                live.log_artifact(path)
        live.end()
        self._live = None


def _make_dvc_repo_outside_git() -> None:
    """``dvc init --no-scm`` in the current directory when it is in no DVC or Git repository
    (in a Git repository DVCLive makes the DVC repository itself)."""
    from dvc.exceptions import NotDvcRepoError
    from dvc.repo import Repo
    from scmrepo.exceptions import SCMError
    from scmrepo.git import Git

    try:
        Repo.find_root()
        return
    except NotDvcRepoError:
        pass
    try:
        Git().root_dir  # noqa: B018 (raises outside a Git repository)
    except SCMError:
        Repo.init(os.curdir, no_scm=True)


def _param_like(value: Any) -> Any:
    """``value`` as DVC params take them: dicts, lists and plain numbers and strings."""
    if isinstance(value, dict):
        return {key: _param_like(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_param_like(item) for item in value]
    if hasattr(value, "tolist"):  # a tensor or numpy array or scalar
        return value.tolist()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


class _NotPorted:
    """A name of MMEngine's backends that runnerx does not have: building it says so (the
    registry would otherwise suggest an unrelated backend by its spelling)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        name = type(self).__name__
        raise NotImplementedError(
            f"MMEngine's {name} is not ported to runnerx: its tracker's package cannot be "
            "installed beside runnerx's dependencies (see docs/logging.md, 'ClearML and "
            "DVCLive'). Log with WandbVisBackend, MLflowVisBackend, ClearMLVisBackend, "
            "DVCLiveVisBackend or TensorboardVisBackend instead, or register a "
            "BaseVisBackend subclass of your own"
        )


@VISBACKENDS.register_module()
class NeptuneVisBackend(_NotPorted):
    """Not ported (see :class:`_NotPorted`)."""


@VISBACKENDS.register_module()
class AimVisBackend(_NotPorted):
    """Not ported (see :class:`_NotPorted`)."""
