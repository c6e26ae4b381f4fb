"""``load_url``: a checkpoint downloaded once into torch's hub cache, then loaded safely."""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from typing import Any


def load_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool | None = None,
    unsafe_load: bool = False,
    timeout: float | None = None,
) -> Any:
    """The object saved at ``url``, downloaded into ``model_dir`` (default
    ``<torch hub dir>/checkpoints``) under ``file_name`` (default: the URL's file name)
    unless it is there already.

    ``check_hash`` checks the download against the hash prefix in its name
    (``name-<sha256 prefix>.pth``). Loading runs no pickled code (``weights_only``, see
    :func:`runnerx.checkpoint.load_checkpoint`); ``unsafe_load=True`` is for files you trust.
    MMEngine's (and torch's) ``weights_only`` is taken too: True is the default here, and
    ``weights_only=False`` asks, as explicitly, for the unsafe load. The download is logged
    (``progress`` is accepted for MMEngine's calls; no bar is drawn); a server that does not
    answer for ``timeout`` seconds (default
    :data:`runnerx.fileio.backends.http_backend.URL_TIMEOUT_S`) fails it, where torch's
    download would wait for ever.

    .. code-block:: python

        state = load_url('https://download.pytorch.org/models/resnet18-f37072fd.pth')
    """
    import torch.hub

    from runnerx.checkpoint.io import load_checkpoint

    if weights_only is not None:
        if weights_only and unsafe_load:
            raise ValueError(
                "load_url: weights_only=True and unsafe_load=True contradict each other; "
                "give one of them (unsafe_load=True, or weights_only=False, runs the file's "
                "pickled code: for files you trust)"
            )
        unsafe_load = not weights_only
    if model_dir is None:
        model_dir = os.path.join(torch.hub.get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    file_name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, file_name)
    if not os.path.exists(cached):
        hash_prefix = None
        if check_hash:
            match = torch.hub.HASH_REGEX.search(file_name)
            hash_prefix = match.group(1) if match else None
        _download(url, cached, hash_prefix, timeout)
    return load_checkpoint(cached, map_location, unsafe_load=unsafe_load)


def _download(url: str, path: str, hash_prefix: str | None, timeout: float | None) -> None:
    """Write the body of ``url`` to ``path`` through a partial file renamed at the end (an
    interrupted or failed download leaves nothing in the cache), checking that its sha256
    starts with ``hash_prefix``; a server silent for ``timeout`` seconds is a TimeoutError."""
    from runnerx.fileio.backends.http_backend import open_url
    from runnerx.logging.logger import print_log

    digest = hashlib.sha256() if hash_prefix else None
    partial = f"{path}.{os.getpid()}.partial"
    try:
        with open_url(url, timeout) as response, open(partial, "wb") as file:
            size = response.headers.get("Content-Length")
            known = f" ({int(size) / 1e6:.1f} MB)" if size and size.isdigit() else ""
            print_log(f"downloading {url}{known} to {path}", "current")
            while chunk := response.read(1 << 20):
                file.write(chunk)
                if digest is not None:
                    digest.update(chunk)
        if digest is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(
                f"the download of {url} does not match the hash in its name: sha256 "
                f"{digest.hexdigest()[: len(hash_prefix)]}..., expected {hash_prefix}..."
            )
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
