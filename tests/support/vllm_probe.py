"""Run inside the vLLM environment by tests/e2e/test_vllm_cpu.py
(``python tests/support/vllm_probe.py ARGS.json``): one real vLLM engine
(``spcl.extract.backends.vllm_backend.VLLMExtractor``, a LoRA adapter, float32) that

1. greedy-generates for each given text the extraction prompt with the extractor's own sampling
   settings and ``LoRARequest``, and writes the prompt and generated token ids (for the comparison
   with transformers + PEFT);
2. runs the whole mask job with that same extractor (``spcl.mask_stage.run_mask_job``) on the given
   input.

Token ids only go to the result file, never to the console. Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(args_path: str) -> int:
    """Read the arguments file, write ``args["result"]`` (ids, metrics); exit 0."""
    args = json.loads(Path(args_path).read_text(encoding="utf-8"))
    from spcl.extract.backends.vllm_backend import VLLMExtractor
    from spcl.extract.prompt import build_messages
    from spcl.mask_stage import MaskJobConfig, run_mask_job

    ex = VLLMExtractor(
        args["model"],
        adapter=args["adapter"],
        dtype="float32",
        max_tokens=args["max_tokens"],
        batch_size=8,
        max_model_len=4096,
    )
    outs = ex.llm.chat(
        [build_messages(t, ex.types) for t in args["texts"]],
        ex.sampling,
        use_tqdm=False,
        lora_request=ex.lora_request,
    )
    ids = [
        {"prompt": list(o.prompt_token_ids), "generated": list(o.outputs[0].token_ids)}
        for o in outs
    ]
    cfg = MaskJobConfig(
        args["input"],
        args["output"],
        args["vault"],
        backend="vllm",
        model=args["model"],
        options={"max_tokens": args["max_tokens"], "adapter": args["adapter"]},
    )
    metrics = run_mask_job(cfg, extractor=ex)
    Path(args["result"]).write_text(
        json.dumps({"ids": ids, "metrics": metrics, "lora": ex.lora_request is not None}),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
