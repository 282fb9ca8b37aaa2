"""Fine-tuning the LLM-stage extractor on chat records (``spcl train-extractor``).

One idea per module:

- ``records``: read chat records (or PII split records) and check that each prompt is exactly the
  extraction prompt of ``spcl.extract.prompt`` (the version and the messages).
- ``lossmask``: tokenize one record with the model's chat template and build its labels: -100 for
  every system/user/template token, the token ids for the assistant completion and its end-of-turn
  token; verify.
- ``collate``: pad examples into a batch and re-verify the loss mask on the batch (the only way
  batches are built, for training and for evaluation).
- ``loss``: the summed cross-entropy over a batch's trained tokens (logits only where they are
  needed).
- ``checkpoint``: trainable weights and optimizer state in safetensors (no pickle), for resuming.
- ``config``: the run's settings (``TrainConfig``), whose weight-changing part the model card
  records.
- ``loop``: the optimizer loop (schedule, seeded order and dropout, accumulation, clipping).
- ``train``: a training run (LoRA via PEFT, or full fine-tuning): checks, resume, model card,
  evaluation.
- ``metrics``: the eval loss and the ``spcl eval masking`` metrics of the trained extractor.
- the artifact (model card, the checks a loader runs before using an adapter) is
  ``spcl.extract.adapter``: the backends that load an adapter read it, and nothing in
  ``spcl.extract`` imports this package.
- ``tracking``: metrics and hyper-parameters to a JSONL log and optionally MLflow; never text.
"""
