"""MultiProcessTestCase: a ``unittest.TestCase`` whose test methods run once in each of
``world_size`` new processes, the ranks 0 to ``world_size - 1`` (MMEngine's
``mmengine.testing._internal.MultiProcessTestCase``, which comes from PyTorch's own tests).

The test's process (``self.rank == -1``) only starts the ranks, waits for them and turns what
they report into the test's outcome: the traceback of a rank that raised, a skip, or, after
:attr:`~MultiProcessTestCase.timeout` seconds, the Python stack of each rank still running.

.. code-block:: python

    import torch
    import torch.distributed as torch_dist
    from runnerx import dist
    from runnerx.testing._internal import MultiProcessTestCase

    class TestAllReduce(MultiProcessTestCase):
        def setUp(self):
            super().setUp()
            self._spawn_processes()

        def test_sum(self):  # runs in rank 0 and in rank 1
            torch_dist.init_process_group(
                'gloo', init_method=f'file://{self.file_name}',
                rank=self.rank, world_size=self.world_size)
            total = dist.all_reduce(torch.tensor([self.rank + 1.0]))
            self.assertEqual(total.item(), 3.0)
"""

from __future__ import annotations

import faulthandler
import functools
import os
import signal
import sys
import tempfile
import time
import traceback
import types
import unittest
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import NamedTuple

import torch.multiprocessing as mp

from runnerx.dist.launch import shutdown_dist

#: the signal on which a rank prints its Python stack (SIGUSR1 is the PreemptionHook's)
_STACK_SIGNAL = getattr(signal, "SIGUSR2", None)


class TestSkip(NamedTuple):
    """The exit code by which a rank says that the test is skipped, and why."""

    exit_code: int
    message: str


#: exit codes a rank may end with to skip the test, e.g.
#: ``sys.exit(TEST_SKIPS['multi-gpu-2'].exit_code)``. MMEngine gives 'backend_unavailable'
#: the code of a failed rank (10), so that exit fails the test there; here it skips.
TEST_SKIPS = {
    "backend_unavailable": TestSkip(14, "the distributed backend is not available"),
    "no_cuda": TestSkip(11, "CUDA is not available"),
    "multi-gpu-2": TestSkip(12, "the test needs at least 2 CUDA devices"),
    "generic": TestSkip(13, "a rank skipped the test"),
}
_SKIP_MESSAGES = {skip.exit_code: skip.message for skip in TEST_SKIPS.values()}


class MultiProcessTestCase(unittest.TestCase):
    """A TestCase whose test methods run in :attr:`world_size` processes.

    - ``setUp`` (which must call ``super().setUp()``) ends with ``self._spawn_processes()``
      (fresh interpreters: the test's module must be importable) or
      ``self._fork_processes()``. ``setUp`` and ``tearDown`` run in the test's process only;
      each rank runs :meth:`prepare_subprocess`, then the test method.
    - In a rank: ``self.rank``, ``self.world_size`` and ``self.file_name``, a file of this
      test that every rank reaches (``init_method=f'file://{self.file_name}'``).
    - A rank that raises fails the test with its traceback (the other ranks are stopped);
      one that raises ``unittest.SkipTest`` skips it; one that exits with another non-zero
      code (or is killed) fails it, unless the test method is in
      ``self.skip_return_code_checks`` (add ``self.test_x.__wrapped__``).
    - A rank leaves its process group when the test method returns.

    MMEngine 0.10 reports a test whose ranks all pass as skipped ("due to the program
    abort"), and skips one whose rank was killed; both are bugs, and here the first passes
    and the second fails.
    """

    MAIN_PROCESS_RANK = -1
    TEST_ERROR_EXIT_CODE = 10

    def __init__(self, method_name: str = "runTest", methodName: str = "runTest") -> None:
        # unittest passes methodName=; MMEngine's own first argument is method_name
        if methodName != "runTest":
            method_name = methodName
        super().__init__(method_name)
        test = getattr(self, method_name, None)
        if test is not None:
            setattr(self, method_name, self.join_or_run(test))

    @property
    def world_size(self) -> int:
        """How many ranks run each test method (override it to change)."""
        return 2

    @property
    def timeout(self) -> float:
        """Seconds the ranks of one test may run before they are stopped and it fails."""
        return 1000

    @property
    def is_master(self) -> bool:
        """Whether this is rank 0."""
        return self.rank == 0

    def prepare_subprocess(self) -> None:
        """Run in each rank before the test method (``setUp`` does not run there)."""

    def join_or_run(self, fn: Callable[[], None]) -> Callable[[], None]:
        """``fn`` as the test method: in the test's process it waits for the ranks and
        judges them; in a rank it runs ``fn``."""

        @functools.wraps(fn)
        def wrapper(self: MultiProcessTestCase) -> None:
            if self.rank == self.MAIN_PROCESS_RANK:
                self._join_processes(fn)
            else:
                fn()

        return types.MethodType(wrapper, self)

    def setUp(self) -> None:
        super().setUp()
        self.skip_return_code_checks: list[Callable] = []
        self.processes: list[mp.Process] = []
        self.pid_to_pipe: dict[int, Connection] = {}
        self.rank = self.MAIN_PROCESS_RANK
        with tempfile.NamedTemporaryFile(prefix="runnerx_ranks_", delete=False) as file:
            self.file_name = file.name

    def tearDown(self) -> None:
        super().tearDown()
        self._stop_processes()
        self.processes = []  # each holds open file descriptors until it is dropped
        for pipe in self.pid_to_pipe.values():
            pipe.close()
        self.pid_to_pipe = {}
        if os.path.exists(self.file_name):
            os.remove(self.file_name)

    def _current_test_name(self) -> str:
        return self._testMethodName

    def _start_processes(self, process_class: type) -> None:
        self.processes = []
        for rank in range(int(self.world_size)):
            parent_end, child_end = mp.Pipe()
            process = process_class(
                target=type(self)._run,
                name=f"process {rank}",
                args=(rank, self._current_test_name(), self.file_name, child_end),
            )
            process.start()
            child_end.close()  # the rank holds its own copy
            self.pid_to_pipe[process.pid] = parent_end
            self.processes.append(process)

    def _spawn_processes(self) -> None:
        """Start the ranks as new interpreters, which import the test's module."""
        self._start_processes(mp.get_context("spawn").Process)

    def _fork_processes(self) -> None:
        """Start the ranks as forks of the test's process (POSIX only)."""
        self._start_processes(mp.get_context("fork").Process)

    @classmethod
    def _run(cls, rank: int, test_name: str, file_name: str, parent_pipe: Connection) -> None:
        """In a new process: be rank ``rank`` and run ``test_name``."""
        self = cls(test_name)
        self.rank = rank
        self.file_name = file_name
        self.run_test(test_name, parent_pipe)

    def run_test(self, test_name: str, parent_pipe: Connection) -> None:
        """In a rank: run the test method; a skip or an exception is sent to the test's
        process through ``parent_pipe`` and ends the rank with its exit code."""
        if _STACK_SIGNAL is not None:
            faulthandler.register(_STACK_SIGNAL, all_threads=True)
        try:
            self.prepare_subprocess()
            getattr(self, test_name)()
            # leave the group while the interpreter is whole (not while it shuts down)
            shutdown_dist()
        except unittest.SkipTest as skip:
            shutdown_dist(wait_for_others=False)
            parent_pipe.send(str(skip))
            sys.exit(TEST_SKIPS["generic"].exit_code)
        except Exception:
            parent_pipe.send(traceback.format_exc())
            sys.exit(self.TEST_ERROR_EXIT_CODE)
        finally:
            parent_pipe.close()

    def _join_processes(self, fn: Callable[[], None]) -> None:
        """In the test's process: wait until every rank has ended, one has failed or the
        timeout has passed; stop the ranks still running and judge the exit codes."""
        deadline = time.monotonic() + self.timeout
        while True:
            running = [process for process in self.processes if process.exitcode is None]
            failed = any(p.exitcode == self.TEST_ERROR_EXIT_CODE for p in self.processes)
            if failed or not running or time.monotonic() > deadline:
                break
            wait([process.sentinel for process in running], timeout=1.0)
        hung = [] if failed else [self.processes.index(process) for process in running]
        if hung and _STACK_SIGNAL is not None:
            for rank in hung:
                os.kill(self.processes[rank].pid, _STACK_SIGNAL)
            time.sleep(1.0)  # time to print the stacks
        self._stop_processes()
        self._judge(fn, hung)

    def _judge(self, fn: Callable[[], None], hung: list[int]) -> None:
        errors = [
            f"Process {rank} failed:\n{self._report_of(rank)}"
            for rank, process in enumerate(self.processes)
            if process.exitcode == self.TEST_ERROR_EXIT_CODE
        ]
        if errors:
            raise RuntimeError("\n".join(errors))
        if hung:
            raise RuntimeError(
                f"Processes {hung} did not finish within timeout={self.timeout} s and were "
                f"stopped; their Python stacks are printed in their stderr"
            )
        if fn in self.skip_return_code_checks:
            return
        for rank, process in enumerate(self.processes):
            if process.exitcode in _SKIP_MESSAGES:
                reason = self._report_of(rank) or _SKIP_MESSAGES[process.exitcode]
                raise unittest.SkipTest(reason)
        for rank, process in enumerate(self.processes):
            if process.exitcode < 0:
                self.fail(f"Process {rank} was killed by {signal.Signals(-process.exitcode).name}")
            if process.exitcode != 0:
                self.fail(f"Process {rank} exited with code {process.exitcode}")

    def _report_of(self, rank: int) -> str:
        """What rank ``rank`` sent before it ended (its traceback or skip reason), or ''."""
        pipe = self.pid_to_pipe[self.processes[rank].pid]
        try:
            return pipe.recv() if pipe.poll() else ""
        except (EOFError, OSError):
            return ""

    def _stop_processes(self) -> None:
        """Terminate the ranks still running, then kill those that outlive SIGTERM (a Runner's
        PreemptionHook only notes it)."""
        for process in self.processes:
            if process.exitcode is None:
                process.terminate()
        for process in self.processes:
            process.join(timeout=5)
            if process.exitcode is None:
                process.kill()
                process.join()
