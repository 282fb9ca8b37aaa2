"""Issue 21 (items 4–6, --ids): `spcl unmask` proves the whole round trip, survives a damaged vault
file row by row with the true reason, gives back non-NFC sources byte-exact, and restores selected
ids only.

One real mask run (rules backend) over a small Parquet file is shared by the tests; each test copies
its output and vault before tampering with them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.cli import main
from spcl.mask import mask_text
from spcl.mask.vault import open_vault
from spcl.mask_stage import MaskJobConfig, run_mask_job
from spcl.mask_stage.unmask import Refused, restore_row

KEY = bytes(range(32))
NFD_HANGUL = unicodedata.normalize("NFD", "한국 홍길동")
IDS = [f"d{i}" for i in range(12)] + ["dup", "dup", "nfd", "nfd-latin"]
TEXTS = [
    f"고객 번호 010-1234-{5600 + i} 으로 연락 주세요. mail user{i}@mailbox.com thanks"
    for i in range(12)
] + [
    "tel 010-9999-0001 first dup",
    "tel 010-9999-0002 second dup",
    f"{NFD_HANGUL} 전화 010-2222-3333 입니다",
    "Cafe\u0301 owner: call 010-4444-5555 today",
]


@pytest.fixture(scope="module")
def masked_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished mask run: ``in/``, ``out/`` and ``vault/`` under one folder (do not modify:
    copy first)."""
    root = tmp_path_factory.mktemp("masked-run")
    (root / "in").mkdir()
    pq.write_table(pa.table({"id": IDS, "text": TEXTS}), root / "in" / "part-0.parquet")
    mp = pytest.MonkeyPatch()
    mp.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    try:
        metrics = run_mask_job(
            MaskJobConfig(str(root / "in"), str(root / "out"), str(root / "vault"))
        )
    finally:
        mp.undo()
    assert metrics["masked"] == len(IDS) and metrics["failed"] == 0
    assert unicodedata.normalize("NFC", NFD_HANGUL) != NFD_HANGUL
    return root


@pytest.fixture
def run(masked_run: Path, tmp_path: Path) -> Path:
    """A private copy of the mask run to tamper with."""
    for name in ("out", "vault"):
        shutil.copytree(masked_run / name, tmp_path / name)
    return tmp_path


def rows_of(folder: Path) -> list[dict]:
    """All rows of the Parquet files in ``folder``."""
    return [r for p in sorted(folder.glob("*.parquet")) for r in pq.read_table(p).to_pylist()]


def unmask(run: Path, *extra: str) -> int:
    """``spcl unmask`` of ``run``'s output into ``run/restored``."""
    return main(
        [
            "unmask",
            "--masked",
            str(run / "out"),
            "--vault",
            str(run / "vault"),
            "--output",
            str(run / "restored"),
            *extra,
        ]
    )


def summary(capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    """The JSON summary ``spcl unmask`` printed, and its stderr."""
    cap = capsys.readouterr()
    return json.loads(cap.out.strip().splitlines()[-1]), cap.err


def edit_masked(run: Path, edit) -> str:
    """Apply ``edit(row)`` to the first masked row (rewriting its part file); returns that row's
    id."""
    [part] = (run / "out" / "masked").glob("*.parquet")
    rows = pq.read_table(part).to_pylist()
    edit(rows[0])
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(part)), part)
    return rows[0]["id"]


def vault_file(run: Path) -> Path:
    """The one vault file of the run."""
    [path] = (run / "vault").glob("mask-*.jsonl")
    return path


def assert_no_values(text: str) -> None:
    """No planted value (phone numbers, e-mail addresses, names) appears in ``text``."""
    for value in ("010-", "@mailbox.com", "홍길동", "Cafe"):
        assert value not in text


def test_every_row_restores_byte_exact_including_non_nfc_sources(run: Path, capsys) -> None:
    assert unmask(run) == 0
    out, err = summary(capsys)
    restored = rows_of(run / "restored")
    # the two non-NFC sources come back as given (on main they came back NFC)
    assert sorted((r["id"], r["text"]) for r in restored) == sorted(zip(IDS, TEXTS, strict=True))
    assert all(r["verified"] for r in restored)
    assert out["restored"] == len(IDS) and out["refused"] == 0 and out["unverified"] == 0
    assert out["originals_restored"] == 2
    assert_no_values(err)


@pytest.mark.parametrize("how", ["same_length_word", "appended_text", "appended_token"])
def test_masked_text_edited_outside_its_spans_is_refused(run: Path, capsys, how: str) -> None:
    def edit(row: dict) -> None:
        text = row["masked_text"]
        if how == "same_length_word":
            assert "연락" in text or "first" in text or "tel" in text
            row["masked_text"] = (
                text.replace("연락", "전화", 1) if "연락" in text else text.replace("tel", "fax", 1)
            )
        elif how == "appended_text":
            row["masked_text"] = text + " P.S. wire the money"
        else:  # a token of the row appended: on main it expanded into the value a second time
            row["masked_text"] = text + " " + row["spans"][0]["token"]

    bad = edit_masked(run, edit)
    assert unmask(run) == 1
    out, err = summary(capsys)
    assert out["restored"] == len(IDS) - 1 and out["refused_by_reason"] == {
        "masked_text_changed": 1
    }
    assert bad not in {r["id"] for r in rows_of(run / "restored")} or IDS.count(bad) > 1
    assert "masked_text_changed" in err
    assert_no_values(err)


def test_a_row_relabelled_with_another_id_or_copied_is_refused(run: Path, capsys) -> None:
    [part] = (run / "out" / "masked").glob("*.parquet")
    rows = pq.read_table(part).to_pylist()
    rows[0]["id"] = "d5"  # d0's text and record, presented as d5's
    rows.append(dict(rows[1]))  # d1 twice
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(part)), part)
    assert unmask(run) == 1
    out, _ = summary(capsys)
    assert out["refused_by_reason"] == {"duplicate_row": 1, "masked_text_changed": 1}
    assert out["restored"] == len(IDS) - 1
    assert [r["id"] for r in rows_of(run / "restored")].count("d5") == 1


def test_edited_spans_are_refused(run: Path, capsys) -> None:
    def edit(row: dict) -> None:
        row["spans"][0]["start"] += 1

    edit_masked(run, edit)
    assert unmask(run) == 1
    assert summary(capsys)[0]["refused_by_reason"] == {"spans_mismatch": 1}


def test_a_truncated_last_vault_line_blocks_only_its_own_row(run: Path, capsys) -> None:
    path = vault_file(run)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed mid-write
    assert unmask(run) == 1
    out, err = summary(capsys)
    assert out["restored"] == len(IDS) - 1 and out["refused_by_reason"] == {"corrupt_record": 1}
    assert out["corrupt_records"] == 1 and f"{path.name}:{len(lines)}" in err
    # the vault's manifest no longer matches the file
    assert out["vault_files_changed"] == [path.name]
    assert "ambiguous_mapping" not in err
    assert_no_values(err)


def test_an_unrelated_jsonl_file_in_the_vault_folder_is_never_read(run: Path, capsys) -> None:
    (run / "vault" / "notes.jsonl").write_text('my notes, not JSON\n{"todo": 1}\n')
    assert unmask(run) == 0
    out, _ = summary(capsys)
    assert out["restored"] == len(IDS) and out["corrupt_records"] == 0


def test_a_flipped_ciphertext_byte_fails_only_that_row_as_auth_failed(run: Path, capsys) -> None:
    path = vault_file(run)
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    ct = bytearray(base64.b64decode(recs[3]["ciphertext"]))
    ct[5] ^= 0x01
    recs[3]["ciphertext"] = base64.b64encode(bytes(ct)).decode()
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert unmask(run) == 1
    out, err = summary(capsys)
    # main called it ambiguous_mapping
    assert "auth_failed" in err and "ambiguous_mapping" not in err
    assert out["restored"] == len(IDS) - 1 and out["refused_by_reason"] == {"auth_failed": 1}
    assert out["corrupt_records"] == 0
    assert_no_values(err)


def test_a_missing_vault_file_and_a_forged_file_name_get_their_own_reasons(
    run: Path, capsys
) -> None:
    edit_masked(run, lambda row: row.update(vault_file="../../etc/passwd"))
    vault_file(run).rename(run / "vault" / "elsewhere.jsonl")
    assert unmask(run) == 1
    out, _ = summary(capsys)
    assert out["restored"] == 0
    assert out["refused_by_reason"] == {"bad_vault_file": 1, "missing_vault_file": len(IDS) - 1}


def test_old_vault_records_restore_as_unverified_or_are_refused_when_asked(
    run: Path, capsys
) -> None:
    path = vault_file(run)
    vault = open_vault(run / "vault", KEY)
    old = run / "old"
    with open_vault(old, KEY, writer=path.stem) as writer:  # the same mappings as version-1 records
        for row in rows_of(run / "out" / "masked"):
            writer.put(row["row_key"], vault.get(row["row_key"], writer=path.stem))
    shutil.copy(old / path.name, path)
    assert unmask(run) == 0
    out, err = summary(capsys)
    assert out["restored"] == len(IDS) and out["unverified"] == len(IDS) and "not verified" in err
    assert not any(r["verified"] for r in rows_of(run / "restored"))
    assert unmask(run, "--require-verified") == 1
    assert summary(capsys)[0]["refused_by_reason"] == {"unverified": len(IDS)}


def test_ids_file_restores_only_the_listed_ids(run: Path, capsys) -> None:
    (run / "ids.txt").write_text("dup\nd3\n\n")
    assert unmask(run, "--ids", str(run / "ids.txt")) == 0
    out, _ = summary(capsys)
    # both rows of the repeated id
    assert out["restored"] == 3 and out["not_selected"] == len(IDS) - 3
    assert sorted(r["text"] for r in rows_of(run / "restored")) == sorted(
        TEXTS[i] for i in (3, 12, 13)
    )


def test_ids_file_by_row_key_picks_one_row_and_unknown_values_exit_1(run: Path, capsys) -> None:
    second_dup = next(
        r for r in rows_of(run / "out" / "masked") if r["masked_text"].endswith("second dup")
    )
    (run / "keys.txt").write_text(second_dup["row_key"] + "\nno-such-key\n")
    assert unmask(run, "--ids", str(run / "keys.txt"), "--match", "row_key") == 1
    out, err = summary(capsys)
    assert out["restored"] == 1 and out["selected_not_found"] == 1 and "matched no row" in err
    assert [r["text"] for r in rows_of(run / "restored")] == [TEXTS[13]]


# -- the round trip as a property: mask -> vault -> restore gives back the original bytes, any edit
# is refused

_ALPHABET = st.sampled_from(list("abc 가각한ㄱ\u1100\u1161\u11a8e\u0301\u0041\u030a.-0123456789@"))


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(_ALPHABET, min_size=1, max_size=40),
    picks=st.lists(st.tuples(st.integers(0, 39), st.integers(1, 6)), max_size=3),
    pos=st.integers(0, 80),
    insert=_ALPHABET,
    replace=st.booleans(),
)
def test_round_trip_property(
    tmp_path_factory: pytest.TempPathFactory, text: str, picks, pos: int, insert: str, replace: bool
) -> None:
    nfc = unicodedata.normalize("NFC", text)
    cands = [("PERSON", nfc[a : a + n]) for a, n in picks if nfc[a : a + n].strip()]
    result = mask_text(text, cands)
    vault = open_vault(tmp_path_factory.mktemp("v"), KEY, writer="w")
    vault.put(
        "k", result.mapping, source=nfc, masked=result.masked_text, original=text, row_id="doc"
    )
    spans = [
        {"type": s.type, "start": s.start, "end": s.end, "token": s.token} for s in result.spans
    ]
    row = {
        "id": "doc",
        "row_key": "k",
        "vault_file": "w",
        "masked_text": result.masked_text,
        "spans": spans,
    }
    restored, verified, _ = restore_row(row, vault)
    assert restored == text and verified  # the original bytes, NFC or not
    masked = result.masked_text
    p = pos % (len(masked) + 1)
    edited = masked[:p] + insert + masked[p + 1 if replace and p < len(masked) else p :]
    if edited != masked:
        with pytest.raises(Refused, match="masked_text_changed"):
            restore_row({**row, "masked_text": edited}, vault)


def test_a_wrong_key_restores_nothing(run: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(32)).decode())
    assert unmask(run) == 1
    err = capsys.readouterr().err
    assert "wrong vault key" in err and not (run / "restored").exists()


def _vault_lines(path: Path) -> dict[str, str]:
    """The record lines of a vault file by row key."""
    return {json.loads(line)["id"]: line for line in path.read_text().splitlines() if line.strip()}


def test_a_record_replayed_from_an_earlier_run_is_refused(
    masked_run: Path, run: Path, capsys
) -> None:
    # an earlier run of the same input (its own run id and vault file), then its record for one row
    # key copied over the later run's record of that key: before, it restored as verified (the
    # masked text is the same, so both keyed hashes matched); now the record is bound to the file
    # (run) that wrote it
    earlier = run / "earlier"
    metrics = run_mask_job(
        MaskJobConfig(str(masked_run / "in"), str(earlier / "out"), str(earlier / "vault"))
    )
    assert metrics["masked"] == len(IDS)
    [old_file] = (earlier / "vault").glob("mask-*.jsonl")
    assert old_file.name != vault_file(run).name
    old, new = _vault_lines(old_file), _vault_lines(vault_file(run))
    target = next(r for r in rows_of(run / "out" / "masked") if r["id"] == "d3")["row_key"]
    vault_file(run).write_text(
        "".join((old[k] if k == target else line) + "\n" for k, line in new.items())
    )
    assert unmask(run) == 1
    out, err = summary(capsys)
    assert out["refused_by_reason"] == {"auth_failed": 1} and out["restored"] == len(IDS) - 1
    assert "d3" not in {r["id"] for r in rows_of(run / "restored")}
    assert all(r["verified"] for r in rows_of(run / "restored"))
    assert_no_values(err)


def test_records_of_the_earlier_unbound_format_are_never_verified(run: Path, capsys) -> None:
    # version-2 records (keyed hashes, bound to the id only) as the previous release wrote them:
    # still read, their hashes still checked, but restored as unverified (a replay cannot be ruled
    # out)
    import os

    from spcl.mask.vault_records import aad as _aad

    path = vault_file(run)
    vault = open_vault(run / "vault", KEY)
    lines = []
    for row_key, line in _vault_lines(path).items():
        rec = json.loads(line)
        body = vault._aead.decrypt(
            base64.b64decode(rec["nonce"]),
            base64.b64decode(rec["ciphertext"]),
            _aad(row_key, 3, path.stem),
        )
        nonce = os.urandom(12)
        ct = vault._aead.encrypt(nonce, body, _aad(row_key, 2))
        lines.append(
            json.dumps(
                {
                    "id": row_key,
                    "v": 2,
                    "nonce": base64.b64encode(nonce).decode(),
                    "ciphertext": base64.b64encode(ct).decode(),
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    assert unmask(run) == 0
    out, err = summary(capsys)
    assert out["restored"] == len(IDS) and out["unverified"] == len(IDS) and "not verified" in err
    assert not any(r["verified"] for r in rows_of(run / "restored"))
    assert unmask(run, "--require-verified") == 1
    assert summary(capsys)[0]["refused_by_reason"] == {"unverified": len(IDS)}
    edit_masked(run, lambda row: row.update(masked_text=row["masked_text"] + " "))
    assert unmask(run) == 1  # their hashes are still checked
    assert summary(capsys)[0]["refused_by_reason"] == {"masked_text_changed": 1}


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    "where",
    [
        "out/masked",
        "out",
        "out/masked/sub",
        "vault",
        "vault/restored",
        ".",
        "other/inside",
        "filtered/decision=flagged/x",
        "holder",
    ],
)
def test_unmask_never_writes_into_or_around_a_released_folder(
    run: Path, capsys, where: str
) -> None:
    # before, --output out/masked replaced the released masked Parquet with clear text (0644, exit
    # 0)
    shutil.copytree(run / "out", run / "other" / "inside" / "mask-out")  # a second mask output
    (run / "filtered" / "decision=flagged").mkdir(parents=True)  # a filter output folder
    # a folder that contains a mask output
    shutil.copytree(run / "out", run / "holder" / "deep" / "mask-out")
    before = _snapshot(run)
    code = main(
        [
            "unmask",
            "--masked",
            str(run / "out"),
            "--vault",
            str(run / "vault"),
            "--output",
            str(run / where),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "refusing" in err and len(err.strip().splitlines()) == 1
    assert _snapshot(run) == before  # nothing written, nothing chmod-ed
    assert (
        not (run / "vault" / "restored").exists() and not (run / "out" / "masked" / "sub").exists()
    )


def test_unmask_writes_0600_files_in_a_0700_folder_it_creates_and_accounts_for_refusals(
    run: Path, capsys
) -> None:
    refused_id = edit_masked(run, lambda row: row.update(masked_text=row["masked_text"] + "!"))
    assert unmask(run) == 1
    out, _ = summary(capsys)
    target = run / "restored"
    assert target.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in target.iterdir())
    refused = [json.loads(line) for line in (target / "_refused.jsonl").read_text().splitlines()]
    assert [(r["id"], r["reason"]) for r in refused] == [(refused_id, "masked_text_changed")]
    assert json.loads((target / "_unmask.json").read_text())["refused_by_reason"] == {
        "masked_text_changed": 1
    }
    restored = rows_of(target)
    assert len(restored) + len(refused) == len(IDS) == out["restored"] + out["refused"]
    # a rerun into its own earlier output replaces it
    assert unmask(run) == 1 and len(rows_of(target)) == len(restored)
    capsys.readouterr()


def test_unmask_leaves_an_existing_folder_mode_alone_and_refuses_a_non_empty_one(
    run: Path, capsys
) -> None:
    mine = run / "mine"
    mine.mkdir(mode=0o755)
    os.chmod(mine, 0o755)
    assert (
        main(
            [
                "unmask",
                "--masked",
                str(run / "out"),
                "--vault",
                str(run / "vault"),
                "--output",
                str(mine),
            ]
        )
        == 0
    )
    assert mine.stat().st_mode & 0o777 == 0o755  # before, chmod-ed to 0700: not this run's folder
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in mine.iterdir())
    busy = run / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert (
        main(
            [
                "unmask",
                "--masked",
                str(run / "out"),
                "--vault",
                str(run / "vault"),
                "--output",
                str(busy),
            ]
        )
        == 2
    )
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]
    capsys.readouterr()


def test_a_row_of_an_earlier_run_put_back_with_its_vault_file_is_refused(
    masked_run: Path, run: Path, capsys
) -> None:
    # an earlier run's output and vault file (its own run id); its masked row for d5 replaces the
    # later one, and its vault file sits in the later vault: each record is sound, but the output's
    # done-marker names the runs that wrote it, and that run is not one of them
    earlier = run / "earlier"
    run_mask_job(
        MaskJobConfig(str(masked_run / "in"), str(earlier / "out"), str(earlier / "vault"))
    )
    [old_file] = (earlier / "vault").glob("mask-*.jsonl")
    shutil.copy(old_file, run / "vault" / old_file.name)
    old_row = next(r for r in rows_of(earlier / "out" / "masked") if r["id"] == "d5")
    [part] = (run / "out" / "masked").glob("*.parquet")
    rows = [old_row if r["id"] == "d5" else r for r in pq.read_table(part).to_pylist()]
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(part)), part)
    assert unmask(run) == 1
    out, _ = summary(capsys)
    assert out["refused_by_reason"] == {"other_run": 1} and out["restored"] == len(IDS) - 1
    # the masked/ folder copied alone (no done-markers beside it): the check cannot be made, the row
    # restores
    shutil.copytree(run / "out" / "masked", run / "alone" / "masked")
    assert (
        main(
            [
                "unmask",
                "--masked",
                str(run / "alone"),
                "--vault",
                str(run / "vault"),
                "--output",
                str(run / "r2"),
            ]
        )
        == 0
    )
    capsys.readouterr()
