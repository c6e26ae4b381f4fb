"""The model error MMEngine reports as a RuntimeError (its ``assert``-checked arguments raise
:mod:`runnerx.utils.errors`' types)."""


class InitCfgOverrideError(ValueError, RuntimeError):
    """An ``init_cfg`` ``override`` names a child module that does not exist (MMEngine raises
    RuntimeError for it)."""
