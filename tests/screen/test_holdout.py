"""Held-out evaluation helpers of the screen and the technical-text set builder (no model
training)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import spcl.screen.technical as tech
from spcl.screen.holdout import flag_rates, holdout_split, lang_head_records, source_group
from spcl.screen.train import Record


def _rec(i: int, lang: str, source: str, label: str) -> Record:
    # distinct texts: no near-duplicate groups
    words = np.random.default_rng(i).integers(0, 10**9, 8)
    return Record(
        id=str(i), text=" ".join(f"w{w}" for w in words), lang=lang, label=label, source=source
    )


def test_source_groups_merge_sub_sources_only() -> None:
    assert source_group(_rec(1, "en", "masc-blog", "NONE")) == "en:masc"
    assert source_group(_rec(1, "ko", "klue-dp-wikitree", "NONE")) == "ko:klue-dp"
    assert source_group(_rec(1, "ko", "klue", "NONE")) == "ko:klue"
    assert source_group(_rec(1, "en", "abc-rural", "NONE")) == "en:abc-rural"


def test_holdout_split_is_a_disjoint_stratified_fixed_quarter() -> None:
    recs = [
        _rec(i, lang, src, lab)
        for i, (lang, src, lab) in enumerate(
            [
                (lang, src, lab)
                for lang, src in (("ja", "wiki"), ("ko", "news"))
                for lab in ("SCPI", "NONE")
            ]
            * 20
        )
    ]
    train, test = holdout_split(recs)
    assert {r.id for r in train}.isdisjoint({r.id for r in test})
    assert len(train) + len(test) == len(recs) and len(test) == len(recs) // 4
    assert {(r.lang, r.label) for r in test} == {(r.lang, r.label) for r in recs}
    assert [r.id for r in holdout_split(recs)[1]] == [r.id for r in test]


def test_lang_head_records_keep_one_language_in_order() -> None:
    recs = [_rec(i, lang, "s", "NONE") for i, lang in enumerate(["ja", "en", "ko", "en", "ja"])]
    assert [r.id for r in lang_head_records(recs, "en")] == ["1", "3"]
    assert lang_head_records(recs, "other") == []


def test_flag_rates_count_per_language_and_group() -> None:
    rows = [
        {"lang": "ja", "group": "man"},
        {"lang": "ja", "group": "man"},
        {"lang": "ja", "group": "help-msg"},
        {"lang": "en", "group": "man"},
    ]
    rates = flag_rates(np.array([True, False, True, False]), rows)
    assert rates == {"en": {"*": 0.0, "man": 0.0}, "ja": {"*": 0.6667, "help-msg": 1.0, "man": 0.5}}


def test_page_text_keeps_font_macro_words_and_drops_requests_and_escapes() -> None:
    raw = (
        '.TH KILL 1\n.SH NAME\nkill \\- send a signal\n.B "SIGKILL"\nterminates the \\fIchild\\fP'
        " process.\n"
    )
    assert tech.page_text(raw) == "kill - send a signal SIGKILL terminates the child process."


def _page(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(gzip.compress(body.encode()))


def test_technical_records_split_by_page_and_label_only_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "man"
    sentence = (
        "This option prints diagnostic output and the child process is killed when it exceeds its"
        " limit. "
    )
    plain = (
        "The file lists the mount points of every filesystem together with their options and"
        " flags. "
    )
    for i in range(30):
        _page(
            root / "man1",
            f"tool{i}.1.gz",
            f".TH T{i} 1\n{sentence * 2}\n.PP\n{plain * 2} page {i}.\n",
        )
    monkeypatch.setitem(tech.MAN_ROOTS, "en", root)
    monkeypatch.setattr(tech, "_DETECT_EVAL", tmp_path / "none.jsonl")
    train, evaluation = tech.technical_records("en")
    assert train and evaluation
    page = lambda r: str(r["origin"]).split("#")[0]  # noqa: E731
    assert {page(r) for r in train}.isdisjoint({page(r) for r in evaluation})
    assert all(r["label"] == "NONE" and str(r["source"]) == "weak:man-en" for r in train)
    assert all("label" not in r and r["source"] in ("man", "man-hard") for r in evaluation)
    assert any(r["source"] == "man-hard" for r in evaluation)
    assert tech.technical_records("en") == (train, evaluation)


def test_extra_training_pages_leave_the_evaluation_side_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "man"
    for i in range(60):
        _page(
            root / "man1",
            f"tool{i}.1.gz",
            f".TH T{i} 1\nThe file lists the mount points of every filesystem "
            f"with their options, flags and the number {i} of its entries.\n",
        )
    monkeypatch.setitem(tech.MAN_ROOTS, "en", root)
    monkeypatch.setattr(tech, "_DETECT_EVAL", tmp_path / "none.jsonl")
    train, evaluation = tech.technical_records("en", max_pages=20)
    more, evaluation2 = tech.technical_records(
        "en", max_pages=20, n_train=500, extra_train_pages=40
    )
    assert evaluation2 == evaluation
    page = lambda r: str(r["origin"]).split("#")[0]  # noqa: E731
    assert len(more) > len(train) and {page(r) for r in train} < {page(r) for r in more}
    assert {page(r) for r in more}.isdisjoint({page(r) for r in evaluation})
    assert all(tech._split(page(r)) == "train" for r in more)


def _mo(path: Path, messages: dict[str, str]) -> None:
    """A GNU .mo catalogue (the format gettext reads) holding ``messages``."""
    import struct

    keys = sorted(messages)
    ids = [k.encode() for k in ["", *keys]]
    strs = [b"Content-Type: text/plain; charset=UTF-8\n", *(messages[k].encode() for k in keys)]
    n = len(ids)
    start = 7 * 4 + 16 * n
    table_o, table_t, blob = [], [], b""
    for group, table in ((ids, table_o), (strs, table_t)):
        for s in group:
            table.append((len(s), start + len(blob)))
            blob += s + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, n, 7 * 4, 7 * 4 + 8 * n, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head + b"".join(struct.pack("<2I", *t) for t in table_o + table_t) + blob)


def test_message_catalogues_are_on_one_side_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        _mo(
            tmp_path / "ja" / "LC_MESSAGES" / f"pkg{i}.mo",
            {
                f"message {j} of package {i}, long enough to be kept as a passage": (
                    f"パッケージ{i}のメッセージ{j}は、"
                    "このオプションを指定すると診断情報を出力して子プロセスを終了します。"
                )
                for j in range(3)
            },
        )
    monkeypatch.setattr(tech, "LOCALE_ROOT", tmp_path)
    train = tech.message_records("ja", side="train")
    evaluation = tech.message_records("ja", side="eval")
    every = tech.message_records("ja")
    cat = lambda r: str(r["origin"]).split("#")[0]  # noqa: E731
    assert train and evaluation
    assert {cat(r) for r in train}.isdisjoint({cat(r) for r in evaluation})
    assert {cat(r) for r in train} | {cat(r) for r in evaluation} == {cat(r) for r in every}
    assert all(r["label"] == "NONE" and r["source"] == "weak:msg-ja" for r in train)
    assert all("label" not in r and r["source"] == "help-msg" for r in evaluation)
