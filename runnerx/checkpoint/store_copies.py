"""The copies of a run's checkpoints in a storage backend, for ``CheckpointHook`` with an
``out_dir`` such as ``s3://bucket/exp``.

A checkpoint is still written to the work dir first, atomically, and named in
``last_checkpoint`` (so a crash leaves no torn file and ``resume='auto'`` reads a local copy);
only once it is complete there is it copied to the store, and the store's copy of a checkpoint
is removed when the local one is.
"""

from __future__ import annotations

import os
from typing import Any

from runnerx.fileio import BaseStorageBackend
from runnerx.fileio.store_copies import has_method, store_path, upload

__all__ = ["CheckpointCopies"]


class CheckpointCopies:
    """The copies of a run's checkpoints in ``folder`` of a storage backend: ``upload`` one
    once it is complete in the work dir, ``remove`` the copy of one the hook removes."""

    def __init__(self, backend: BaseStorageBackend, folder: str) -> None:
        self.backend = backend
        self.folder = folder

    def upload(self, local_path: str, logger: Any) -> str:
        """Copy the checkpoint ``local_path`` into the folder (under its file name), log it
        and return where it went. A failure is logged at once (it runs on the writer thread,
        whose errors reach the run only when it waits for its writes) and raised."""
        name = os.path.basename(os.path.normpath(local_path))
        target = store_path(self.backend, self.folder, name)
        try:
            if os.path.isdir(local_path):  # a folder copy does not replace an older one
                self.remove(name, logger=None)
            upload(self.backend, local_path, target)
        except Exception as error:
            logger.error(
                f"Uploading the checkpoint {local_path} to {target} failed "
                f"({type(error).__name__}: {error}); the local checkpoint is complete and kept."
            )
            raise
        logger.info(f"The checkpoint {local_path} is uploaded to {target}.")
        return target

    def remove(self, name: str, logger: Any) -> None:
        """Remove the copy of the checkpoint file (or folder) ``name``, if there is one."""
        target = store_path(self.backend, self.folder, name)
        if self.backend.isfile(target):
            self.backend.remove(target)
        elif has_method(self.backend, "isdir") and self.backend.isdir(target):
            self.backend.rmtree(target)
        else:
            return
        if logger is not None:
            logger.info(f"Removed its copy {target} too.")
