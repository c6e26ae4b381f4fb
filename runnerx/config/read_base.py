"""MMEngine's pure-Python config style: ``with read_base():`` blocks that import base configs.

.. code-block:: python

    from runnerx.config import read_base

    with read_base():
        from .._base_.models.resnet18 import *          # every variable of that file
        from .._base_.datasets.cifar import train_dataloader as train_loader
        from mypkg.configs.default_runtime import *      # a file inside an installed package
    from torch.optim import SGD

    model.backbone.depth = 50                # inherited dicts are ConfigDicts: edit in place
    optim_wrapper = dict(optimizer=dict(type=SGD, lr=0.1))

This module finds and checks those blocks and says which file each import names;
:mod:`runnerx.config.read_base_loader` reads the files.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import ConfigFileNotFoundError, ConfigParsingError
from .external import package_folders
from .source import assigns_base

_STYLES = (
    "the files of one inheritance chain must all inherit with `_base_ = [...]` or all with "
    "`with read_base():`, as in MMEngine"
)


@contextmanager
def read_base() -> Iterator[None]:
    """Marks the block of a config that imports its base configs (MMEngine's ``read_base``).

    The loader takes the block out before the file runs, so entering it does nothing."""
    yield


@dataclass(frozen=True)
class BaseImport:
    """One ``from <module> import ...`` statement of a ``with read_base():`` block."""

    module: str  # as written, dots included: '.._base_.models.resnet'
    names: tuple[tuple[str, str], ...] | None  # (name there, name here) pairs; None for `*`
    line: int


def find_base_imports(
    tree: ast.Module, path: str, lazy_import: bool | None = None, guess: bool = True
) -> list[BaseImport] | None:
    """The imports of the ``with read_base():`` blocks of a parsed config, taking the blocks
    out of ``tree``; None for a config that does not use the style (read the ``_base_`` way).

    ``lazy_import`` is ``Config.fromfile``'s: True reads any file in this style, False refuses a
    block (MMEngine then reads the file the ``_base_`` way, which fails on the block), None
    decides by the file. With ``guess``, None also reads a file without a block in this style
    when MMEngine would (:func:`imports_like_read_base`); the loader turns it off for a file
    named in a ``_base_`` list, which MMEngine would refuse instead.
    """
    blocks = _read_base_blocks(tree, path)
    if blocks and lazy_import is False:
        raise ConfigParsingError(
            f"{path}:{blocks[0].lineno}: `with read_base():` needs lazy_import=None (the "
            f"default) or True; lazy_import=False reads the file the `_base_` way, which cannot "
            f"import base configs"
        )
    if not blocks and lazy_import is None and guess:
        lazy_import = imports_like_read_base(tree)
    if not blocks and not lazy_import:
        return None
    for statement in tree.body:
        if assigns_base(statement):
            raise ConfigParsingError(
                f"{path}:{statement.lineno}: `_base_ = ...` in a config read in the "
                f"`with read_base():` style; {_STYLES}"
            )
    withs = [statement for statement in tree.body if isinstance(statement, ast.With)]
    if withs and withs[0] not in blocks:
        raise ConfigParsingError(
            f"{path}:{withs[0].lineno}: only `with read_base():` may be used as a context "
            f"manager before the base imports of a config (as in MMEngine); move this `with` "
            f"below the `with read_base():` block"
        )
    tree.body = [statement for statement in tree.body if statement not in blocks]
    return [_base_import(statement, path) for block in blocks for statement in block.body]


def imports_like_read_base(tree: ast.Module) -> bool:
    """Whether a config without a ``with read_base():`` block is still in that style, as
    MMEngine decides for ``lazy_import=None``: it has no ``_base_ = ...`` and imports something
    from outside the standard library (``from torch.optim import SGD``, ``import numpy``), or
    imports relatively. Such a file's imported names are then not config values."""
    if any(assigns_base(statement) for statement in tree.body):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                return True
            names = [alias.name for alias in node.names]
            if node.module in ("runnerx", "mmengine") and names == ["Config"]:
                continue
            if not _is_standard_module(node.module or ""):
                return True
        elif isinstance(node, ast.Import) and not all(
            _is_standard_module(alias.name) for alias in node.names
        ):
            return True
    return False


def _is_standard_module(module: str) -> bool:
    # read_base itself comes from runnerx.config (or mmengine.config), which MMEngine counts in
    if module.startswith(("runnerx.config", "mmengine.config")):
        return True
    top = module.partition(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names


def names_bound_by_imports(tree: ast.Module, path: str) -> set[str]:
    """The names a read_base-style config binds by imports outside its read_base blocks: they
    are not config values (MMEngine leaves them out of ``to_dict()``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            code = ast.unparse(node)
            star = any(alias.name == "*" for alias in node.names)
            if (node.level or star) and (old_block := _old_base_block(tree, node)):
                raise ConfigParsingError(
                    f"{path}:{old_block.lineno}: `if '_base_':` is the base-import block of "
                    "older OpenMMLab configs, which MMEngine refuses too; replace it with "
                    "`with read_base():` (and `from mmengine.config import read_base` above "
                    f"it); line {node.lineno}, `{code}`, imports a base config from it"
                )
            if node.level:
                raise ConfigParsingError(
                    f"{path}:{node.lineno}: `{code}` imports a base config outside "
                    f"`with read_base():`; move it into that block"
                )
            if star:
                raise ConfigParsingError(
                    f"{path}:{node.lineno}: `{code}` may only import a base config, inside "
                    f"`with read_base():`; import the names it needs one by one"
                )
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _old_base_block(tree: ast.Module, node: ast.stmt) -> ast.If | None:
    """The top-level ``if '_base_':`` statement (older mmdet configs' form of the block) whose
    body holds ``node``, if any."""
    for statement in tree.body:
        test = getattr(statement, "test", None)
        if (
            isinstance(statement, ast.If)
            and isinstance(test, ast.Constant)
            and test.value == "_base_"
            and node in statement.body
        ):
            return statement
    return None


def module_file(base: BaseImport, path: str) -> str:
    """The absolute path of the config file that ``base``, in the config at ``path``, imports:
    ``.x`` is ``x.py`` beside it, ``..a.b`` is ``../a/b.py``, ``pkg.configs.x`` is
    ``configs/x.py`` in the folder of the importable package ``pkg``."""
    where = f"{path}:{base.line}"
    dotted = base.module.lstrip(".")
    level = len(base.module) - len(dotted)
    parts = dotted.split(".")
    if level:
        up = [os.pardir] * (level - 1)
        candidates = [os.path.join(os.path.dirname(path), *up, *parts) + ".py"]
    elif len(parts) == 1:
        raise ConfigParsingError(
            f"{where}: `from {dotted} import ...` in `with read_base():` names a package, not "
            f"a config file; name the file, e.g. `from {dotted}.configs.default_runtime import *`"
        )
    else:
        roots = package_folders(parts[0], where, base.module)
        candidates = [os.path.join(root, *parts[1:]) + ".py" for root in roots]
    candidates = [os.path.abspath(candidate) for candidate in candidates]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise ConfigFileNotFoundError(
        f"{where}: base config `from {base.module} import ...` not found (looked for "
        f"{', '.join(candidates)})"
    )


def inherited_by_base_error(path: str, inherited_at: str) -> ConfigParsingError:
    """The error for a read_base-style file that a ``_base_`` list names."""
    return ConfigParsingError(
        f"{path} uses `with read_base():` but {inherited_at} inherits it through `_base_`; "
        f"{_STYLES}"
    )


def _read_base_blocks(tree: ast.Module, path: str) -> list[ast.With]:
    blocks = []
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and any(map(_calls_read_base, node.items)):
            if node not in tree.body:
                raise ConfigParsingError(
                    f"{path}:{node.lineno}: `with read_base():` must be a top-level statement "
                    f"of the config, not inside another statement"
                )
            if len(node.items) > 1:
                raise ConfigParsingError(
                    f"{path}:{node.lineno}: `with read_base():` cannot open other context "
                    f"managers in the same statement"
                )
            blocks.append(node)
    return sorted(blocks, key=lambda block: block.lineno)


def _calls_read_base(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    return name == "read_base"


def _base_import(statement: ast.stmt, path: str) -> BaseImport:
    where = f"{path}:{statement.lineno}"
    if not isinstance(statement, ast.ImportFrom):
        raise ConfigParsingError(
            f"{where}: only `from <config module> import ...` statements may be inside "
            f"`with read_base():`, not `{ast.unparse(statement).splitlines()[0]}`"
        )
    if statement.module is None:
        raise ConfigParsingError(
            f"{where}: `{ast.unparse(statement)}` names a folder, not a config file; inside "
            f"`with read_base():` write `from .<file name without .py> import ...`"
        )
    names = tuple((alias.name, alias.asname or alias.name) for alias in statement.names)
    module = "." * statement.level + statement.module
    return BaseImport(module, None if names == (("*", "*"),) else names, statement.lineno)
