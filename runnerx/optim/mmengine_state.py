"""MMEngine's optimizer state dicts in runnerx's param groups.

With ``paramwise_cfg`` MMEngine gives every parameter a param group of its own; runnerx puts
parameters with equal settings in one group (fewer, larger ``foreach`` steps). A checkpoint
written by MMEngine therefore has more, one-parameter groups: :func:`regroup_mmengine_state`
gathers them into the optimizer's groups so that ``optimizer.load_state_dict`` takes it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

# param group entries that are no settings, or options that change how a step is computed
# but not its result
_NOT_COMPARED = frozenset({"params", "param_names", "foreach", "fused", "capturable"})


def regroup_mmengine_state(
    state_dict: dict, param_groups: list[dict], model: nn.Module | None = None
) -> dict:
    """An optimizer state dict with MMEngine's one-parameter param groups (what MMEngine
    saves with ``paramwise_cfg``) regrouped to fit ``param_groups``; any other as it is.

    MMEngine's groups follow ``named_parameters`` order, leaving out frozen parameters and,
    with ``bypass_duplicate``, repeated ones. With ``model`` (the plain model), saved group
    ``i`` is its ``i``-th such parameter, and a setting that differs from the group the
    parameter is in here is an error naming both. Without it, each saved group takes the next
    parameter of the first group here with its settings (each group's parameters keep
    ``named_parameters`` order). Scheduled settings are compared at their value before
    scheduling (``initial_lr``, ...); the regrouped groups keep the saved values.
    """
    saved = state_dict.get("param_groups", [])
    if len(saved) == len(param_groups) or any(len(group["params"]) != 1 for group in saved):
        return state_dict
    flat = [param for group in param_groups for param in group["params"]]
    if len(saved) != len(flat):
        raise ValueError(
            f"the optimizer state dict holds {len(saved)} parameters, one per param group "
            f"(MMEngine's layout with paramwise_cfg), but this optimizer has {len(flat)}: "
            "the checkpoint is of another model, or of other frozen (requires_grad=False) "
            "parameters"
        )
    if model is None:
        slots = _slots_by_settings(saved, param_groups, state_dict.get("state", {}))
    else:
        slots = _slots_by_name(saved, param_groups, flat, model)
    members: list[list[int]] = [[] for _ in param_groups]
    group_of = [index for index, group in enumerate(param_groups) for _ in group["params"]]
    for number, slot in enumerate(slots):
        members[group_of[slot]].append(number)
    starts, new_groups = _starts(param_groups), []
    for index, numbers in enumerate(members):
        first = saved[numbers[0]]
        for number in numbers[1:]:  # one group here: their scheduled values must agree too
            other = saved[number]
            key = next(
                (k for k in first if k != "params" and not _same(first[k], other.get(k))), ""
            )
            if key:
                raise ValueError(
                    f"the optimizer state dict's param groups {numbers[0]} and {number} "
                    f"belong to one param group here but hold different {key!r} "
                    f"({first[key]!r} and {other.get(key)!r})"
                )
        new_groups.append({**first, "params": list(range(starts[index], starts[index + 1]))})
    old_state = state_dict.get("state", {})
    state = {
        slot: old_state[group["params"][0]]
        for group, slot in zip(saved, slots)
        if group["params"][0] in old_state
    }
    return {**state_dict, "state": state, "param_groups": new_groups}


def _slots_by_name(saved: list[dict], groups: list[dict], flat: list, model: nn.Module) -> list:
    """Where each saved group's parameter is in ``flat``: MMEngine's order, from ``model``."""
    slot_of = {id(param): slot for slot, param in enumerate(flat)}
    group_of = {id(param): index for index, group in enumerate(groups) for param in group["params"]}
    named = [(name, param) for name, param in model.named_parameters() if id(param) in slot_of]
    if len(named) != len(flat):
        raise ValueError(
            "the optimizer holds parameters that are not the model's, so the MMEngine "
            "checkpoint's one-param-group-per-parameter state cannot be matched to them"
        )
    for number, (group, (name, param)) in enumerate(zip(saved, named)):
        differences = _differences(group, groups[group_of[id(param)]])
        if differences:
            raise ValueError(
                f"the optimizer state dict (MMEngine's layout, one param group per parameter) "
                f"does not fit this optimizer: parameter {name!r} (its param group {number}) has "
                f"{_settings(differences)} (param group {group_of[id(param)]}). Did "
                "optim_wrapper.paramwise_cfg or optimizer change since the checkpoint was written?"
            )
    return [slot_of[id(param)] for _, param in named]


def _slots_by_settings(saved: list[dict], groups: list[dict], state: dict) -> list[int]:
    """Where each saved group's parameter is among ``groups``' parameters (flattened), each
    taking the next free place of the first group with its settings."""
    starts = _starts(groups)
    filled = [0] * len(groups)
    slots = []
    for number, group in enumerate(saved):
        agreeing = [
            index for index, current in enumerate(groups) if not _differences(group, current)
        ]
        free = [index for index in agreeing if starts[index] + filled[index] < starts[index + 1]]
        if not free:
            raise ValueError(_no_group_message(number, group, groups, agreeing, state))
        slots.append(starts[free[0]] + filled[free[0]])
        filled[free[0]] += 1
    return slots


def _starts(groups: list[dict]) -> list[int]:
    """Where each group's parameters start among all of them, and (last) their number."""
    starts = [0]
    for group in groups:
        starts.append(starts[-1] + len(group["params"]))
    return starts


def _differences(saved: dict, current: dict) -> list[tuple[str, Any, Any]]:
    """The settings in which two param groups differ, as ``(key, saved, current)``; scheduled
    values are compared at the value they were scheduled from (``initial_<key>``)."""
    momentum_scheduled = "initial_momentum" in saved or "initial_momentum" in current
    found = []
    for key, value in current.items():
        if key in _NOT_COMPARED or key.startswith("initial_") or key not in saved:
            continue
        ours, theirs = current.get(f"initial_{key}", value), saved.get(f"initial_{key}", saved[key])
        if key == "betas" and momentum_scheduled:  # betas[0] is the scheduled momentum
            ours, theirs = ours[1:], theirs[1:]
        if not _same(theirs, ours):
            found.append((key, theirs, ours))
    return found


def _settings(differences: list[tuple[str, Any, Any]]) -> str:
    return ", ".join(
        f"{key}={saved!r} in the checkpoint but {ours!r} here" for key, saved, ours in differences
    )


def _distinct_settings(groups: list[dict], index: int) -> list[tuple[str, Any]]:
    """The settings of ``groups[index]`` in which some group differs from it."""
    keys = {key for other in groups for key, _, _ in _differences(other, groups[index])}
    group = groups[index]
    return [(key, group.get(f"initial_{key}", group[key])) for key in group if key in keys]


def _same(a: Any, b: Any) -> bool:
    """Equal settings; a one-element tensor (``capturable`` optimizers' lr) as its number."""
    a, b = (v.item() if isinstance(v, torch.Tensor) and v.numel() == 1 else v for v in (a, b))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        tensors = isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
        return tensors and a.shape == b.shape and torch.equal(a.cpu(), b.cpu())
    return a == b


def _no_group_message(
    number: int, group: dict, groups: list[dict], agreeing: list[int], state: dict
) -> str:
    """Why saved param group ``number`` (one parameter) has no place among ``groups``."""
    shapes = [
        tuple(value.shape)
        for value in state.get(group["params"][0], {}).values()
        if isinstance(value, torch.Tensor) and value.ndim
    ]
    what = f"the trainable parameter #{number} in named_parameters order" + (
        f" (shape {shapes[0]})" if shapes else ""
    )
    if agreeing:
        index = agreeing[0]
        shown = ", ".join(f"{key}={value!r}" for key, value in _distinct_settings(groups, index))
        problem = (
            f"more of its parameters have the settings of param group {index} ({shown}) than "
            f"the {len(groups[index]['params'])} that group holds here; the first one too many "
            f"is {what}"
        )
    else:
        closest = min(range(len(groups)), key=lambda index: len(_differences(group, groups[index])))
        problem = (
            f"{what} has {_settings(_differences(group, groups[closest]))} (the closest param "
            f"group, {closest})"
        )
    return (
        f"the optimizer state dict (MMEngine's layout, one param group per parameter) does not "
        f"fit this optimizer: {problem}. Did optim_wrapper.paramwise_cfg or optimizer change "
        "since the checkpoint was written?"
    )
