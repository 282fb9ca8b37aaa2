"""The encrypted mapping vault (issue 4 §4)."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from spcl.cli import main
from spcl.mask.vault import (
    KEY_ENV,
    KEY_FILE_ENV,
    RecordError,
    VaultError,
    VaultKeyError,
    open_vault,
    read_key_file,
    write_key_file,
)

SECRET = {"[PERSON_1]": "김가상", "[PHONE_1]": "010-0000-1234", "[EMAIL_1]": "kim1@mailbox.com"}
KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)


def test_put_get_iterate_round_trip(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v", KEY) as vault:
        vault.put("doc-1", SECRET)
        vault.put("doc-2", {})
    reader = open_vault(tmp_path / "v", KEY)
    assert reader.get("doc-1") == SECRET and reader.get("doc-2") == {}
    assert list(reader) == [("doc-1", SECRET), ("doc-2", {})]
    assert "doc-1" in reader and len(reader) == 2 and reader.ids() == ["doc-1", "doc-2"]
    with pytest.raises(KeyError):
        reader.get("doc-3")


def test_ciphertext_files_hold_no_plaintext_value(tmp_path: Path) -> None:
    with open_vault(tmp_path, KEY, writer="w0") as vault:
        for i in range(20):
            vault.put(f"doc-{i}", SECRET)
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for value in SECRET.values():
        assert value.encode() not in blob
        assert json.dumps(value).encode() not in blob
        assert base64.b64encode(value.encode()) not in blob
    assert b"[PERSON_1]" not in blob  # not even the token names
    assert b"doc-7" in blob  # ids are not secret


def test_parallel_writers_use_separate_files(tmp_path: Path) -> None:
    a, b = open_vault(tmp_path, KEY, writer="task-0"), open_vault(tmp_path, KEY, writer="task-1")
    a.put("a", {"[PERSON_1]": "A"})
    b.put("b", {"[PERSON_1]": "B"})
    a.close()
    b.close()
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["task-0.jsonl", "task-1.jsonl"]
    assert dict(open_vault(tmp_path, KEY)) == {"a": {"[PERSON_1]": "A"}, "b": {"[PERSON_1]": "B"}}


def test_wrong_key_fails_clearly(tmp_path: Path) -> None:
    with open_vault(tmp_path, KEY) as vault:
        vault.put("doc-1", SECRET)
    with pytest.raises(VaultKeyError, match="wrong vault key") as err:
        open_vault(tmp_path, bytes(32))
    assert "김가상" not in str(err.value)


def test_missing_or_malformed_key_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(VaultKeyError, match=f"no vault key: set {KEY_ENV}"):
        open_vault(tmp_path)
    monkeypatch.setenv(KEY_ENV, "not-a-key")
    with pytest.raises(VaultKeyError, match="32 bytes") as err:
        open_vault(tmp_path)
    assert "not-a-key" not in str(err.value)
    with pytest.raises(VaultKeyError, match="32 bytes"):
        open_vault(tmp_path, b"short")


def test_record_moved_to_another_id_fails(tmp_path: Path) -> None:
    with open_vault(tmp_path, KEY, writer="w") as vault:
        vault.put("doc-1", SECRET)
        vault.put("doc-2", {"[PERSON_1]": "other"})
    path = tmp_path / "w.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs[0]["id"], recs[1]["id"] = "doc-2", "doc-1"  # swap the ciphertexts' ids
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(VaultKeyError, match="doc-1") as err:
        open_vault(tmp_path, KEY).get("doc-1")
    assert "김가상" not in str(err.value)


def test_malformed_record_names_file_and_line(tmp_path: Path) -> None:
    with open_vault(tmp_path, KEY, writer="w") as vault:
        vault.put("doc-1", SECRET)
    with open(tmp_path / "w.jsonl", "a") as fh:
        fh.write('{"id": "doc-2", "nonce": \n')
    with pytest.raises(VaultError, match=r"w\.jsonl:2"):
        open_vault(tmp_path, KEY).get("doc-1")


def test_key_from_env_and_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = write_key_file(tmp_path / "vault.key")
    with open_vault(tmp_path / "v", key_file) as vault:  # constructor argument: a key file path
        vault.put("doc-1", SECRET)
    monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
    assert open_vault(tmp_path / "v").get("doc-1") == SECRET
    monkeypatch.delenv(KEY_FILE_ENV)
    monkeypatch.setenv(KEY_ENV, read_key_file(key_file).hex())  # hex works as well as base64
    assert open_vault(tmp_path / "v").get("doc-1") == SECRET


def test_keygen_command_writes_0600_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "k.key"
    assert main(["vault", "keygen", "--output", str(out)]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    key = read_key_file(out)
    assert len(key) == 32 and base64.b64encode(key).decode() not in capsys.readouterr().out
    assert main(["vault", "keygen", "--output", str(out)]) == 1
    assert read_key_file(out) == key


# -- issue 21: version-2 records (round-trip hashes, non-NFC originals) and tolerant reading of one
# writer file

SOURCE = "김가상 010-0000-1234"
MASKED = "[PERSON_1] [PHONE_1]"


def test_round_trip_record_holds_keyed_hashes_and_the_original_encrypted(tmp_path: Path) -> None:
    # not NFC: kept, encrypted, so unmask can give it back
    original = "\u1100\u1161상 010-0000-1234"
    with open_vault(tmp_path, KEY, writer="w") as vault:
        vault.put("doc-1", SECRET, source=SOURCE, masked=MASKED, original=original)
        vault.put("doc-2", SECRET, source=SOURCE, masked=MASKED, original=SOURCE)
    reader = open_vault(tmp_path, KEY)
    one, two = reader.record("doc-1", "w"), reader.record("doc-2", "w")
    assert (
        one.mapping == SECRET
        and one.verifiable
        and one.original == original
        and two.original is None
    )
    assert reader.mac_matches(one.source_mac, "source", SOURCE) and reader.mac_matches(
        one.masked_mac, "masked", MASKED
    )
    assert not reader.mac_matches(one.masked_mac, "masked", MASKED + " ")
    assert not reader.mac_matches(one.source_mac, "masked", SOURCE)  # roles are kept apart
    other = open_vault(tmp_path / "other", bytes(32))
    # keyed, not a plain hash
    assert other.text_mac("source", SOURCE) != reader.text_mac("source", SOURCE)
    blob = (tmp_path / "w.jsonl").read_bytes()
    assert reader.text_mac("source", SOURCE).encode() not in blob and b"010-0000-1234" not in blob
    assert "SECRET" not in repr(one) and "김가상" not in repr(one)


def test_a_round_trip_record_cannot_be_downgraded_to_an_unverified_one(tmp_path: Path) -> None:
    with open_vault(tmp_path, KEY, writer="w") as vault:
        vault.put("doc-1", SECRET, source=SOURCE, masked=MASKED)
    path = tmp_path / "w.jsonl"
    rec = json.loads(path.read_text())
    del rec["v"]  # pretend it is an old record, to skip the hash checks
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(RecordError) as err:
        open_vault(tmp_path, KEY).record("doc-1", "w")
    assert err.value.reason == "auth_failed" and isinstance(err.value, VaultKeyError)


def test_one_writer_file_is_read_tolerantly_with_true_reasons(tmp_path: Path) -> None:
    with open_vault(tmp_path, KEY, writer="w") as vault:
        for i in range(4):
            vault.put(f"doc-{i}", SECRET, source=SOURCE, masked=MASKED)
    path = tmp_path / "w.jsonl"
    lines = path.read_text().splitlines()
    bad_b64 = json.loads(lines[1])
    bad_b64["nonce"] = "%%%"
    lines[1] = json.dumps(bad_b64)
    lines.append(lines[2])  # doc-2 twice
    lines.append('{"id": "doc-9", "nonce": "AAAA", "cipher')  # truncated
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "notes.jsonl").write_text("not a record\n")
    reader = open_vault(tmp_path, KEY)
    assert reader.get("doc-0", writer="w") == SECRET and reader.get("doc-3", writer="w") == SECRET
    reasons = {}
    for doc_id, writer in (
        ("doc-1", "w"),
        ("doc-2", "w"),
        ("doc-7", "w"),
        ("doc-0", "gone"),
        ("doc-0", "../w"),
    ):
        with pytest.raises(RecordError) as err:
            reader.record(doc_id, writer)
        reasons[doc_id, writer] = err.value.reason
        assert "김가상" not in str(err.value)
    assert reasons == {
        ("doc-1", "w"): "corrupt_record",
        ("doc-2", "w"): "ambiguous_mapping",
        ("doc-7", "w"): "corrupt_record",
        ("doc-0", "gone"): "missing_vault_file",
        ("doc-0", "../w"): "bad_vault_file",
    }
    assert reader.corrupt_lines("w") == [2, 6]
    # the whole-vault reader stays strict
    with pytest.raises(VaultError, match="malformed vault record"):
        reader.get("doc-0")
