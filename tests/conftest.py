"""Fixtures every test folder can use: a free port, spawned ranks run to completion, a
command run in the repository root, and the storage-backend registries left as found."""

import compileall
import faulthandler
import http.server
import logging
import multiprocessing
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch.multiprocessing as mp

ROOT = Path(__file__).parents[1]


def pytest_sessionstart(session):
    """Compile runnerx's bytecode once (files already compiled are skipped). The interpreters
    that tests start (tools/train.py, torchrun's ranks, the docs' examples) would otherwise
    each compile its ~220 modules from source where PYTHONDONTWRITEBYTECODE=1 is set, as it
    is on CI's machines: about 0.25 s each."""
    compileall.compile_dir(ROOT / "runnerx", quiet=1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def keep_local_rank(monkeypatch):
    """Run a test without LOCAL_RANK and drop whatever it sets (the tools' ``load_config``
    sets it, as torchrun would)."""
    monkeypatch.delenv("LOCAL_RANK", raising=False)


@pytest.fixture(scope="session")
def free_port():
    """A function giving a free localhost port."""
    return _free_port


@pytest.fixture(scope="session")
def dist_train_env():
    """A function ``(modules_dir)``: the environment for ``bash tools/dist_train.sh``: a free
    port, one torch thread per rank, this interpreter's torchrun first on PATH, and
    ``modules_dir`` importable (a test's hooks, named by ``custom_imports``)."""

    def environment(modules_dir: Path) -> dict:
        return dict(
            os.environ,
            PORT=str(_free_port()),
            OMP_NUM_THREADS="1",
            PYTHONPATH=f"{modules_dir}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        )

    return environment


# imported once by the fork server that starts the ranks, instead of by each rank (seconds each)
_PRELOADED = ["torch", "runnerx.runner"]


def _run_rank_and_keep_its_outcome(
    rank: int, run_rank, out_dir: str, environment: dict[str, str]
) -> None:
    """In a rank: ``run_rank(rank, out_dir)``, its result pickled for the test. The rank
    starts from the test's environment, as a spawned interpreter would (the fork server's is
    the one it was started with)."""
    from runnerx.dist.launch import shutdown_dist

    os.environ.clear()
    os.environ.update(environment)
    faulthandler.enable()
    outcome = run_rank(rank, out_dir)
    with open(Path(out_dir) / f"rank{rank}.pkl", "wb") as file:
        pickle.dump(outcome, file)
    shutdown_dist()


@pytest.fixture(scope="session")
def spawn_ranks():
    """A function ``(run_rank, out_dir, world_size, timeout)`` that spawns ``run_rank(rank,
    out_dir)`` on every rank, fails the test if they do not finish within ``timeout`` seconds,
    and returns what each rank's ``run_rank`` returned (pickled to ``out_dir/rank<r>.pkl``;
    the rank then leaves its process group, after run_rank's models and runners are gone).
    The ranks start with the test's environment plus MASTER_ADDR, MASTER_PORT (a free port)
    and WORLD_SIZE; each sets its own RANK, or passes ``rank=`` to ``init_process_group``.
    They are forked by a fork server that has imported torch and runnerx once for the whole
    session, and otherwise start as spawned interpreters do (each imports the test's module).
    A rank killed by a signal prints its Python stack (faulthandler), and the failure says
    which ranks had already written their results."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(_PRELOADED)

    def spawn(run_rank, out_dir: Path, world_size: int, timeout: float) -> list:
        results = [Path(out_dir) / f"rank{rank}.pkl" for rank in range(world_size)]
        environment = dict(
            os.environ,
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(_free_port()),
            WORLD_SIZE=str(world_size),
        )
        context = mp.start_processes(
            _run_rank_and_keep_its_outcome,
            args=(run_rank, str(out_dir), environment),
            nprocs=world_size,
            join=False,
            start_method="forkserver",
        )
        deadline = time.monotonic() + timeout
        try:
            while not context.join(timeout=1):
                if time.monotonic() > deadline:
                    for process in context.processes:
                        process.kill()
                    pytest.fail(f"the ranks did not finish within {timeout} s")
        except mp.ProcessExitedException as error:
            written = [rank for rank, path in enumerate(results) if path.exists()]
            pytest.fail(f"{error}; ranks that had written their results: {written}")
        outcomes = []
        for path in results:
            with open(path, "rb") as file:
                outcomes.append(pickle.load(file))
        return outcomes

    return spawn


@pytest.fixture(scope="session")
def run_in_repo():
    """A function ``(args, env=None, timeout=300)`` that runs the command ``args`` in the
    repository root (with ``env`` as its environment when given) and returns the finished
    ``subprocess.CompletedProcess`` with its stdout and stderr as text. It does not check the
    exit status: the caller asserts on it, with the output its failure message needs."""

    def run(
        args: list, env: dict | None = None, timeout: float | None = 300
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )

    return run


@pytest.fixture
def http_server(tmp_path):
    """A real HTTP server on localhost serving ``tmp_path/served``; yields its base URL and a
    list of the paths it was asked for."""
    folder = tmp_path / "served"
    folder.mkdir()
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):
            requests.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", folder, requests
    server.shutdown()
    server.server_close()


@pytest.fixture
def restore_backends():
    """Leaves runnerx's backend registries (and FileClient's) as they were; the test starts
    with no FileClient cached."""
    from runnerx.fileio import FileClient
    from runnerx.fileio.backends import registry_utils

    saved = [
        (table, dict(table))
        for table in (
            registry_utils.backends,
            registry_utils.prefix_to_backends,
            registry_utils._instances,
            FileClient._backends,
            FileClient._prefix_to_backends,
            FileClient._instances,
        )
    ]
    FileClient._instances.clear()
    yield
    for table, content in saved:
        table.clear()
        table.update(content)


@pytest.fixture
def logged_warnings():
    """``logged_warnings(logger_name)``: a list that gets the message of every WARNING (or
    worse) that logger emits from then until the test ends, whatever handlers and levels
    earlier runs left on it."""
    undo = []

    def capture(name: str) -> list[str]:
        messages: list[str] = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = lambda record: messages.append(record.getMessage())
        logger = logging.getLogger(name)
        undo.append((logger, handler, logger.level))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        return messages

    yield capture
    for logger, handler, level in undo:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def current_log(monkeypatch, logged_warnings):
    """The WARNINGs logged through the current logger (``print_log(logger='current')``, where
    a run's notes and warnings reach its log file) while the test runs: a logger of the
    test's own is made current."""
    from runnerx.logging import logger as logger_module

    name = "test_current_log"
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger(name))
    return logged_warnings(name)
