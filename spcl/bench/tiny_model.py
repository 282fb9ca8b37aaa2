"""A tiny random-weight Llama chat model written to a local folder, for plumbing checks without a
model hub.

The tokenizer is a byte-level BPE trained on the extraction prompt (so Korean, Japanese and English
all encode), with ChatML special tokens and a chat template; the model is a ``LlamaForCausalLM``
with random weights (seeded). It prints noise, which is the point: the job must fail such output
closed. With ``mute=True`` the final norm is zeroed, so every logit is equal and greedy decoding
picks token 0, the end-of-text token: the model answers every document with an empty list (a
successful, empty extraction). The folder loads with ``transformers`` (CPU or GPU) and ``vllm``
(head size 64).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from spcl.extract.prompt import FEW_SHOT, system_prompt

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n'"
    " }}{% endif %}"
)


def write_tiny_model(
    out_dir: str | Path,
    *,
    seed: int = 0,
    mute: bool = False,
    vocab_size: int = 1024,
    hidden_size: int = 128,
    layers: int = 2,
    heads: int = 2,
) -> Path:
    """Write the tiny model (config, safetensors weights, tokenizer) to ``out_dir`` and return
    it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = [system_prompt()] + [doc + "\n" + answer for doc, answer in FEW_SHOT]
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    # one token string gives one id
    eos_ids = [cast(int, fast.convert_tokens_to_ids(t)) for t in ("<|endoftext|>", "<|im_end|>")]
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=hidden_size // heads,
        max_position_embeddings=8192,
        bos_token_id=None,
        eos_token_id=eos_ids,
        pad_token_id=eos_ids[0],
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    net = LlamaForCausalLM(config)
    if mute:
        with torch.no_grad():
            net.model.norm.weight.zero_()
    net.generation_config.eos_token_id = eos_ids
    net.generation_config.pad_token_id = eos_ids[0]
    net.save_pretrained(out, safe_serialization=True)
    (out / "spcl_tiny_model.json").write_text(
        json.dumps({"seed": seed, "mute": mute, "random_weights": True}) + "\n"
    )
    return out
