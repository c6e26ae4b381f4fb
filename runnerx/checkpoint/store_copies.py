"""The copies of a run's checkpoints in a storage backend, for ``CheckpointHook`` with an
``out_dir`` such as ``s3://bucket/exp``.

A checkpoint is still written to the work dir first, atomically, and named in
``last_checkpoint`` (so a crash leaves no torn file and ``resume=True`` reads a local copy);
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
    once it is complete in the work dir, ``remove`` the copy of one the hook removes. While
    the newest upload has failed, the store keeps its older copies."""

    def __init__(self, backend: BaseStorageBackend, folder: str) -> None:
        self.backend = backend
        self.folder = folder
        self.upload_failed = False  # the newest upload failed

    def upload(self, local_path: str, logger: Any) -> str:
        """Copy the checkpoint ``local_path`` into the folder (under its file name), log it
        and return where it went. A failure is logged at once (it runs on the writer thread,
        whose errors reach the run only when it waits for its writes) and raised."""
        name = os.path.basename(os.path.normpath(local_path))
        target = store_path(self.backend, self.folder, name)
        try:
            if os.path.isdir(local_path):  # a folder copy does not replace an older one
                self._delete(target)
            upload(self.backend, local_path, target)
        except Exception as error:
            self.upload_failed = True
            logger.error(
                f"Uploading the checkpoint {local_path} to {target} failed "
                f"({type(error).__name__}: {error}); the local checkpoint is complete and "
                "kept, and so are the store's older copies."
            )
            raise
        self.upload_failed = False
        logger.info(f"The checkpoint {local_path} is uploaded to {target}.")
        return target

    def remove(self, name: str, logger: Any) -> None:
        """Remove the copy of the checkpoint file (or folder) ``name``, if there is one, unless
        the newest upload failed (then the store keeps it)."""
        target = store_path(self.backend, self.folder, name)
        if self.upload_failed:
            if self.backend.isfile(target):
                logger.warning(f"Kept its copy {target}: the newest checkpoint is not there.")
            return
        if self._delete(target):
            logger.info(f"Removed its copy {target} too.")

    def _delete(self, target: str) -> bool:
        """Delete the file or folder ``target`` of the store; False if there is none."""
        if self.backend.isfile(target):
            self.backend.remove(target)
        elif has_method(self.backend, "isdir") and self.backend.isdir(target):
            self.backend.rmtree(target)
        else:
            return False
        return True
