"""Benchmark: OptimWrapper.update_params against a plain PyTorch loop, per training step.

    python tools/benchmark_optim.py [--rounds 150] [--steps 5] [--threads 0]

A small CNN (1x28x28 inputs, batch 32, SGD with momentum) trains on CPU from the same initial
weights and on the same batches, as

    plain loop:  loss.backward(); optimizer.step(); optimizer.zero_grad(set_to_none=True)
    runnerx:     optim_wrapper.update_params(loss)

(and with mmengine's OptimWrapper, where mmengine is installed). First all must reach the
same weights; then they are timed in interleaved rounds (each in each position equally
often), and the median of the per-round time ratios gives the overhead in percent; the goal
is <= 2 %. A second table times a tiny model (a 4 -> 2 linear layer, batch 1), where the
framework's own Python work is most of the step, to show that work in microseconds.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable

import torch
from benchmarks.runner_loops import make_net
from torch import nn

Batches = list[tuple[torch.Tensor, torch.Tensor]]


def small_cnn() -> nn.Module:
    """The small CNN of the Runner benchmark (one definition for both)."""
    return make_net("cnn")


def make_batches(steps: int, input_shape: tuple[int, ...], classes: int) -> Batches:
    generator = torch.Generator().manual_seed(0)
    return [
        (
            torch.randn(*input_shape, generator=generator),
            torch.randint(0, classes, input_shape[:1], generator=generator),
        )
        for _ in range(steps)
    ]


def plain_trainer(model: nn.Module) -> Callable[[Batches], None]:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train(batches: Batches) -> None:
        for inputs, labels in batches:
            loss = nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    return train


def wrapper_trainer(model: nn.Module, wrapper_class: type) -> Callable[[Batches], None]:
    optim_wrapper = wrapper_class(torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9))

    def train(batches: Batches) -> None:
        for inputs, labels in batches:
            optim_wrapper.update_params(nn.functional.cross_entropy(model(inputs), labels))

    return train


def trainers(make_model: Callable[[], nn.Module]) -> dict[str, tuple[nn.Module, Callable]]:
    """Each way of training, on its own copy of the same initial model."""
    from runnerx.optim import OptimWrapper

    wrappers = {"runnerx OptimWrapper": OptimWrapper}
    try:
        from mmengine.optim import OptimWrapper as MMOptimWrapper

        wrappers["mmengine OptimWrapper"] = MMOptimWrapper
    except ImportError:
        pass
    torch.manual_seed(0)
    initial = make_model().state_dict()
    found = {}
    for name in ["plain loop", *wrappers]:
        model = make_model()
        model.load_state_dict(initial)
        train = plain_trainer(model) if name == "plain loop" else None
        found[name] = (model, train or wrapper_trainer(model, wrappers[name]))
    return found


def check_same_weights(found: dict, batches: Batches) -> None:
    for _, train in found.values():
        train(batches)
    reference = list(found["plain loop"][0].parameters())
    for name, (model, _) in found.items():
        for got, expected in zip(model.parameters(), reference, strict=True):
            torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-7, msg=name)


def timed(train: Callable[[Batches], None], batches: Batches) -> float:
    start = time.perf_counter()
    train(batches)
    return (time.perf_counter() - start) / len(batches)


def compare(title: str, found: dict, batches: Batches, rounds: int, unit: str) -> None:
    """Time every way in interleaved rounds and print medians and overheads."""
    names = list(found)
    times: dict[str, list[float]] = {name: [] for name in names}
    orders = list(itertools.permutations(names))
    for round_index in range(rounds):
        for name in orders[round_index % len(orders)]:
            times[name].append(timed(found[name][1], batches))
    scale = {"ms": 1e3, "us": 1e6}[unit]
    plain = times["plain loop"]
    print(f"\n{title}; {rounds} interleaved rounds of {len(batches)} steps")
    print(f"{'':<24}{f'median {unit}/step':>16}{'overhead vs plain':>20}")
    for name in names:
        ratios = [mine / base for mine, base in zip(times[name], plain)]
        shown = "-" if name == "plain loop" else f"{(statistics.median(ratios) - 1) * 100:+.2f} %"
        print(f"{name:<24}{statistics.median(times[name]) * scale:>16.3f}{shown:>20}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=150, help="interleaved timing rounds")
    parser.add_argument("--steps", type=int, default=5, help="CNN training steps per timing")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"CPU, {torch.get_num_threads()} threads, torch {torch.__version__}")

    cnn = trainers(small_cnn)
    check_same_weights(cnn, make_batches(20, (32, 1, 28, 28), 10))  # also the warm-up
    print(f"same weights after 20 steps: yes ({', '.join(cnn)})")
    cnn_batches = make_batches(args.steps, (32, 1, 28, 28), 10)
    compare("small CNN, 1x28x28, batch 32, SGD momentum", cnn, cnn_batches, args.rounds, "ms")

    tiny = trainers(lambda: nn.Linear(4, 2))
    tiny_batches = make_batches(100, (1, 4), 2)
    check_same_weights(tiny, tiny_batches)
    compare("tiny model, Linear(4, 2), batch 1", tiny, tiny_batches, args.rounds // 3, "us")
    print("\ngoal: runnerx OptimWrapper overhead on the small CNN <= 2 % (median of round ratios)")


if __name__ == "__main__":
    main()
