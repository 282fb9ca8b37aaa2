"""A trained person-name tagger over the morphemes the rule finders already read (CRF,
python-crfsuite).

One linear-chain CRF per language labels tokens ``B``/``I``/``O`` (inside a person name or not):
Japanese morphemes from fugashi + unidic-lite; Korean **characters**
(``spcl.extract.names.ko_chars``: KLUE's spans are character-level, names glue to particles and
words inside an eojeol), with the python-mecab-ko + mecab-ko-dic morphemes projected onto them and a
syllable gazetteer of the training split. Japanese features of a morpheme and of its neighbours at
±1 and ±2: surface, part of speech (unidic's four levels; mecab-ko's tag and its 인명/지명 semantic
class), character type, length, whether a space precedes it, honorifics and role words next to it
(さん/氏/容疑者, 씨/선수/의원 …), prefixes and suffixes, whether the rule finders of ``ja``/``ko``
put it in a name (so the CRF learns when to trust them), and of its unit (a run of glued katakana
and name dots in Japanese, an eojeol in Korean: :func:`_units`) its place in it, its size and the
words just before and after it — a long foreign name's context lies beyond ±2 morphemes; Japanese
also the classes of a katakana name gazetteer (``ja.gazetteer.json``, from JMnedict/JMdict: given
name, surname, part of a famous person's name, place, organisation, loanword) of each dotted part of
a katakana unit and of its neighbours, and kanji full names unidic does not tag 人名 (``薄熙来``)
matched across glued morphemes. A run of ``B``/``I`` morphemes is one name span; a morpheme is in
one where its marginal reaches the model card's per-language threshold. Only Japanese sentences with
a proper noun (unidic 固有名詞) or a rule-finder span are tagged (most sentences of manuals have
none); every Korean sentence with a Hangul syllable is (mecab-ko tags many names in reviews NNG: the
NNP gate lost 35 of ~530 dev mentions).

The models are crfsuite's own binary format (``models/names-crf/{ja,ko}.crfsuite``; loading executes
no code; the Korean gazetteer is ``ko.gazetteer.json``: syllable counts), trained on
``names-gold-v1`` by ``spcl train-names`` with a held-out split by id hash (:func:`split_of`); their
card is ``models/names-crf/model_card.json``. :func:`tagger_spans` returns ``None`` where the model,
python-crfsuite or the analyser is missing: the caller then falls back to the rule finders.
"""

from __future__ import annotations

import hashlib
import logging
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from spcl.extract.names import ja, ko, ko_chars
from spcl.extract.names.crf_features import Morph as Morph
from spcl.extract.names.crf_features import features
from spcl.resources import resolve_path

log = logging.getLogger("spcl.extract.names")

MODEL_DIR = Path("models/names-crf")
LANGS = ("ja", "ko")
HELD_OUT_SHARE = 5  # one id in five (by SHA-256) is held out


def split_of(record_id: str) -> str:
    """``heldout`` for one id in five by SHA-256, else ``train``: a pure function of the id."""
    return (
        "heldout"
        if hashlib.sha256(record_id.encode()).digest()[0] % HELD_OUT_SHARE == 0
        else "train"
    )


_JA_TAGS: dict[Any, str] = {}  # unidic POS levels → the pos string of a Morph


def analyse(text: str, lang: str) -> tuple[list[Morph], list[tuple[int, int]]] | None:
    """``(morphemes, rule-finder spans)`` of ``text`` for ``lang`` from one parse, or None without
    the analyser.

    Morphemes are ``(start, end, surface, pos)``; the rule finders
    (``spcl.extract.names.ja``/``ko``) read the same parse, so the tagger costs one analysis, not
    two.
    """
    if lang == "ja":
        try:
            words = ja.parse(text)
        except (ImportError, RuntimeError):
            return None
        out, pos = [], 0
        for w in words:
            found = text.find(w.surface, pos)
            if found < 0:
                continue
            f = w.feature
            tag = _JA_TAGS.get(f)
            if tag is None:
                tag = _JA_TAGS.setdefault(f, f"{f.pos1}|{f.pos2}|{f.pos3}|{f.pos4}")
            out.append((found, found + len(w.surface), w.surface, tag))
            pos = found + len(w.surface)
        return out, ja.ja_name_spans(text, words)

    parsed = ko.parse(text)
    if parsed is None:
        return None
    morphs = [
        (
            m.span.start,
            m.span.end,
            text[m.span.start : m.span.end],
            f"{m.feature.pos}|{m.feature.semantic or '*'}",
        )
        for m in parsed
    ]
    # the same parse (cached): the finder asks again right after
    return morphs, ko.ko_name_spans(text)


def labels(morphs: list[Morph], gold: list[tuple[int, int]]) -> list[str]:
    """``B``/``I``/``O`` of each morpheme for gold spans (a morpheme starting inside a span is
    inside it)."""
    out = []
    for start, _, _, _ in morphs:
        span = next(((s, e) for s, e in gold if s <= start < e), None)
        if span is None:
            out.append("O")
        else:
            out.append("I" if out and out[-1] != "O" and span[0] < start else "B")
    return out


def decode(morphs: list[Morph], tags: list[str]) -> list[tuple[int, int]]:
    """Spans of the runs of ``B``/``I`` morphemes (a ``B`` starts a new span)."""
    spans: list[tuple[int, int]] = []
    open_ = False
    for (start, end, _, _), tag in zip(morphs, tags, strict=True):
        if tag == "B" or (tag == "I" and not open_):
            spans.append((start, end))
            open_ = True
        elif tag == "I":
            spans[-1] = (spans[-1][0], end)
        else:
            open_ = False
    return spans


def threshold_tags(
    model: Any, tags: list[str], threshold: float, probs: list[float] | None = None
) -> list[str]:
    """Tags after ``model.tag``: a morpheme is in a name when its marginal P(B) + P(I) ≥
    ``threshold`` (``B`` where P(B) ≥ P(I)); 0.5 is close to the Viterbi path, lower finds more
    names. ``probs``: if given, each morpheme's P(B) + P(I) is appended to it."""
    known = set(model.labels())
    out = []
    for i in range(len(tags)):
        pb = model.marginal("B", i) if "B" in known else 0.0
        pi = model.marginal("I", i) if "I" in known else 0.0
        if probs is not None:
            probs.append(pb + pi)
        out.append("O" if pb + pi < threshold else ("B" if pb >= pi else "I"))
    return out


@lru_cache(maxsize=4)
def _model(lang: str, model_dir: str | None = None) -> Any | None:
    try:
        import pycrfsuite
    except ImportError:
        log.info("python-crfsuite is not installed: person names come from the rule finders")
        return None

    path = resolve_path(Path(model_dir or MODEL_DIR) / f"{lang}.crfsuite")
    if not path.is_file():
        log.info("no names tagger model for %s: rule finders only", lang)
        return None
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    return tagger


@lru_cache(maxsize=4)
def threshold(lang: str, model_dir: str | None = None) -> float:
    """The marginal threshold of ``lang`` in the model card (``thresholds``), 0.5 when the card
    has none."""
    import json

    card = resolve_path(Path(model_dir or MODEL_DIR) / "model_card.json")
    try:
        return float(
            json.loads(card.read_text(encoding="utf-8")).get("thresholds", {}).get(lang, 0.5)
        )
    except (OSError, ValueError):
        return 0.5


@lru_cache(maxsize=4)
def agree_threshold(lang: str, model_dir: str | None = None) -> float:
    """The marginal threshold of a CRF span that a rule-finder span overlaps (card
    ``thresholds_agree``), else the card's threshold: the two sources agreeing on a name need less
    of the CRF's confidence."""
    import json

    card = resolve_path(Path(model_dir or MODEL_DIR) / "model_card.json")
    try:
        value = json.loads(card.read_text(encoding="utf-8")).get("thresholds_agree", {}).get(lang)
    except (OSError, ValueError):
        value = None
    return threshold(lang, model_dir) if value is None else float(value)


def available(lang: str) -> bool:
    """Whether the tagger for ``lang`` can run here (python-crfsuite, its model and the
    analyser)."""
    return _model(lang) is not None and analyse("", lang) is not None


def tagger_spans(
    text: str, lang: str, model_dir: str | None = None, cut: float | None = None
) -> list[tuple[int, int]] | None:
    """Person-name spans of the ``lang`` CRF in NFC ``text``, or None where the tagger cannot run
    here.

    ``cut``: the marginal threshold (default: the model card's for ``lang``).
    """
    both = tagger_and_rule_spans(text, lang, model_dir, cut)
    return None if both is None else both[0]


def tagger_and_rule_spans(
    text: str, lang: str, model_dir: str | None = None, cut: float | None = None
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
    """``(CRF spans, rule-finder spans)`` of NFC ``text`` from one morphological parse, or None
    where the tagger cannot run here (the caller then runs the rule finders alone)."""
    scored = scored_spans(text, lang, model_dir, cut)
    return None if scored is None else ([(s, e) for s, e, _ in scored[0]], scored[1])


def scored_spans(
    text: str, lang: str, model_dir: str | None = None, floor: float | None = None
) -> tuple[list[tuple[int, int, float]], list[tuple[int, int]]] | None:
    """``(CRF spans with their score, rule-finder spans)`` of NFC ``text`` from one parse, or None
    where the tagger cannot run here. A span is a run of morphemes (Korean: characters) whose
    marginal P(B) + P(I) reaches ``floor`` (default: the card's threshold); its score is the lowest
    marginal in it."""
    model = _model(lang, model_dir)
    if model is None:
        return None
    analysed = analyse(text, lang)
    if analysed is None:
        return None
    morphs, rules = analysed
    cut = threshold(lang, model_dir) if floor is None else floor
    korean = lang == "ko"  # the Korean model labels characters (spcl.extract.names.ko_chars)
    gaz, technical = ko_gazetteer(model_dir) if korean else ({}, frozenset())
    gaz_ja = None if korean else ja_gazetteer(model_dir)
    spans: list[tuple[int, int, float]] = []
    for chunk in _sentences(text, morphs):
        if korean:
            if not _HANGUL.search(text, chunk[0][0], chunk[-1][1]):
                # Korean names glued to words are often tagged NNG, not NNP: every Hangul sentence
                continue
        elif not (_may_name(chunk) or any(s < chunk[-1][1] and chunk[0][0] < e for s, e in rules)):
            # no proper noun and no rule hit: skip tagging (most sentences of manuals and help text)
            continue
        if korean:
            idx = ko_chars.tokens(text, chunk[0][0], chunk[-1][1])
            tags = model.tag(ko_chars.features(text, idx, morphs, rules, gaz))
        else:
            tags = model.tag(features(text, chunk, rules, gaz_ja))
        probs: list[float] | None = None
        if cut < 0.5 or any(t != "O" for t in tags):  # from 0.5 up only Viterbi's names can pass
            probs = []
            tags = threshold_tags(model, tags, cut, probs)
        if korean:
            found = [
                (s, e)
                for s, e in ko_chars.decode(text, idx, tags)
                # 레이어, 페이지 여백: no names
                if not all(w in technical for w in text[s:e].split())
            ]
            starts = idx
        else:
            found = decode(chunk, tags)
            starts = [m[0] for m in chunk]
        for s, e in found:
            score = (
                1.0
                if probs is None
                else min(p for i, p in zip(starts, probs, strict=True) if s <= i < e)
            )
            spans.append((s, e, score))
    return spans, rules


@lru_cache(maxsize=4)
def ko_gazetteer(model_dir: str | None = None) -> tuple[dict[str, tuple[str, str]], frozenset[str]]:
    """The Korean CRF's syllable gazetteer (``ko.gazetteer.json`` beside its model, built from the
    training split by :func:`spcl.extract.names.ko_chars.build_gazetteer`) as feature buckets, and
    its technical words (nouns of the person-free training passages: never a name); empty when the
    file is missing."""
    import json

    path = resolve_path(Path(model_dir or MODEL_DIR) / "ko.gazetteer.json")
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        log.info("no Korean names gazetteer: the tagger runs without it")
        return {}, frozenset()
    technical = frozenset(table.pop("technical", ()))
    return ko_chars.gaz_lookup(table), technical


@lru_cache(maxsize=4)
def ja_gazetteer(model_dir: str | None = None) -> dict[str, str]:
    """The Japanese CRF's katakana name gazetteer (``ja.gazetteer.json`` beside its model, derived
    from JMnedict and JMdict by ``tools/datasets/ja_names_gazetteer.py``) as string → class letters
    (``g`` given, ``s`` surname, ``u`` unclassified name, ``p`` part of a full name, ``P`` full
    name, ``l`` place, ``o`` organisation or work, ``w`` JMdict loanword); empty when the file is
    missing (a model trained without one)."""
    return load_ja_gazetteer(Path(model_dir or MODEL_DIR) / JA_GAZETTEER)


JA_GAZETTEER = "ja.gazetteer.json"


def load_ja_gazetteer(path: Path) -> dict[str, str]:
    """String → sorted class letters of a ``ja.gazetteer.json`` (``{"classes": {CLASS: [STRING,
    …]}}``); empty when the file is missing or unreadable (logged, without its content)."""
    import json

    try:
        classes = json.loads(resolve_path(path).read_text(encoding="utf-8"))["classes"]
    except (OSError, ValueError, KeyError, TypeError):
        log.info("no Japanese names gazetteer: the tagger runs without it")
        return {}
    table: dict[str, str] = {}
    for c in sorted(classes):
        if not (isinstance(c, str) and len(c) == 1 and isinstance(classes[c], list)):
            continue
        for word in classes[c]:
            if isinstance(word, str):
                table[word] = table.get(word, "") + c
    return table


_SENTENCE_END = frozenset(("。", "！", "？", "!", "?", "."))
_HANGUL = re.compile(r"[가-힣]")


def _sentences(text: str, morphs: list[Morph]) -> list[list[Morph]]:
    """Morphemes cut into sentences: after a sentence-final mark, or where a line break lies
    between two."""
    out: list[list[Morph]] = []
    current: list[Morph] = []
    for m in morphs:
        if current and "\n" in text[current[-1][1] : m[0]]:
            out.append(current)
            current = []
        current.append(m)
        if m[2] in _SENTENCE_END:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def _may_name(chunk: list[Morph]) -> bool:
    """Whether a sentence has a proper noun (unidic 固有名詞, mecab-ko NNP): the gate before
    tagging it."""
    return any("固有名詞" in m[3] or m[3].startswith("NNP") for m in chunk)
