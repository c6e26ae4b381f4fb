"""Visualization backends that hand a run to an experiment tracker: Weights & Biases, MLflow.

.. code-block:: python

    visualizer = dict(type='Visualizer', vis_backends=[
        dict(type='LocalVisBackend'),
        dict(type='WandbVisBackend', init_kwargs=dict(project='digits')),
        dict(type='MLflowVisBackend', exp_name='digits', tracking_uri='http://localhost:5000'),
    ])

They take MMEngine's arguments. The tracker's package is imported when the backend first
writes (``import runnerx`` never imports it); only rank 0 writes.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from runnerx.dist import master_only
from runnerx.registry import VISBACKENDS

from .vis_backends import INTERRUPTED, BaseVisBackend, _config_text, _scalar_value


def _import_tracker(backend: str, module: str, install: str, extra: str) -> ModuleType:
    """The tracker's module, or an ImportError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{backend} needs the {module} package: {install} (or pip install "
            f"'runnerx[{extra}]'), or take dict(type='{backend}') out of "
            "visualizer.vis_backends"
        ) from error


def _not_project_code(path: str, root: str) -> bool:
    """``log_code``'s ``exclude_fn``: True for files that are not the project's own code."""
    folders = os.path.relpath(path, root).split(os.sep)[:-1]
    return any(folder.startswith(".") or folder in ("site-packages", "wandb") for folder in folders)


def _config_dict(config: Any) -> dict:
    """A Config (or a plain dict) as plain dicts and lists."""
    return config.to_dict() if hasattr(config, "to_dict") else dict(config)


def _checked_init_kwargs(backend: str, init_kwargs: Any) -> dict:
    """A copy of ``init_kwargs`` (None: empty), or a TypeError naming the key."""
    if init_kwargs is not None and not isinstance(init_kwargs, dict):
        raise TypeError(f"{backend}: init_kwargs must be a dict, got {init_kwargs!r}")
    return dict(init_kwargs or {})


def _checked_suffixes(backend: str, artifact_suffix: Any) -> tuple[str, ...]:
    """``artifact_suffix`` (a str or strs) as a tuple, or a TypeError naming the key."""
    suffixes = (artifact_suffix,) if isinstance(artifact_suffix, str) else artifact_suffix
    if not isinstance(suffixes, (tuple, list)) or not all(isinstance(s, str) for s in suffixes):
        raise TypeError(
            f"{backend}: artifact_suffix must be a str or strs, got {artifact_suffix!r}"
        )
    return tuple(suffixes)


@VISBACKENDS.register_module()
class WandbVisBackend(BaseVisBackend):
    """Scalars and the config in a Weights & Biases run (``pip install wandb``).

    The run starts on first use with ``wandb.init(**init_kwargs)``, its ``dir`` defaulting to
    ``save_dir``. As in MMEngine, wandb numbers the rows itself: ``step`` is not passed on
    (validation logs at epoch numbers, which wandb would drop as going backwards); the rows
    carry ``iter`` (and ``epoch``) from the log processor, which ``define_metric_cfg`` can
    make the x-axis. ``add_config`` sets ``wandb.config`` and saves the ``.py`` files under
    the current directory as a code artifact (``run.log_code``, named ``log_code_name``),
    leaving out hidden folders (a ``.venv`` inside the project, ``.git``), installed packages
    (``site-packages``) and wandb's own folders: MMEngine's walks a virtualenv's thousands of
    files too.

    .. code-block:: python

        dict(type='WandbVisBackend',
             init_kwargs=dict(project='digits', mode='offline'),
             define_metric_cfg={'accuracy/top1': 'max'})   # or [dict(name=..., step_metric=...)]

    ``commit=False`` makes each log update the pending row instead of adding one.
    ``visualizer.add_graph(model, data_batch)`` calls ``wandb.watch(model, **watch_kwargs)``,
    as MMEngine's does.
    """

    def __init__(
        self,
        save_dir: str | os.PathLike,
        init_kwargs: dict | None = None,
        define_metric_cfg: dict | list | None = None,
        commit: bool | None = True,
        log_code_name: str | None = None,
        watch_kwargs: dict | None = None,
    ) -> None:
        super().__init__(save_dir)
        if define_metric_cfg is not None and not isinstance(define_metric_cfg, (dict, list)):
            raise TypeError(
                "WandbVisBackend: define_metric_cfg must be a dict {metric: summary} or a "
                f"list of define_metric keyword dicts, got {define_metric_cfg!r}"
            )
        if watch_kwargs is not None and not isinstance(watch_kwargs, dict):
            raise TypeError(f"WandbVisBackend: watch_kwargs must be a dict, got {watch_kwargs!r}")
        self._init_kwargs = _checked_init_kwargs("WandbVisBackend", init_kwargs)
        self._define_metric_cfg = define_metric_cfg
        self._commit = commit
        self._log_code_name = log_code_name
        self._watch_kwargs = dict(watch_kwargs or {})
        self._wandb: Any = None
        self._run: Any = None

    @property
    def experiment(self) -> Any:
        """The ``wandb`` module, with this backend's run started (``experiment.run``)."""
        self._started_run()
        return self._wandb

    def _started_run(self) -> Any:
        if self._run is None:
            wandb = _import_tracker("WandbVisBackend", "wandb", "pip install wandb", "wandb")
            os.makedirs(self._save_dir, exist_ok=True)
            run = wandb.init(**{"dir": self._save_dir, **self._init_kwargs})
            if isinstance(self._define_metric_cfg, dict):
                for metric, summary in self._define_metric_cfg.items():
                    run.define_metric(metric, summary=summary)
            else:
                for metric_kwargs in self._define_metric_cfg or []:
                    run.define_metric(**metric_kwargs)
            self._wandb, self._run = wandb, run
        return self._run

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Put the config into ``wandb.config`` and log the code as an artifact."""
        run = self._started_run()
        allow_val_change = self._init_kwargs.get("allow_val_change", False)
        run.config.update(_config_dict(config), allow_val_change=allow_val_change)
        run.log_code(name=self._log_code_name, exclude_fn=_not_project_code)

    @master_only
    def add_graph(self, model: Any, data_batch: Any, **kwargs: Any) -> None:
        """Watch ``model`` (its gradients and parameters, as ``watch_kwargs`` say) in the run;
        ``data_batch`` is not used."""
        self._started_run()
        self._wandb.watch(model, **self._watch_kwargs)

    @master_only
    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: str | None = None, **kwargs: Any
    ) -> None:
        """Log the values as one row (``step`` and ``file_path`` are not used)."""
        self._started_run().log(dict(scalar_dict), commit=self._commit)

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log the image as a ``wandb.Image`` under ``name`` (``step`` is not used, as in
        MMEngine: the run's own step counts)."""
        from .png import image_array

        run = self._started_run()
        array = image_array(image, f"WandbVisBackend.add_image({name!r})")
        run.log({name: self._wandb.Image(array)}, commit=self._commit)

    @master_only
    def close(self) -> None:
        """Finish the run (a later write starts a new one); after :meth:`mark_failed` with
        the run's exit code (130 after Ctrl-C, else 1), which marks it failed in W&B."""
        failure = self._take_failure()
        if self._run is not None:
            self._run.finish(exit_code=0 if failure is None else failure.exit_code)
            self._run = None


@VISBACKENDS.register_module()
class MLflowVisBackend(BaseVisBackend):
    """Scalars, params and artifacts in an MLflow run (``pip install mlflow``, or
    ``mlflow-skinny`` for a tracking server or a file store).

    On first use the run starts in experiment ``exp_name`` (default ``'Default'``, created
    with ``artifact_location`` if missing) at ``tracking_uri``; without one, in a file store
    in ``save_dir`` (MMEngine's default: recent mlflow refuses file stores unless
    ``MLFLOW_ALLOW_FILE_STORE=true``). ``run_name``, ``tags`` and ``params`` go to the run
    at once. If a run is already active (``with mlflow.start_run(): runner.train()``), the
    backend logs into it and leaves it open (MMEngine would end it).

    - ``add_config``: the config, flattened to dotted names (``model.backbone.depth``), as
      params (only the top-level keys in ``tracked_config_keys`` when given) and its text as
      the artifact ``config.py``.
    - ``add_scalars``: metrics at ``step``.
    - ``close``: every file under the config's ``work_dir`` (``save_dir`` without one) whose
      name ends with one of ``artifact_suffix`` becomes an artifact at its relative path
      (hidden files and mlflow's own file-store folders aside), then the run ends: FINISHED,
      or FAILED (KILLED after Ctrl-C) when the Runner's run failed (MMEngine: always
      FINISHED).

    .. code-block:: python

        dict(type='MLflowVisBackend', exp_name='digits', run_name='convnet_lr0.1',
             tags=dict(team='vision'), params=dict(note='baseline'),
             tracking_uri='http://localhost:5000', tracked_config_keys=['model', 'optim_wrapper'])
    """

    def __init__(
        self,
        save_dir: str | os.PathLike,
        exp_name: str | None = None,
        run_name: str | None = None,
        tags: dict | None = None,
        params: dict | None = None,
        tracking_uri: str | None = None,
        artifact_suffix: str | tuple | list = (".json", ".log", ".py", "yaml"),
        tracked_config_keys: Any = None,
        artifact_location: str | None = None,
    ) -> None:
        super().__init__(save_dir)
        self._exp_name = exp_name or "Default"
        self._run_name = run_name
        self._tags = tags
        self._params = params
        self._tracking_uri = tracking_uri
        self._artifact_suffix = _checked_suffixes("MLflowVisBackend", artifact_suffix)
        self._tracked_config_keys = tracked_config_keys
        self._artifact_location = artifact_location
        self._artifact_root = self._save_dir
        self._mlflow: Any = None
        self._owns_run = False

    @property
    def experiment(self) -> Any:
        """The ``mlflow`` module, with this backend's run active."""
        if self._mlflow is None:
            self._start()
        return self._mlflow

    def _start(self) -> None:
        mlflow = _import_tracker(
            "MLflowVisBackend",
            "mlflow",
            "pip install mlflow (mlflow-skinny is enough for a tracking server)",
            "mlflow",
        )
        os.makedirs(self._save_dir, exist_ok=True)
        uri = self._tracking_uri
        if uri is None:
            _check_file_store_allowed()
            uri = Path(self._save_dir).absolute().as_uri()
        mlflow.set_tracking_uri(uri)
        self._owns_run = mlflow.active_run() is None
        if self._owns_run:
            experiment = mlflow.get_experiment_by_name(self._exp_name)
            if experiment is None:
                experiment_id = mlflow.create_experiment(
                    self._exp_name, artifact_location=self._artifact_location
                )
            else:
                experiment_id = experiment.experiment_id
            mlflow.start_run(experiment_id=experiment_id)
        if self._run_name is not None:
            mlflow.set_tag("mlflow.runName", self._run_name)
        if self._tags:
            mlflow.set_tags(self._tags)
        if self._params:
            mlflow.log_params(self._params)
        self._mlflow = mlflow

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Log the flattened config as params and its text as the artifact ``config.py``."""
        tree = _config_dict(config)
        if tree.get("work_dir") is not None:
            self._artifact_root = os.path.abspath(tree["work_dir"])
        if self._tracked_config_keys is not None:
            missing = [key for key in self._tracked_config_keys if key not in tree]
            if missing:
                raise KeyError(
                    f"MLflowVisBackend: tracked_config_keys names {missing}, which the config "
                    f"lacks; its top-level keys are {sorted(tree)}"
                )
            tree = {key: tree[key] for key in self._tracked_config_keys}
        self.experiment.log_params(_flatten(tree))
        self._mlflow.log_text(_config_text(config), "config.py")

    @master_only
    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: str | None = None, **kwargs: Any
    ) -> None:
        """Log the metrics at ``step`` (a 'step' key is the step, not a metric)."""
        metrics = {}
        for name, value in scalar_dict.items():
            number = None if name == "step" else _scalar_value("MLflowVisBackend", name, value)
            if number is not None:
                metrics[name] = number
        self.experiment.log_metrics(metrics, step=step)

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log the image as the artifact ``<name>_<step>.png`` (MLflow encodes it with Pillow)."""
        from .png import image_array

        array = image_array(image, f"MLflowVisBackend.add_image({name!r})")
        self.experiment.log_image(array, f"{name}_{step}.png")

    @master_only
    def close(self) -> None:
        """Log the files matching ``artifact_suffix`` as artifacts and end the run, with
        status FINISHED, or after :meth:`mark_failed` FAILED (KILLED after Ctrl-C)."""
        failure = self._take_failure()
        if self._mlflow is None:
            return
        for path in _artifact_files(self._artifact_root, self._artifact_suffix):
            folder = os.path.dirname(os.path.relpath(path, self._artifact_root))
            self._mlflow.log_artifact(path, folder or None)
        if self._owns_run:
            status = "FINISHED" if failure is None else "FAILED"
            if failure is not None and failure.exit_code == INTERRUPTED:
                status = "KILLED"
            self._mlflow.end_run(status)
        self._mlflow = None


def _check_file_store_allowed() -> None:
    """Fail early, with the fix, where mlflow would refuse the default file store."""
    variables = importlib.import_module("mlflow.environment_variables")
    allow = getattr(variables, "MLFLOW_ALLOW_FILE_STORE", None)  # mlflow 3.x and later
    if allow is not None and not allow.get():
        raise RuntimeError(
            "MLflowVisBackend: without a tracking_uri the runs go to a file store in save_dir, "
            "which this mlflow refuses unless the environment has MLFLOW_ALLOW_FILE_STORE=true; "
            "set it, or give visualizer.vis_backends[...].tracking_uri (a tracking server "
            "'http://host:5000', or 'sqlite:///mlflow.db' with the full mlflow package)"
        )


def _flatten(tree: dict, prefix: str = "") -> dict:
    """``{'a': {'b': 1}, 'c': [dict(d=2), 3]}`` -> ``{'a.b': 1, 'c.0.d': 2, 'c.1': 3}``: a list
    is split by index only when it holds a dict (MMEngine's param names)."""
    flat = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
            flat.update(_flatten(dict(enumerate(value)), f"{name}."))
        else:
            flat[name] = value
    return flat


def _artifact_files(root: str, suffixes: tuple[str, ...]) -> Iterator[str]:
    """The files under ``root`` whose names end with one of ``suffixes``, hidden ones aside."""
    for folder, subfolders, names in os.walk(root):
        if "meta.yaml" in names:  # an experiment or run of a file store: mlflow's own records
            subfolders.clear()
            continue
        subfolders.sort()
        for name in sorted(names):
            if not name.startswith(".") and name.endswith(suffixes):
                yield os.path.join(folder, name)
