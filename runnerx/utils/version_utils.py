"""``digit_version`` (version strings that compare as tuples) and ``get_git_hash``.

.. code-block:: python

    if digit_version(torch.__version__) >= digit_version('2.4.0'):
        ...
"""

from __future__ import annotations

import os

from runnerx.utils.errors import ValueAssertionError

__all__ = ["digit_version", "get_git_hash"]

# where a pre-release sorts below its release: 2.1.0a1 < 2.1.0b1 < 2.1.0rc1 < 2.1.0
_PRE_RELEASE_RANKS = {"a": -3, "b": -2, "rc": -1}


def digit_version(version_str: str, length: int = 4) -> tuple[int, ...]:
    """``version_str`` as a tuple of ints that compares like the versions do.

    The release is cut or zero-padded to ``length`` numbers, then two numbers say what kind
    of release it is: ``(-3|-2|-1, n)`` for alpha, beta and rc ``n``, ``(-4, 0)`` for a dev
    release, ``(1, n)`` for post-release ``n`` and ``(0, 0)`` for a final release.
    ``digit_version('2.1.0rc1')`` is ``(2, 1, 0, 0, -1, 1)``.
    """
    from packaging.version import Version  # imported on use: it costs start-up time

    if "parrots" in version_str:
        raise ValueAssertionError(
            f"digit_version: {version_str!r} is a parrots version, not supported"
        )
    version = Version(version_str)
    release = list(version.release[:length])
    release += [0] * (length - len(release))
    if version.is_prerelease:
        if version.pre is None:  # a dev release
            release += [-4, 0]
        else:  # packaging spells every pre-release a, b or rc
            release += [_PRE_RELEASE_RANKS[version.pre[0]], version.pre[1]]
    elif version.is_postrelease:
        release += [1, version.post]
    else:
        release += [0, 0]
    return tuple(release)


def get_git_hash(fallback: str = "unknown", digits: int | None = None) -> str:
    """The commit hash of the git repository holding the current folder (its first
    ``digits`` characters when given), or ``fallback`` when there is none.

    MMEngine returns ``''`` outside a repository, where git runs but fails, and ``fallback``
    only where git is missing; that is a bug: here both give ``fallback``.
    """
    import subprocess  # imported on use: it costs start-up time

    if digits is not None and not isinstance(digits, int):
        raise TypeError(f"get_git_hash: digits must be None or an int, got {digits!r}")
    # a minimal, English environment, so that nothing in the user's shell changes the output
    env = {key: os.environ[key] for key in ("SYSTEMROOT", "PATH", "HOME") if key in os.environ}
    env.update(LANGUAGE="C", LANG="C", LC_ALL="C")
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, env=env, check=False
        )
    except OSError:
        return fallback
    sha = result.stdout.strip().decode("ascii")
    if result.returncode or not sha:
        return fallback
    return sha if digits is None else sha[:digits]
