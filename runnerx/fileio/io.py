"""MMEngine's ``mmengine.fileio.io`` path: the file functions (``get``, ``put``, ``exists``,
``load``, ``dump``, ...) and ``get_file_backend``, which runnerx keeps in
:mod:`runnerx.fileio.paths`, :mod:`runnerx.fileio.load_dump` and
:mod:`runnerx.fileio.backends`.

.. code-block:: python

    from runnerx.fileio.io import exists, get_file_backend, get_text, load
"""

from .backends.registry_utils import get_file_backend
from .load_dump import dump, load
from .paths import (
    copy_if_symlink_fails,
    copyfile,
    copyfile_from_local,
    copyfile_to_local,
    copytree,
    copytree_from_local,
    copytree_to_local,
    exists,
    generate_presigned_url,
    get,
    get_local_path,
    get_text,
    isdir,
    isfile,
    join_path,
    list_dir_or_file,
    put,
    put_text,
    remove,
    rmtree,
)

__all__ = [
    "copy_if_symlink_fails",
    "copyfile",
    "copyfile_from_local",
    "copyfile_to_local",
    "copytree",
    "copytree_from_local",
    "copytree_to_local",
    "dump",
    "exists",
    "generate_presigned_url",
    "get",
    "get_file_backend",
    "get_local_path",
    "get_text",
    "isdir",
    "isfile",
    "join_path",
    "list_dir_or_file",
    "load",
    "put",
    "put_text",
    "remove",
    "rmtree",
]
