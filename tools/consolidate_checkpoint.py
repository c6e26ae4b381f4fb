"""Turn a sharded checkpoint (a folder written by every rank) into one checkpoint file.

python tools/consolidate_checkpoint.py work_dirs/llm/iter_1000 work_dirs/llm/iter_1000.pth

The file holds whole tensors in the usual layout (``state_dict``, ``optimizer`` keyed by
parameter name, ``meta``, ...), so it loads in one process (``load_from``, tools/test.py)
or under another number of GPUs. It runs in one process on the CPU, reading every rank's
shards; it needs memory for the whole model and optimizer state.
"""

from __future__ import annotations

import argparse
import sys

from runnerx.parallel import consolidate_checkpoint


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Consolidate a sharded checkpoint into one file")
    parser.add_argument("sharded_dir", help="the sharded checkpoint folder")
    parser.add_argument("out_file", help="the checkpoint file to write")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Write the consolidated checkpoint and say what it holds."""
    args = parse_args(argv)
    checkpoint = consolidate_checkpoint(args.sharded_dir, args.out_file)
    tensors = len(checkpoint.get("state_dict", {}))
    print(f"wrote {args.out_file}: {tensors} model tensors; entries: {', '.join(checkpoint)}")


if __name__ == "__main__":
    sys.exit(main())
