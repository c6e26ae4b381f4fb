"""MMEngine's ``mmengine.fileio.io`` path: the file functions (``get``, ``put``, ``exists``,
``load``, ``dump``, ...), which runnerx keeps in :mod:`runnerx.fileio.paths` and
:mod:`runnerx.fileio.load_dump`.

.. code-block:: python

    from runnerx.fileio.io import exists, get_text, load
"""

from .load_dump import dump, load
from .paths import (
    copyfile,
    copytree,
    exists,
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
    "copyfile",
    "copytree",
    "dump",
    "exists",
    "get",
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
