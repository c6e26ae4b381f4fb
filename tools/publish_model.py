"""Publish a checkpoint: keep the weights and a small meta, add the sha256 to the file name.

python tools/publish_model.py work_dirs/digits_convnet/epoch_8.pth digits_convnet.pth
# -> digits_convnet-1a2b3c4d.pth (printed); optimizer, schedulers, message hub, EMA training
#    weights and RNG states are left out; tensors keep their dtype

Only ``state_dict`` and ``meta`` (epoch, iter, experiment name, time, dataset meta, versions)
stay, as in OpenMMLab's publish_model (``--save-keys`` names other top-level entries to keep,
as OpenMMLab's does; ``meta`` stays small); the name gets the first 8 hex digits of the sha256
of the written file. OpenMMLab projects keep this script as
tools/model_converters/publish_model.py.
"""

from __future__ import annotations

import argparse
import sys

import torch

from runnerx.checkpoint import load_checkpoint
from runnerx.checkpoint.io import DamagedCheckpointError, verify_checkpoint
from runnerx.checkpoint.publish import PUBLISHED_KEYS, strip_training_state, write_published
from runnerx.checkpoint.safe_load import UnsafeCheckpointError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Publish a checkpoint for inference")
    parser.add_argument("in_file", help="the training checkpoint")
    parser.add_argument("out_file", help="the published file; its sha256 is added to the name")
    parser.add_argument(
        "--save-keys",
        nargs="+",
        default=list(PUBLISHED_KEYS),
        metavar="KEY",
        help="the top-level entries of the checkpoint to keep (default: %(default)s); 'meta' "
        "is cut to where the checkpoint came from (epoch, iter, experiment name, time, "
        "dataset meta, versions)",
    )
    parser.add_argument(
        "--unsafe-load",
        action="store_true",
        help="read a trusted checkpoint that holds other pickled objects (can run code)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> str:
    """Write the published checkpoint, print its path and return it. An IN that is missing,
    corrupted (its CRC-32s do not match) or holds objects a safe load refuses ends the process
    with one line (exit code 1)."""
    args = parse_args(argv)
    try:
        verify_checkpoint(args.in_file, "publish an intact copy or another checkpoint")
        checkpoint = load_checkpoint(args.in_file, unsafe_load=args.unsafe_load)
    except (FileNotFoundError, UnsafeCheckpointError, DamagedCheckpointError) as error:
        raise SystemExit(f"tools/publish_model.py: {error}") from None
    if checkpoint and all(isinstance(value, torch.Tensor) for value in checkpoint.values()):
        checkpoint = {"state_dict": checkpoint}  # a model's bare state_dict
    if "state_dict" not in checkpoint:
        raise SystemExit(
            f"{args.in_file} has no 'state_dict' (its entries: "
            f"{', '.join(map(str, checkpoint)) or 'none'}): there are no weights to publish"
        )
    published = strip_training_state(checkpoint, keys=args.save_keys)
    dropped = sorted(str(key) for key in checkpoint if key not in published)
    if dropped:
        print(f"left out: {', '.join(dropped)}", file=sys.stderr)
    absent = [key for key in args.save_keys if key not in checkpoint]
    if absent:
        print(f"--save-keys: {args.in_file} has no {', '.join(absent)}", file=sys.stderr)
    final_path = write_published(published, args.out_file)
    print(final_path)
    return final_path


if __name__ == "__main__":
    main()
