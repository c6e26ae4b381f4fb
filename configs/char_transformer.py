# Example 2: a small character-level Transformer language model on the Python standard
# library's source text, reporting validation loss and perplexity. Later examples use it for
# bf16, torch.compile, FSDP and activation checkpointing.
_base_ = [
    '_base_/models/char_transformer.py',
    '_base_/datasets/stdlib_text.py',
    '_base_/schedules/adamw_cosine_2k.py',
    '_base_/default_runtime.py',
]
default_hooks = dict(
    logger=dict(interval=50),
    checkpoint=dict(by_epoch=False, interval=500),
)
log_processor = dict(by_epoch=False)
