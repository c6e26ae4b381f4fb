"""Benchmark: OptimWrapper.update_params against a plain PyTorch loop, per training step.

    python tools/benchmark_optim.py [--pairs 30] [--steps 20] [--threads 0]

A small CNN (1x28x28 inputs, batch 32, SGD with momentum) trains on CPU in two ways from the
same initial weights and on the same batches:

    plain:    loss.backward(); optimizer.step(); optimizer.zero_grad(set_to_none=True)
    runnerx:  optim_wrapper.update_params(loss)

(and mmengine's OptimWrapper too, where mmengine is installed). First both must reach the
same weights; then they are timed in interleaved pairs (the order alternates), and the
median of the per-pair time ratios gives the overhead in percent. The goal is <= 2 %.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn


def small_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 10),
    )


def make_batches(steps: int, batch_size: int = 32) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    return [
        (
            torch.randn(batch_size, 1, 28, 28, generator=generator),
            torch.randint(0, 10, (batch_size,), generator=generator),
        )
        for _ in range(steps)
    ]


def plain_trainer(model: nn.Module):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train(batches):
        for inputs, labels in batches:
            loss = nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    return train


def wrapper_trainer(model: nn.Module, wrapper_class: type):
    optim_wrapper = wrapper_class(torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9))

    def train(batches):
        for inputs, labels in batches:
            optim_wrapper.update_params(nn.functional.cross_entropy(model(inputs), labels))

    return train


def trainers() -> dict[str, tuple[nn.Module, object]]:
    """Each way of training, on its own copy of the same initial model."""
    from runnerx.optim import OptimWrapper

    torch.manual_seed(0)
    initial = small_cnn().state_dict()
    wrappers = {"runnerx OptimWrapper": OptimWrapper}
    try:
        from mmengine.optim import OptimWrapper as MMOptimWrapper

        wrappers["mmengine OptimWrapper"] = MMOptimWrapper
    except ImportError:
        pass
    found = {}
    for name in ["plain loop", *wrappers]:
        model = small_cnn()
        model.load_state_dict(initial)
        trainer = plain_trainer(model) if name == "plain loop" else None
        found[name] = (model, trainer or wrapper_trainer(model, wrappers[name]))
    return found


def check_same_weights(found: dict, batches) -> None:
    for _, train in found.values():
        train(batches)
    reference = list(found["plain loop"][0].parameters())
    for name, (model, _) in found.items():
        for got, expected in zip(model.parameters(), reference, strict=True):
            torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-7, msg=name)


def timed(train, batches) -> float:
    start = time.perf_counter()
    train(batches)
    return (time.perf_counter() - start) / len(batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=30, help="interleaved timing rounds")
    parser.add_argument("--steps", type=int, default=20, help="training steps per timing")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    found = trainers()
    batches = make_batches(args.steps)
    check_same_weights(found, batches)  # also the warm-up
    print(f"same weights after {args.steps} steps: yes ({', '.join(found)})")

    names = list(found)
    times = {name: [] for name in names}
    for pair in range(args.pairs):
        order = names if pair % 2 == 0 else names[::-1]
        for name in order:
            times[name].append(timed(found[name][1], batches))
    plain = times["plain loop"]
    print(
        f"\nsmall CNN, 1x28x28, batch 32, SGD momentum, CPU, {torch.get_num_threads()} threads, "
        f"torch {torch.__version__}; {args.pairs} interleaved rounds of {args.steps} steps"
    )
    print(f"{'':<24}{'median ms/step':>16}{'overhead vs plain':>20}")
    for name in names:
        ratios = [mine / base for mine, base in zip(times[name], plain)]
        overhead = (statistics.median(ratios) - 1) * 100
        shown = "-" if name == "plain loop" else f"{overhead:+.2f} %"
        print(f"{name:<24}{statistics.median(times[name]) * 1e3:>16.3f}{shown:>20}")
    print("\ngoal: runnerx OptimWrapper overhead <= 2 % (median of paired ratios)")


if __name__ == "__main__":
    main()
