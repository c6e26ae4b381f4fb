"""MMEngine's own runs of oracle_net's model, made once for the optim tests that compare with
them (mmengine_optim_runs.py, in another process: MMEngine's Runner sets up global state)."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def mmengine_optim_runs(tmp_path_factory, run_in_repo) -> Path:
    """The folder mmengine_optim_runs.py wrote (see its docstring for what is in it)."""
    pytest.importorskip("mmengine.runner")
    out_dir = tmp_path_factory.mktemp("mmengine_optim_runs")
    result = run_in_repo(
        [sys.executable, str(HERE / "mmengine_optim_runs.py"), str(out_dir)], timeout=120
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return out_dir
