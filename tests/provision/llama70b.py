"""The Llama 3 70B model file of the NIC-cap tests, without its ``[params.npu]``: TP 8 x PP 4 x
DP 32 on 1,024 NPUs, selective recompute, ZeRO 1, FlashAttention."""

LLAMA70B_1024 = """\
generator = "llm"
[params.model]
name = "llama3-70b"
layers = 80
hidden_size = 8192
heads = 64
kv_heads = 8
ffn_size = 28672
gated_ffn = true
vocab_size = 128256
sequence_length = 8192
norm = "rmsnorm"
biases = false
dropout = false
position_embedding = "rotary"
tied_embeddings = false
[params.plan]
flash_attention = true
npus = 1024
tp = 8
pp = 4
dp = 32
sequence_parallel = true
zero_stage = 1
micro_batch_size = 1
global_batch_size = 512
recompute = "selective"
"""
"""A model file's ``[params.model]`` and ``[params.plan]``; a test appends its ``[params.npu]``."""
