"""Publish a checkpoint: keep the weights and a small meta, add the sha256 to the file name.

python tools/publish_model.py work_dirs/digits_convnet/epoch_8.pth digits_convnet.pth
# -> digits_convnet-1a2b3c4d.pth (printed); optimizer, schedulers, message hub, EMA training
#    weights and RNG states are left out; tensors keep their dtype

Only ``state_dict`` and ``meta`` (epoch, iter, experiment name, time, dataset meta, versions)
stay, as in OpenMMLab's publish_model; the name gets the first 8 hex digits of the sha256 of
the written file.
"""

from __future__ import annotations

import argparse
import sys

import torch

from runnerx.checkpoint import load_checkpoint
from runnerx.checkpoint.publish import strip_training_state, write_published


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Publish a checkpoint for inference")
    parser.add_argument("in_file", help="the training checkpoint")
    parser.add_argument("out_file", help="the published file; its sha256 is added to the name")
    parser.add_argument(
        "--unsafe-load",
        action="store_true",
        help="read a trusted checkpoint that holds other pickled objects (can run code)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> str:
    """Write the published checkpoint, print its path and return it."""
    args = parse_args(argv)
    checkpoint = load_checkpoint(args.in_file, unsafe_load=args.unsafe_load)
    if checkpoint and all(isinstance(value, torch.Tensor) for value in checkpoint.values()):
        checkpoint = {"state_dict": checkpoint}  # a model's bare state_dict
    if "state_dict" not in checkpoint:
        raise SystemExit(
            f"{args.in_file} has no 'state_dict' (its entries: "
            f"{', '.join(map(str, checkpoint)) or 'none'}): there are no weights to publish"
        )
    published = strip_training_state(checkpoint)
    dropped = sorted(str(key) for key in checkpoint if key not in published)
    if dropped:
        print(f"left out: {', '.join(dropped)}", file=sys.stderr)
    final_path = write_published(published, args.out_file)
    print(final_path)
    return final_path


if __name__ == "__main__":
    main()
