"""Where a training loop stands in its data, what a checkpoint keeps of it, and how a resumed
loop continues there: the data side of :class:`~runnerx.runner.loops.EpochBasedTrainLoop`
and :class:`~runnerx.runner.loops.IterBasedTrainLoop`.

A pass over the data is read with :meth:`TrainDataPosition._batches`, which skips the batches
a resume says were trained: a runnerx sampler starts after them (``set_consumed``), any other
is read past them. A sampler that draws its order from a generator (torch's ``RandomSampler``
of ``DataLoader(dataset, shuffle=True)``, which the Runner gives one) has the generators'
states noted when the pass starts; the checkpoint keeps them, and a resumed run puts them back
before it reads that pass again, so it reads the same order.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from runnerx.data.build import length_of
from runnerx.data.samplers import InfiniteSampler
from runnerx.data.samplers.generators import (
    generator_states,
    has_fixed_order,
    order_generators,
    ordering_sampler,
    set_generator_states,
)
from runnerx.data.samplers.position import batches_to_skip, data_position
from runnerx.dist import all_gather_object

from .batch_limits import FirstBatches
from .environment import capture_rng_state, restore_rng_state

__all__ = ["TrainDataPosition"]


class TrainDataPosition:
    """The training loops' data position: the batches of the current pass trained, saved in
    checkpoints (:meth:`data_position`) and continued from (:meth:`resume_data_position`).
    Uses the loop's ``dataloader``, ``runner``, ``unit``, ``_iter``, ``_pass_start_iter`` (the
    iteration at which the current pass began) and ``_resume_batches``."""

    #: the pass (sampler epoch) and the states of its order's generators when it began
    _pass_generators: tuple[int, list] | None = None
    #: generator states a resume puts back before the next pass is read
    _resume_generators: list | None = None

    @property
    def pass_batches_done(self) -> int:
        """The batches of the current pass over the data trained so far (0 between epochs)."""
        return self._iter - self._pass_start_iter

    @property
    def resume_batches(self) -> int:
        """The batches of the current pass that a resume skips (0 unless resumed mid-pass)."""
        return self._resume_batches

    def data_position(self, iters_done: int) -> dict:
        """Where the training data stands after ``iters_done`` iterations: the pass, batches,
        samples, seed, batch and world size, dataset length (see :func:`data_position`), and
        for a sampler that draws from generators every rank's ``generator_states``: those to
        read this pass from its start (``pass_start``) and those of now, with which a later
        pass starts (``now``). Every rank calls it (it gathers them)."""
        batches = iters_done - self._pass_start_iter
        position = data_position(self.dataloader, self._sampler(), self._data_pass(), batches)
        generators = order_generators(self.dataloader)
        if generators:
            now = generator_states(generators)
            noted_pass, at_start = self._pass_generators or (None, now)
            begun = batches and noted_pass == self._data_pass()  # else it starts from now
            states = {"pass_start": at_start if begun else now, "now": now}
            position["generator_states"] = all_gather_object(states)
        return position

    def resume_data_position(self, position: dict) -> None:
        """Continue the current pass after the batches ``position`` says were consumed (a
        position from an earlier epoch, i.e. saved once that epoch had ended, means none;
        after a change of batch size, world size or dataset, what
        :func:`~runnerx.data.samplers.position.batches_to_skip` says, with a warning), with
        the sampler's seed of the checkpoint (a run whose seed was drawn at random draws
        another, and would otherwise see its data in another order) and its generators'
        states (see :meth:`_resume_order`)."""
        sampler, self._resume_batches = self._sampler(), 0
        in_pass = position.get("epoch") == self._data_pass()
        where = f"{'epoch' if self.unit == 'epoch' else 'pass'} {self._data_pass() + 1}"
        if in_pass:
            self._resume_batches, note = batches_to_skip(position, self.dataloader, sampler, where)
            if note:
                self.runner.logger.warning(note)
        if "seed" in position and isinstance(getattr(sampler, "seed", None), int):
            sampler.seed = int(position["seed"])
        self._resume_order(position.get("generator_states"), in_pass, where)

    def resume_without_position(self, seed: int | None = None) -> str | None:
        """Continue from a checkpoint that holds no data position (MMEngine's, or a
        weights-only one) where MMEngine's loops continue, and return what to log of it, if
        anything. An iteration-based loop continues the data stream after the saved
        iterations' batches (MMEngine's IterBasedTrainLoop reads them again to skip them): a
        finite sampler's passes are ``len(dataloader)`` batches, each in the order of its
        sampler epoch; an InfiniteSampler's one stream never ends a pass. An epoch-based loop
        starts the saved epoch at its first batch, as MMEngine's does (a checkpoint saved
        mid-epoch has that epoch's first batches trained again). ``seed``: the sampler's seed
        of the checkpoint's run (MMEngine gives its samplers the run's seed)."""
        sampler, length = self._sampler(), length_of(self.dataloader)
        data_pass, batches = self._epoch, 0
        if self.unit == "iteration":
            endless = isinstance(sampler, InfiniteSampler) or not length
            data_pass, batches = (0, self._iter) if endless else divmod(self._iter, length)
        position = data_position(self.dataloader, sampler, data_pass, batches)
        if seed is not None:
            position["seed"] = seed
        self.resume_data_position(position)
        if self.unit == "iteration":
            if not self._iter:
                return None
            where = "" if not data_pass else f" (batch {batches + 1} of pass {data_pass + 1})"
            how = "starts there" if hasattr(sampler, "set_consumed") else "reads past them too"
            return (
                f"the training data stream continues after its first {self._iter} batches"
                f"{where}, where MMEngine's IterBasedTrainLoop continues (it reads them again to "
                f"skip them: 'Advance dataloader {self._iter} steps'); the sampler {how}"
            )
        again = self._iter - self._epoch * (length or 0)
        if not length or not 0 < again < length:
            return None
        return (
            f"epoch {self._epoch + 1} starts at its first batch, as in MMEngine: the {again} "
            "batches of it trained before the checkpoint was saved are trained again"
        )

    def _resume_order(self, saved: list | None, in_pass: bool, where: str) -> None:
        """Have the next pass put back the generator states ``saved`` (this rank's): those at
        the start of the pass being resumed when ``in_pass``, else those of the save. Without
        them, a pass resumed mid-way in an order that depends on the random state reads
        another order than the interrupted run did: that is warned of."""
        generators = order_generators(self.dataloader)
        runner = self.runner
        if generators and saved:
            mine = saved[runner.rank] if len(saved) == runner.world_size else saved[0]
            states = mine["pass_start" if in_pass else "now"]
            if len(states) == len(generators):
                self._resume_generators = states
                return
        if not self._resume_batches or has_fixed_order(self.dataloader):
            return
        if generators:
            why = "the checkpoint holds no state of the random generator it shuffles with"
        else:
            sampler = type(ordering_sampler(self.dataloader)).__name__
            why = f"{sampler} is a sampler whose order runnerx cannot put back"
        runner.logger.warning(
            f"resume: train_dataloader's sampler: {why}, so the rest of {where} reads a new "
            f"order after skipping its first {self._resume_batches} batches (some samples are "
            "read twice in it, others not at all); for an exact resume use a dataloader dict "
            "with sampler=dict(type='DefaultSampler', shuffle=True)"
        )

    def _sampler(self) -> Any:
        return getattr(getattr(self.dataloader, "batch_sampler", None), "sampler", None)

    def _data_pass(self) -> int:
        """The number of the current pass over the data (the sampler's epoch): the epoch."""
        return self._epoch

    def _batches(self) -> Any:
        """(index, batch) pairs of one pass over the data, after any batches a resume skips."""
        skip, self._resume_batches = self._resume_batches, 0
        self._pass_start_iter = self._iter - skip
        generators = order_generators(self.dataloader)
        if generators:
            states, self._resume_generators = self._resume_generators, None
            if states is not None:
                set_generator_states(generators, states)
            self._pass_generators = (self._data_pass(), generator_states(generators))
        if not skip:
            return enumerate(self.dataloader)
        sampler = self._sampler()
        batch_size = self.dataloader.batch_size
        if batch_size and hasattr(sampler, "set_consumed"):
            sampler.set_consumed(skip * batch_size)  # the sampler starts at the next unseen one
            rest = self.dataloader
            if isinstance(rest, FirstBatches):  # a limited pass: what is left of the limit
                rest = islice(rest, len(rest) - skip)
            return enumerate(rest, skip)
        # No resumable sampler: read past the batches done. The random states the checkpoint
        # restored are those after them, which reading them (augmentations) must not move.
        random_state = capture_rng_state()
        batches = iter(self.dataloader)
        for _ in range(skip):
            next(batches)
        restore_rng_state(random_state)
        return enumerate(batches, skip)
