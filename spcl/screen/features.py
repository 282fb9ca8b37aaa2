"""Hashed bag-of-token features with a stored IDF, built from integer arrays with NumPy.

Every token becomes a 64-bit key, computed without a Python call per token:

- MeCab words (Japanese): the wakati strings of a batch are joined, turned into a code-point array
  (UTF-32) and each space-delimited word gets a polynomial hash from prefix sums (mod 2**64);
- SentencePiece ids (the other languages): the id itself is the key, no string is hashed at all;
- whole Latin words of SentencePiece-routed documents (English fragments into pieces when the
  SentencePiece model is trained mostly on Korean and Japanese), hashed like MeCab words;
- word bigrams combine the keys of neighbours; optional character n-grams pack code points.

Keys are mixed (splitmix64) and their top ``bits`` bits are the column, so inference needs no
vocabulary. Columns: ``[0, 2**bits)`` hashed tokens, then one dense column per lexicon kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np
import scipy.sparse as sp
from pydantic import field_validator

from spcl.config_models import TrainerSettings
from spcl.screen.lexicon import LEXICON_KINDS
from spcl.screen.person_cue import CUE_COLUMNS, PersonCues
from spcl.screen.token_keys import (
    _SALT_LATIN,
    _SALT_SP,
    _U64,
    _mix64_inplace,
    bigram_keys,
    char_ngram_keys,
    japanese_char_keys,
    latin_word_keys,
    latin_words,
    mix64,
    word_keys,
)
from spcl.screen.tokenize import MECAB_DICTIONARIES, Tokenizers, route

__all__ = [
    "FeatureSettings",
    "Featurizer",
    "bigram_keys",
    "char_ngram_keys",
    "count_matrix",
    "fit_idf",
    "japanese_char_keys",
    "latin_word_keys",
    "latin_words",
    "mix64",
    "tfidf",
    "word_keys",
]
"""The feature API; the token-key functions live in :mod:`spcl.screen.token_keys` and are
re-exported here."""

_LEX_ENGINES = ("mecab", "chars", "sp", "char", "latin")
_BLOOM_BITS = 20
_FIB = _U64(0x9E3779B97F4A7C15)


class FeatureSettings(TrainerSettings):
    """How texts become columns; stored in the model card and checked when a model loads."""

    bits: int = 18
    """Hashed width is ``2**bits`` columns."""
    word_bigrams: bool = True
    """Add bigrams of neighbouring words / pieces."""
    char_ngrams: tuple[int, ...] = ()
    """Optional character n-gram orders (1–3) for every language."""
    sp_vocab_size: int = 8000
    """Requested SentencePiece vocabulary (grows to cover the training characters)."""
    max_chars: int = 100_000
    """Only the first ``max_chars`` characters of a document are tokenized (rules see
    everything)."""
    sublinear_tf: bool = True
    """Use ``1 + log(tf)`` instead of raw counts."""
    lexicon: bool = True
    """Append lexicon hit counts (``log1p``) as dense columns."""
    mecab_dic: str = "unidic-lite"
    """MeCab dictionary of the Japanese word tokens (``unidic-lite``, ``ipadic``, ``none``: Japanese
    through SentencePiece, or ``chars``: Japanese as character uni- and bigrams of their own, no
    MeCab); a model's tokens depend on it, so it is a training setting, recorded in the card when
    not the default."""

    person_cues: bool = False
    """Append the person-cue columns (:mod:`spcl.screen.person_cue`: a topic word and a
    first-person, named or family cue in one sentence) to the lexicon block; recorded in the card
    only when on."""

    @field_validator("mecab_dic")
    @classmethod
    def _known_dictionary(cls, value: str) -> str:
        if value not in MECAB_DICTIONARIES:
            raise ValueError(f"must be one of {', '.join(MECAB_DICTIONARIES)}")
        return value

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form for the model card (``mecab_dic`` only when not the default, so cards of
        unidic-lite models read as before)."""
        d = self.model_dump()
        d["char_ngrams"] = list(self.char_ngrams)
        if self.mecab_dic == "unidic-lite":
            del d["mecab_dic"]
        if not self.person_cues:
            del d["person_cues"]
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FeatureSettings:
        """Inverse of :meth:`to_json`; an unknown key or a bad value raises
        :class:`~spcl.config_models.ConfigError` naming the key."""
        return cls(**data)


class Featurizer:
    """Texts → hashed token counts (CSR) and lexicon counts, for one worker.

    Lexicon terms become 64-bit keys once: Japanese/Korean terms of two or more characters the key
    of their first (up to) three characters, matched against every character 2-/3-gram of a document
    (substring match, so Korean particles and Japanese compounds do not hide a term); Latin terms
    the key of one whole word or of a word bigram; one-character CJK terms the key of one token. A
    document's count for a kind is the number of matching keys (sorted-array lookups, no regex).
    """

    def __init__(
        self,
        settings: FeatureSettings,
        tokenizers: Tokenizers,
        lexicon: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    ) -> None:
        self.settings = settings
        # the words must come from the model's dictionary
        if tokenizers.mecab_dic != settings.mecab_dic:
            tokenizers = Tokenizers(tokenizers.sp_model, settings.mecab_dic)
        self.tokenizers = tokenizers
        self._shift = _U64(64 - settings.bits)
        self._lex_keys = {e: np.zeros(0, _U64) for e in _LEX_ENGINES}
        self._lex_mask = {e: np.zeros(0, np.uint8) for e in _LEX_ENGINES}
        self._lex_filter = {e: np.zeros(1 << _BLOOM_BITS, bool) for e in _LEX_ENGINES}
        self._head_first_char = np.zeros(0x110000, bool)  # first characters of the CJK terms' heads
        self._use_lex = bool(settings.lexicon and lexicon)
        if self._use_lex and lexicon is not None:
            self._build_lexicon(lexicon)
        self._cues = (
            PersonCues(lexicon) if self._use_lex and settings.person_cues and lexicon else None
        )

    def _build_lexicon(self, lexicon: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
        table: dict[str, dict[int, int]] = {e: {} for e in _LEX_ENGINES}
        for lang, kinds in lexicon.items():
            engine = route(lang, self.settings.mecab_dic)
            for kind, terms in kinds.items():
                bit = 1 << LEXICON_KINDS.index(kind)
                for term in terms:
                    term = term.lower().strip()
                    if term.isascii():
                        # Latin terms match whole words (one word, or the first two words).
                        key, target = self._latin_key(term), "latin"
                    elif len(term) >= 2:
                        # CJK terms match as a substring: the key of their first (up to) 3
                        # characters.
                        head = term[:3]
                        k, _ = char_ngram_keys([head], (len(head),))
                        self._head_first_char[ord(head[0])] = True
                        key, target = (int(k[0]) if k.size else None), "char"
                    else:
                        key, target = self._term_key(term, engine), engine
                    if key is not None:
                        table[target][key] = table[target].get(key, 0) | bit
        for engine, mapping in table.items():
            keys = np.array(sorted(mapping), dtype=_U64)
            self._lex_keys[engine] = keys
            self._lex_mask[engine] = np.array([mapping[int(k)] for k in keys], np.uint8)
            self._lex_filter[engine][_filter_slots(keys)] = True

    @staticmethod
    def _phrase_key(k: np.ndarray, d: np.ndarray) -> int | None:
        """The column key of a lexicon term's tokens: its word key, or its first bigram's key."""
        if k.size == 0:
            return None
        if k.size == 1:
            return int(k[0])
        bk, _ = bigram_keys(k[:2], d[:2])
        return int(bk[0])

    @classmethod
    def _latin_key(cls, term: str) -> int | None:
        return cls._phrase_key(*word_keys([latin_words(term)]))

    def _term_key(self, term: str, engine: str) -> int | None:
        if not term.strip():
            return None
        if engine == "mecab":
            k, d = word_keys(self.tokenizers.wakati([term]))
        elif engine == "chars":
            k, d = japanese_char_keys([term], (1,))
        else:
            ids = self.tokenizers.pieces([term])[0]
            k = np.asarray(ids, np.int64).astype(_U64) + _SALT_SP
            d = np.zeros(k.size, np.int64)
        return self._phrase_key(k, d)

    @property
    def width(self) -> int:
        """Total columns: hashed block plus the lexicon block."""
        return (1 << self.settings.bits) + self._dense_width()

    def _dense_width(self) -> int:
        if not self._use_lex:
            return 0
        return len(LEXICON_KINDS) + (len(CUE_COLUMNS) if self._cues is not None else 0)

    def _lex_hits(self, engine: str, keys: np.ndarray, docs: np.ndarray, out: np.ndarray) -> None:
        lex = self._lex_keys[engine]
        if not self._use_lex or lex.size == 0 or keys.size == 0:
            return
        # cheap pre-filter: most keys are no term
        maybe = self._lex_filter[engine][_filter_slots(keys)]
        keys, docs = keys[maybe], docs[maybe]
        if keys.size == 0:
            return
        idx = np.searchsorted(lex, keys)
        idx[idx == lex.size] = 0
        hit = lex[idx] == keys
        if not hit.any():
            return
        masks = self._lex_mask[engine][idx[hit]]
        hd = docs[hit]
        for k in range(out.shape[1]):
            sel = (masks >> k) & 1
            if sel.any():
                out[:, k] += np.bincount(hd, weights=sel, minlength=out.shape[0]).astype(np.float32)

    def featurize(
        self, texts: Sequence[str], langs: Sequence[str]
    ) -> tuple[sp.csr_matrix, np.ndarray]:
        """Raw token counts, shape ``(n, 2**bits)`` float32 canonical CSR, and lexicon counts
        ``(n, kinds)``."""
        s = self.settings
        n = len(texts)
        lex = np.zeros((n, len(LEXICON_KINDS) if self._use_lex else 0), np.float32)
        prepared = [t[: s.max_chars].lower() for t in texts]
        engines = [route(lang, s.mecab_dic) for lang in langs]
        ja_idx = [i for i, e in enumerate(engines) if e == "mecab"]
        chars_idx = [i for i, e in enumerate(engines) if e == "chars"]
        sp_idx = [i for i, e in enumerate(engines) if e == "sp"]
        keys_parts: list[np.ndarray] = []
        doc_parts: list[np.ndarray] = []
        if chars_idx:
            k, d = japanese_char_keys([prepared[i] for i in chars_idx])
            d = np.asarray(chars_idx, np.int64)[d] if d.size else d
            keys_parts.append(k)
            doc_parts.append(d)
            self._lex_hits("chars", k, d, lex)
        for engine, idx in (("mecab", ja_idx), ("sp", sp_idx)):
            if not idx:
                continue
            if engine == "mecab":
                k, d = word_keys(self.tokenizers.wakati([prepared[i] for i in idx]))
                d = np.asarray(idx, np.int64)[d] if d.size else d
            else:
                ids = self.tokenizers.pieces([prepared[i] for i in idx])
                lens = np.fromiter(map(len, ids), np.int64, len(ids))
                flat = np.fromiter(chain.from_iterable(ids), np.int64, int(lens.sum()))
                k = flat.astype(_U64) + _SALT_SP
                d = np.repeat(np.asarray(idx, np.int64), lens)
            keys_parts.append(k)
            doc_parts.append(d)
            if engine == "sp":
                # Whole Latin words as extra tokens: SentencePiece pieces of English are often short
                # fragments when the training texts are mostly Korean and Japanese.
                wk, wd = latin_word_keys([prepared[i] for i in idx])
                wd = np.asarray(idx, np.int64)[wd] if wd.size else wd
                keys_parts.append(wk ^ _SALT_LATIN)
                doc_parts.append(wd)
                self._lex_hits("latin", wk, wd, lex)
                wbk, wbd = bigram_keys(wk, wd)
                self._lex_hits("latin", wbk, wbd, lex)
            bk, bd = bigram_keys(k, d)
            if s.word_bigrams:
                keys_parts.append(bk)
                doc_parts.append(bd)
            self._lex_hits(engine, k, d, lex)
            self._lex_hits(engine, bk, bd, lex)
        if s.char_ngrams:
            k, d = char_ngram_keys(prepared, s.char_ngrams)
            keys_parts.append(k)
            doc_parts.append(d)
        if self._use_lex and self._lex_keys["char"].size:
            # where a head can start
            k, d = char_ngram_keys(prepared, (2, 3), self._head_first_char)
            self._lex_hits("char", k, d, lex)
        if self._cues is not None:
            topic_hit = lex[:, :4].sum(axis=1) > 0  # MEDICAL, CRIME, DISABILITY, OTHER
            lex = np.hstack([lex, self._cues.counts(prepared, langs, topic_hit)])
        if not keys_parts:
            return sp.csr_matrix((n, 1 << s.bits), dtype=np.float32), lex
        cols = _mix64_inplace(np.concatenate(keys_parts).astype(_U64, copy=False))
        cols >>= self._shift
        return count_matrix(np.concatenate(doc_parts), cols, n, s.bits), lex


def _filter_slots(keys: np.ndarray) -> np.ndarray:
    """Slots of a ``2**_BLOOM_BITS`` pre-filter table (Fibonacci hashing of the keys)."""
    with np.errstate(over="ignore"):
        return ((keys * _FIB) >> _U64(64 - _BLOOM_BITS)).astype(np.intp)


def count_matrix(docs: np.ndarray, cols: np.ndarray, n: int, bits: int) -> sp.csr_matrix:
    """Canonical float32 CSR ``(n, 2**bits)`` counting each ``(docs[i], cols[i])`` pair (sorted,
    summed).

    >>> count_matrix(np.array([1, 0, 1]), np.array([3, 2, 3]), 2, 2).toarray().tolist()
    [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 2.0]]
    """
    width = 1 << bits
    code: np.ndarray
    if n << bits <= 1 << 32:  # a batch's (doc, col) code fits 32 bits: half the memory to sort
        code = (np.asarray(docs, np.uint32) << np.uint32(bits)) | np.asarray(cols, np.uint32)
    else:
        code = (np.asarray(docs, np.int64) << bits) | np.asarray(cols, np.int64)
    code.sort()
    first = np.empty(code.size, bool)
    first[:1] = True
    np.not_equal(code[1:], code[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    unique = code[starts]
    counts = np.empty(starts.size, np.float32)
    if starts.size:
        counts[:-1] = np.diff(starts)
        counts[-1] = code.size - starts[-1]
    indptr = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(unique >> bits, minlength=n), out=indptr[1:])
    indices = (unique & (width - 1)).astype(np.int32)
    mat = sp.csr_matrix((counts, indices, indptr), shape=(n, width))
    mat.has_canonical_format = True
    return mat


def fit_idf(counts: sp.csr_matrix) -> np.ndarray:
    """Smoothed IDF ``ln((1 + n) / (1 + df)) + 1`` per column (float32)."""
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
    return (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)


def tfidf(
    counts: sp.csr_matrix, idf: np.ndarray, lex: np.ndarray, sublinear: bool = True
) -> sp.csr_matrix:
    """L2-normalised TF-IDF rows with ``log1p`` lexicon counts appended as extra columns."""
    mat = counts.astype(np.float32, copy=True)
    if sublinear:
        np.log(mat.data, out=mat.data)
        mat.data += 1.0
    mat.data *= idf[mat.indices]
    lengths = np.diff(mat.indptr)
    rows = np.repeat(np.arange(mat.shape[0]), lengths)
    norms = np.sqrt(
        np.bincount(rows, weights=mat.data.astype(np.float64) ** 2, minlength=mat.shape[0])
    )
    norms = norms.astype(np.float32)
    norms[norms == 0] = 1.0
    mat.data /= np.repeat(norms, lengths)
    if lex.shape[1] == 0:
        return mat
    dense = sp.csr_matrix(np.log1p(lex).astype(np.float32))
    return sp.hstack([mat, dense], format="csr", dtype=np.float32)
