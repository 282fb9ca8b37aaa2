"""Fine-tuning building blocks on CPU: chat records, the completion-only loss mask on real tokenized
records (a tiny byte-level BPE chat tokenizer written here), batches, checkpoints, the tracker's
guard and the adapter checks. The training runs themselves are in ``test_finetune_train.py`` (slow).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("transformers")

from spcl.extract.adapter import AdapterError, base_fingerprint, check_adapter, write_model_card
from spcl.extract.prompt import PROMPT_VERSION, build_messages
from spcl.finetune.collate import collate, verify_batch
from spcl.finetune.loop import lr_at
from spcl.finetune.lossmask import (
    IGNORE,
    Example,
    LossMaskError,
    encode_record,
    encode_records,
    verify_example,
)
from spcl.finetune.records import ChatRecord, chat_from_json, read_records
from spcl.finetune.tracking import Tracker
from spcl.synth.pii import chat_record, generate_records


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny random Llama chat model folder, its tokenizer and end-of-turn ids."""
    from transformers import AutoTokenizer

    from spcl.bench.tiny_model import write_tiny_model

    path = write_tiny_model(tmp_path_factory.mktemp("tiny") / "m", hidden_size=64, layers=1)
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    eos = frozenset(tok.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_end|>"))
    return {"path": path, "tok": tok, "eos": eos, "im_end": tok.convert_tokens_to_ids("<|im_end|>")}


@pytest.fixture(scope="module")
def pii() -> dict[str, list[dict[str, Any]]]:
    """The seeded synthetic PII splits."""
    return generate_records(42)


def _record(doc: str, completion: str, rid: str = "r-1") -> ChatRecord:
    return ChatRecord(rid, tuple(build_messages(doc)), completion)


# --- records --------------------------------------------------------------------------------------


def test_chat_and_pii_records_are_checked_against_the_extraction_prompt(
    tmp_path: Path, pii: dict[str, list[dict[str, Any]]]
) -> None:
    rec = pii["train"][0]
    chat = chat_record(rec)
    # a PII record is turned into the same chat record
    assert chat_from_json(chat) == chat_from_json(rec)
    assert chat_from_json(chat).completion == rec["target_tsv"]
    other = json.loads(json.dumps(chat))
    other["prompt"][0]["content"] += " Be brief."
    stale = {**chat, "prompt_version": "extract-v1"}
    lines = [
        json.dumps(chat),
        json.dumps(other | {"id": "x-2"}),
        json.dumps(stale | {"id": "x-3"}),
        "{not json",
        json.dumps(chat),
        json.dumps({**chat, "id": "x-4", "completion": [{"role": "user", "content": "a"}]}),
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    good, bad = read_records(path)
    assert [r.id for r in good] == [rec["id"]]
    assert [(p.id, p.reason) for p in bad] == [
        ("x-2", "prompt_differs_from_extraction_prompt"),
        ("x-3", "prompt_version_mismatch"),
        ("chat.jsonl:4", "malformed_json"),
        (rec["id"], "duplicate_id"),
        ("x-4", "bad_completion"),
    ]
    assert rec["source_text"] not in repr(good[0]) and rec["target_tsv"] not in repr(good[0])


# --- the loss mask --------------------------------------------------------------------------------


def test_loss_mask_on_real_records_trains_only_the_completion_and_end_of_turn(
    tiny: dict[str, Any], pii: dict[str, list[dict[str, Any]]]
) -> None:
    tok, eos = tiny["tok"], tiny["eos"]
    records = [chat_from_json(r) for r in pii["train"][:40]]
    report = encode_records(tok, records, max_length=8192, eos_ids=eos)
    assert report.problems == [] and len(report.examples) == 40
    assert any(not r.completion for r in records)  # negatives are in the sample
    for rec, ex in zip(records, report.examples, strict=True):
        trained = [i for i, label in enumerate(ex.labels) if label != IGNORE]
        # one contiguous run right after the prompt, ending with <|im_end|>, which is the last token
        assert trained == list(range(ex.prompt_tokens, len(ex.input_ids)))
        assert ex.input_ids[-1] == tiny["im_end"]
        assert tok.decode(list(ex.input_ids[ex.prompt_tokens : -1])) == rec.completion
        prompt_text = tok.decode(list(ex.input_ids[: ex.prompt_tokens]))
        assert (
            prompt_text.endswith("<|im_start|>assistant\n")
            and rec.prompt[1]["content"] in prompt_text
        )
        assert verify_example(ex, eos) == (ex.prompt_tokens, len(trained))
    assert report.trained_tokens + report.masked_tokens == sum(
        len(e.input_ids) for e in report.examples
    )
    negative = next(
        ex for rec, ex in zip(records, report.examples, strict=True) if not rec.completion
    )
    assert negative.completion_tokens == 1  # an empty answer trains the end-of-turn token alone


def test_training_prompt_tokens_are_the_inference_prompt_tokens(
    tiny: dict[str, Any], pii: dict[str, list[dict[str, Any]]]
) -> None:
    from spcl.extract.backends.transformers_backend import TransformersExtractor

    extractor = TransformersExtractor(tiny["path"], device="cpu")
    for rec in pii["validation"][:5]:
        ex = encode_record(tiny["tok"], chat_from_json(rec), max_length=8192, eos_ids=tiny["eos"])
        assert list(ex.input_ids[: ex.prompt_tokens]) == extractor._prompt_ids(rec["source_text"])


def test_a_record_longer_than_max_length_is_never_cut(
    tiny: dict[str, Any], pii: dict[str, list[dict[str, Any]]]
) -> None:
    tok, eos = tiny["tok"], tiny["eos"]
    rec = chat_from_json(next(r for r in pii["train"] if r["target_tsv"].count("\n") >= 3))
    full = encode_record(tok, rec, max_length=8192, eos_ids=eos)
    with pytest.raises(LossMaskError) as err:
        encode_record(tok, rec, max_length=len(full.input_ids) - 1, eos_ids=eos)
    assert err.value.reason == "completion_truncated" and err.value.ids == [rec.id]
    assert rec.completion.split("\t")[1].split("\n")[0] not in str(err.value)
    with pytest.raises(LossMaskError, match="prompt_too_long"):
        encode_record(tok, rec, max_length=full.prompt_tokens, eos_ids=eos)
    assert encode_record(tok, rec, max_length=len(full.input_ids), eos_ids=eos) == full
    report = encode_records(
        tok, [rec, _record("짧은 문서", "")], max_length=len(full.input_ids) - 1, eos_ids=eos
    )
    assert report.problems == [(rec.id, "completion_truncated")] and len(report.examples) == 1


def test_verify_example_rejects_cut_or_tampered_masks(tiny: dict[str, Any]) -> None:
    eos = tiny["eos"]
    ex = encode_record(
        tiny["tok"],
        _record("Jordan Sample, 555-0100.", "PERSON\tJordan Sample"),
        max_length=8192,
        eos_ids=eos,
    )
    cut = Example(ex.id, ex.input_ids[:-2], ex.labels[:-2], ex.prompt_tokens, ex.completion_tokens)
    with pytest.raises(LossMaskError, match="completion_truncated"):
        verify_example(cut, eos)
    leaked = list(ex.labels)
    leaked[3] = ex.input_ids[3]
    with pytest.raises(LossMaskError, match="prompt_token_trained"):
        verify_example(
            Example(ex.id, ex.input_ids, tuple(leaked), ex.prompt_tokens, ex.completion_tokens), eos
        )
    wrong = list(ex.labels)
    wrong[-2] = (wrong[-2] + 1) % 500
    with pytest.raises(LossMaskError, match="label_differs_from_input"):
        verify_example(
            Example(ex.id, ex.input_ids, tuple(wrong), ex.prompt_tokens, ex.completion_tokens), eos
        )


def test_a_template_error_fails_its_record_only(tiny: dict[str, Any]) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny["path"]), local_files_only=True)
    tok.chat_template = (
        "{% if messages[1]['content'] == 'bad' %}{{ raise_exception('no ' + messages[1]['content'])"
        " }}{% endif %}" + tok.chat_template
    )
    report = encode_records(
        tok, [_record("bad", ""), _record("good", "", "r-2")], max_length=8192, eos_ids=tiny["eos"]
    )
    assert (
        report.problems == [("r-1", "tokenize_error:TemplateError")] and len(report.examples) == 1
    )


def test_template_whose_prompt_is_not_a_prefix_is_refused(tiny: dict[str, Any]) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny["path"]), local_files_only=True)
    tok.chat_template = "{% if not add_generation_prompt %}X{% endif %}" + tok.chat_template
    with pytest.raises(LossMaskError, match="template_not_prefix"):
        encode_record(tok, _record("doc", "PERSON\tdoc"), max_length=8192, eos_ids=tiny["eos"])


_DOC_CHARS = st.sampled_from(list("abc XYZ 김가상박예시 山田花子 0123456789-@.,()\n"))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    doc=st.text(_DOC_CHARS, min_size=1, max_size=80),
    rows=st.lists(
        st.tuples(
            st.sampled_from(["PERSON", "PHONE", "EMAIL", "REL"]),
            st.text(_DOC_CHARS.filter(lambda c: c != "\n"), min_size=1, max_size=20),
        ),
        max_size=5,
    ),
)
def test_loss_mask_property_any_completion(
    tiny: dict[str, Any], doc: str, rows: list[tuple[str, str]]
) -> None:
    """For any document and answer the trained tokens are exactly the answer plus one
    end-of-turn."""
    completion = "\n".join(f"{t}\t{v}" for t, v in rows)
    try:
        ex = encode_record(
            tiny["tok"], _record(doc, completion), max_length=8192, eos_ids=tiny["eos"]
        )
    except LossMaskError as err:  # a token straddling the boundary is refused, never half-trained
        assert err.reason == "completion_boundary_merge"
        return
    trained = [i for i, label in enumerate(ex.labels) if label != IGNORE]
    assert trained == list(range(ex.prompt_tokens, len(ex.input_ids)))
    assert tiny["tok"].decode([ex.input_ids[i] for i in trained[:-1]]) == completion
    assert ex.labels[-1] in tiny["eos"] and ex.completion_tokens == len(trained)


# --- batches --------------------------------------------------------------------------------------


def test_collate_pads_with_ignored_labels_and_counts_every_token(
    tiny: dict[str, Any], pii: dict[str, list[dict[str, Any]]]
) -> None:
    tok, eos = tiny["tok"], tiny["eos"]
    examples = encode_records(
        tok, [chat_from_json(r) for r in pii["train"][:3]], max_length=8192, eos_ids=eos
    ).examples
    batch = collate(examples, pad_id=0, eos_ids=eos)
    assert batch.trained_tokens == sum(e.completion_tokens for e in examples)
    assert batch.masked_tokens + batch.trained_tokens + batch.pad_tokens == batch.labels.numel()
    assert batch.pad_tokens == sum(batch.input_ids.shape[1] - len(e.input_ids) for e in examples)
    assert bool((batch.labels[batch.attention_mask == 0] == IGNORE).all())
    batch.labels[0, 2] = batch.input_ids[0, 2]  # a prompt token sneaks into the loss
    with pytest.raises(LossMaskError, match="batch_trained_count_mismatch"):
        verify_batch(batch, examples)
    with pytest.raises(LossMaskError, match="empty_batch"):
        collate([], 0, eos)


def test_completion_loss_matches_the_models_own_masked_loss(
    tiny: dict[str, Any], pii: dict[str, list[dict[str, Any]]]
) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from spcl.finetune.loss import completion_loss_sum

    net = AutoModelForCausalLM.from_pretrained(str(tiny["path"]), local_files_only=True)
    examples = encode_records(
        tiny["tok"],
        [chat_from_json(r) for r in pii["train"][4:7]],
        max_length=8192,
        eos_ids=tiny["eos"],
    ).examples
    # rows start training at different positions
    assert len({e.prompt_tokens for e in examples}) > 1
    batch = collate(examples, pad_id=0, eos_ids=tiny["eos"])
    with torch.no_grad():
        sliced = completion_loss_sum(net, batch)
        full = completion_loss_sum(net, batch, slice_logits=False)
        oracle = net(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask, labels=batch.labels
        ).loss
    assert batch.first_trained == min(e.prompt_tokens for e in examples)
    assert torch.allclose(sliced, full, rtol=1e-5) and torch.allclose(
        full / batch.trained_tokens, oracle, rtol=1e-5
    )


# --- schedule, checkpoints, tracker, artifact -----------------------------------------------------


def test_lr_schedule_warms_up_then_decays_to_zero() -> None:
    lrs = [lr_at(s, 10, 1.0, 2) for s in range(10)]
    assert (
        lrs[:2] == [0.5, 1.0]
        and lrs[2] == 1.0
        and lrs == sorted(lrs[:2]) + sorted(lrs[2:], reverse=True)
    )
    assert lr_at(9, 10, 1.0, 0) == pytest.approx(0.1)


def test_checkpoint_round_trip_restores_weights_and_adam_state(tmp_path: Path) -> None:
    import torch

    from spcl.finetune.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint

    def make() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
        net[0].weight.requires_grad_(False)
        return net, torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=0.1)

    net, opt = make()
    for _ in range(2):
        net(torch.ones(1, 4)).sum().backward()
        opt.step()
        opt.zero_grad()
    path = save_checkpoint(tmp_path, 2, net, opt, {"settings_sha256": "s"})
    assert latest_checkpoint(tmp_path) == path and sorted(p.name for p in path.iterdir()) == [
        "optimizer.safetensors",
        "state.json",
        "trainable.safetensors",
    ]
    net2, opt2 = make()
    assert load_checkpoint(path, net2, opt2)["settings_sha256"] == "s"
    for a, b in zip(net.parameters(), net2.parameters(), strict=True):
        assert torch.equal(a, b)
    for x in (net, net2):
        x(torch.ones(1, 4)).sum().backward()
    opt.step()
    opt2.step()  # the same Adam moments give the same next step
    for a, b in zip(net.parameters(), net2.parameters(), strict=True):
        assert torch.equal(a, b)


def test_tracker_accepts_numbers_and_short_settings_only(tmp_path: Path) -> None:
    tracker = Tracker(tmp_path / "log.jsonl")
    tracker.log_params({"lr": 1e-4, "device": "cpu", "full": False})
    tracker.log_metrics({"loss": 1.5}, step=1)
    with pytest.raises(ValueError, match="not a short setting"):
        tracker.log_params(
            {"note": "신청인 김가상의 연락처는 010-0000-1234이며 보호자는 어머니 박예시입니다 " * 2}
        )
    with pytest.raises(ValueError, match="not a scalar"):
        tracker.log_params({"completion": ["PERSON", "김가상"]})
    with pytest.raises(ValueError, match="not a number"):
        tracker.log_metrics({"raw": "PERSON\t김가상"}, step=1)
    events = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert events == [
        {"event": "params", "lr": 1e-4, "device": "cpu", "full": False},
        {"event": "metrics", "step": 1, "loss": 1.5},
    ]


def _fake_adapter(root: Path, base: Path) -> Path:
    root.mkdir()
    (root / "adapter_config.json").write_text("{}")
    (root / "adapter_model.safetensors").write_bytes(b"weights")
    write_model_card(root, {"base": {"path": str(base), "fingerprint": base_fingerprint(base)}})
    return root


def test_check_adapter_refuses_pickle_other_prompt_other_base_and_changed_weights(
    tmp_path: Path,
) -> None:
    base = tmp_path / "base.gguf"
    base.write_bytes(b"GGUF base")
    good = _fake_adapter(tmp_path / "a", base)
    assert check_adapter(good, base)["prompt_version"] == PROMPT_VERSION
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF other")
    with pytest.raises(AdapterError, match="different base model"):
        check_adapter(good, other)
    (good / "adapter_model.safetensors").write_bytes(b"weightz")
    with pytest.raises(AdapterError, match="differs from the model card"):
        check_adapter(good, base)
    stale = _fake_adapter(tmp_path / "b", base)
    card = json.loads((stale / "model_card.json").read_text())
    (stale / "model_card.json").write_text(json.dumps({**card, "prompt_version": "extract-v1"}))
    with pytest.raises(AdapterError, match="extract-v1"):
        check_adapter(stale, base)
    pickled = _fake_adapter(tmp_path / "c", base)
    (pickled / "optimizer.pt").write_bytes(b"\x80\x04")
    with pytest.raises(AdapterError, match=r"pickle-capable files: optimizer\.pt"):
        check_adapter(pickled, base)
    with pytest.raises(AdapterError, match="pickle-capable"):
        write_model_card(pickled, {})
    (tmp_path / "d").mkdir()
    with pytest.raises(AdapterError, match=r"missing adapter_config\.json"):
        check_adapter(tmp_path / "d")


def test_mask_adapter_option_is_for_the_model_backends_that_load_weights() -> None:
    import argparse

    from spcl.commands.mask import add_mask_arguments, backend_options

    parser = argparse.ArgumentParser()
    add_mask_arguments(parser)
    base = ["--input", "i", "--output", "o", "--vault", "v", "--model", "m", "--adapter", "ad"]
    assert (
        backend_options(parser.parse_args([*base, "--backend", "transformers"]))["adapter"] == "ad"
    )
    assert "adapter" not in backend_options(
        parser.parse_args([*base[:-2], "--backend", "transformers"])
    )
    assert backend_options(parser.parse_args([*base, "--backend", "vllm"]))["adapter"] == "ad"
    with pytest.raises(ValueError, match="transformers and vllm backends only"):
        backend_options(
            parser.parse_args([*base, "--backend", "openai", "--endpoint", "http://h/v1"])
        )


def test_train_extractor_cli_usage_and_missing_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spcl.cli import main

    data = tmp_path / "chat.jsonl"
    data.write_text(
        json.dumps(chat_record(generate_records(42)["train"][0]), ensure_ascii=False) + "\n"
    )
    args = ["train-extractor", "--data", str(data), "--output", str(tmp_path / "o")]
    assert main([*args, "--base", str(tmp_path / "nope"), "--epochs", "0"]) == 2
    assert main([*args, "--base", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err
