# A small GPT-style character (byte-level) language model built from TransformerBlocks.
model = dict(
    type='CharTransformerLM',
    vocab_size=256,
    block_size=128,
    n_layer=4,
    n_head=4,
    n_embd=128,
    dropout=0.0,
    data_preprocessor=dict(type='BaseDataPreprocessor'),
)
