"""The two-stage loop over a batch of documents: candidates, inference attack, choice, assembly,
release check.

For each entity of each document (``spcl.generalize.spans.collect_spans``), in order of first
mention:

1. **Candidates.** PERSON and identifiers get a label (``[TYPE_n]``, the masker's allocator). Dates,
   ages, addresses and kinship words take their rule ladder (``spcl.generalize.ladders``); every
   other type asks the LLM once (one-shot prompt, ``m`` candidates, most → least specific).
   Candidates that contain the original, another entity's value, a rule-hit value, brackets or a
   token-shaped string are dropped before anyone sees them.
2. **Attack.** For candidate ``k`` the LLM sees the edited document D′ (entities already decided
   carry their choice, undecided ones their most specific candidate, the target its candidate ``k``
   in ``[[…]]``) and makes ``p`` guesses. The first candidate none of whose guesses MATCH the
   original is chosen (``spcl.generalize.select.choose``); when all are guessed, or none is left,
   the label is used.
3. **Release check** on the assembled text: every rule hit lies inside a replaced span, no original
   value of an entity or a hit occurs in the output, and the detectors find nothing in the output. A
   document that fails it, or whose LLM call failed, is not released (``reason`` says why).

With no chat client (``--backend rules``) there is no attack: ladders take the configured default
rung (``rules_rungs``), everything else a label. Requests of all documents of a batch go out
together (one stage-1 batch, then one attack round per candidate step); stage-1 answers are cached
by (type, value, lang) and attack answers by the exact prompt, so repeated entities and duplicate
documents cost no calls.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from spcl.config import GeneralizeSettings
from spcl.extract.backends.chat import ChatClient, ChatReply, ChatRequest
from spcl.generalize.ladders import LABEL_TYPES, ladder
from spcl.generalize.outcome import Decision, DocInput, DocResult, release_check, restore
from spcl.generalize.prompts import (
    attack_messages,
    candidate_messages,
    mark,
    read_items,
    sentence_around,
)
from spcl.generalize.select import choose
from spcl.mask.tokens import TOKEN_RE, TokenAllocator, reserved_tokens

DEFAULT_RULES_RUNGS: dict[str, str] = {
    "DOB": "year", "DATETIME": "year", "DATE": "year", "AGE": "band10", "QUANTITY": "band10",
    "ADDRESS": "district", "LOC": "district", "REL": "family",
}  # fmt: skip
"""``--backend rules``: the rung each ladder type takes (``label`` for a label); other types get
labels. The method's parameters are :class:`spcl.config.GeneralizeSettings` (re-exported here)."""


@dataclass(slots=True)
class _State:
    doc: DocInput
    result: DocResult
    decisions: list[Decision]
    pending: list[int]  # entity indices still to attack, in order
    k: int = 0  # candidate index under attack for pending[0]


class _LRU(OrderedDict[Any, Any]):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


def _usable(cand: str, forbidden: list[str]) -> bool:
    """A candidate is usable when it is one short line that leaks no forbidden value and holds no
    markup."""
    if (
        not cand
        or len(cand) > 200
        or "\n" in cand
        or "[[" in cand
        or "]]" in cand
        or TOKEN_RE.search(cand)
    ):
        return False
    low = cand.casefold()
    return not any(v and v.casefold() in low for v in forbidden)


class Generalizer:
    """Runs the method over batches of documents with one chat client (``None``: the rules
    backend)."""

    def __init__(self, chat: ChatClient | None, settings: GeneralizeSettings | None = None):
        self.chat = chat
        self.settings = settings or GeneralizeSettings()
        self._cand_cache: _LRU = _LRU(self.settings.cache_size)
        self._attack_cache: _LRU = _LRU(self.settings.cache_size)

    # -- planning
    # -------------------------------------------------------------------------------------
    def _plan(self, doc: DocInput, forbidden: list[str]) -> tuple[list[Decision], list[int]]:
        """Decisions known without a model, and the entities that need LLM candidates."""
        decisions: list[Decision] = []
        need_llm: list[int] = []
        for i, ent in enumerate(doc.entities):
            dec = Decision(ent.type)
            decisions.append(dec)
            if ent.type in LABEL_TYPES:
                continue
            lad = ladder(ent.type, ent.value, doc.lang)
            if self.chat is None:
                rung = self.settings.rules_rungs.get(ent.type, "label")
                idx = lad.rung(rung) if lad is not None else None
                if lad is not None and idx is not None and _usable(lad.candidates[idx], forbidden):
                    dec.replacement, dec.kind, dec.rank, dec.source = (
                        lad.candidates[idx],
                        "generalized",
                        idx,
                        "rules",
                    )
                else:
                    dec.source = "fallback" if lad is not None else "label_type"
                continue
            if lad is not None:
                dec.candidates = tuple(c for c in lad.candidates if _usable(c, forbidden))
                dec.source = "ladder"
            else:
                dec.source = "llm"
                need_llm.append(i)
        return decisions, need_llm

    def _request(self, messages: list[dict[str, str]], temperature: float) -> ChatRequest:
        s = self.settings
        return ChatRequest.of(
            messages, temperature=temperature, max_tokens=s.max_tokens, seed=s.seed
        )

    def _batch(
        self, states: list[_State], jobs: list[tuple[int, Any, str, ChatRequest]], cache: _LRU
    ) -> list[tuple[int, Any, str | None, str | None]]:
        """Send the uncached requests of ``jobs`` (``(state, tag, cache key, request)``) as one
        batch.

        Returns ``(state, tag, text, error)`` per job; a key seen twice is sent once (the second is
        a hit).
        """
        todo: dict[str, ChatRequest] = {}
        for _, _, key, req in jobs:
            if key not in cache and key not in todo:
                todo[key] = req
        replies: list[ChatReply] = []
        if todo:
            assert self.chat is not None  # only the model path (a chat client) builds jobs to ask
            replies = self.chat.complete(list(todo.values()))
        fresh = dict(zip(todo, replies, strict=True))
        out = []
        for si, tag, key, _ in jobs:
            res = states[si].result
            rep = fresh.pop(key, None)
            if rep is not None:
                res.llm_calls += 1
                res.tokens += rep.tokens or 0
                res.prompt_tokens += rep.prompt_tokens or 0
                res.counted = res.counted or rep.tokens is not None or rep.prompt_tokens is not None
                res.seconds += rep.seconds
                if rep.ok:
                    cache.put(key, rep.text)
                out.append((si, tag, rep.text, rep.error))
            elif key in cache:
                res.cache_hits += 1
                out.append((si, tag, cache[key], None))
            else:  # the same request failed earlier in this batch
                out.append((si, tag, None, "no_output"))
        return out

    # -- the loop
    # -------------------------------------------------------------------------------------
    def run(self, docs: list[DocInput]) -> list[DocResult]:
        """Generalize a batch of documents; one :class:`DocResult` per document, in order."""
        states: list[_State] = []
        for doc in docs:
            forbidden = [e.value for e in doc.entities] + [doc.text[a:b] for _, a, b in doc.hits]
            decisions, need_llm = self._plan(doc, forbidden)
            states.append(_State(doc, DocResult(doc.id, decisions=decisions), decisions, need_llm))
        if self.chat is not None:
            self._stage1(states)  # st.pending holds the stage-1 entities until here
            for st in states:
                st.pending = [
                    i for i, d in enumerate(st.decisions) if d.source in ("ladder", "llm")
                ]
                for i in st.pending:
                    if not st.decisions[i].candidates:
                        st.decisions[i].source = "fallback"
                st.pending = [i for i in st.pending if st.decisions[i].candidates]
            self._stage2(states)
        return [self._finish(st) for st in states]

    def _stage1(self, states: list[_State]) -> None:
        """Ask for candidates of every entity without a ladder, all documents in one batch.

        The cache key is (type, value, lang): the first context an entity is seen in decides its
        candidates.
        """
        s = self.settings
        jobs: list[tuple[int, Any, str, ChatRequest]] = []
        for si, st in enumerate(states):
            for i in st.pending:
                ent = st.doc.entities[i]
                sent, a, b = sentence_around(st.doc.text, *ent.mentions[0])
                req = self._request(
                    candidate_messages(mark(sent, [(a, b)]), ent.type, s.candidates), s.temperature
                )
                key = hashlib.sha256(
                    f"{ent.type}\x00{ent.value}\x00{st.doc.lang}".encode()
                ).hexdigest()
                jobs.append((si, i, key, req))
        for si, i, text, error in self._batch(states, jobs, self._cand_cache):
            st = states[si]
            dec = st.decisions[i]
            dec.calls += 1
            if error is not None:
                st.result.reason = st.result.reason or f"candidates:{error}"
                continue
            forbidden = [e.value for e in st.doc.entities] + [
                st.doc.text[a:b] for _, a, b in st.doc.hits
            ]
            dec.candidates = tuple(
                c for c in read_items(text or "", s.candidates) if _usable(c, forbidden)
            )

    def _edited(self, st: _State, target: int, cand: str) -> str:
        """D′: decided entities carry their choice, undecided their most specific candidate, the
        target ``cand``."""
        text = st.doc.text
        pieces: list[tuple[int, int, str, bool]] = []
        for i, ent in enumerate(st.doc.entities):
            dec = st.decisions[i]
            if i == target:
                rep = cand
            elif i in st.pending:
                rep = dec.candidates[0] if dec.candidates else f"[{ent.type}]"
            else:
                rep = dec.replacement or f"[{ent.type}]"
            pieces += [(a, b, rep, i == target) for a, b in ent.mentions]
        pieces.sort()
        out, pos, first = [], 0, None
        for a, b, rep, is_target in pieces:
            out.append(text[pos:a])
            if is_target:
                first = first if first is not None else sum(len(x) for x in out)
                out.append(f"[[{rep}]]")
            else:
                out.append(rep)
            pos = b
        out.append(text[pos:])
        edited = "".join(out)
        limit = self.settings.context_chars
        if len(edited) > limit and first is not None:
            lo = max(0, min(first - limit // 2, len(edited) - limit))
            edited = edited[lo : lo + limit]
        return edited

    def _stage2(self, states: list[_State]) -> None:
        s = self.settings
        while True:
            jobs: list[tuple[int, Any, str, ChatRequest]] = []
            for si, st in enumerate(states):
                if st.result.reason is not None or not st.pending:
                    continue
                i = st.pending[0]
                dec = st.decisions[i]
                msgs = attack_messages(
                    self._edited(st, i, dec.candidates[st.k]), st.doc.entities[i].type, s.guesses
                )
                req = self._request(msgs, s.attack_temperature)
                key = hashlib.sha256(
                    repr((req.messages, req.temperature, req.seed)).encode()
                ).hexdigest()
                jobs.append((si, i, key, req))
            if not jobs:
                return
            for si, i, text, error in self._batch(states, jobs, self._attack_cache):
                st = states[si]
                dec, ent = st.decisions[i], st.doc.entities[i]
                dec.calls += 1
                if error is not None:
                    st.result.reason = st.result.reason or f"attack:{error}"
                    continue
                guesses = read_items(text or "", s.guesses)
                st.result.guesses += len(guesses)
                dec.guesses.append(guesses)
                picked = choose(
                    ent.value, ent.type, dec.candidates[: st.k + 1], dec.guesses, st.doc.lang
                )
                if picked is not None:
                    dec.replacement, dec.kind, dec.rank = (
                        dec.candidates[picked],
                        "generalized",
                        picked,
                    )
                elif st.k + 1 < len(dec.candidates):
                    st.k += 1
                    continue
                else:
                    dec.source = "fallback"
                st.pending.pop(0)
                st.k = 0

    def _finish(self, st: _State) -> DocResult:
        res, doc = st.result, st.doc
        started = time.perf_counter()
        if res.reason is not None:
            return res
        allocator = TokenAllocator(reserved_tokens(doc.text))
        pieces: list[tuple[int, int, int]] = []
        for i, (ent, dec) in enumerate(zip(doc.entities, st.decisions, strict=True)):
            if dec.kind != "generalized":
                dec.kind, dec.rank = "label", None
                dec.replacement = allocator.token(ent.type, ent.value)[0]
            pieces += [(a, b, i) for a, b in ent.mentions]
        pieces.sort()
        out: list[str] = []
        pos = length = 0
        for a, b, i in pieces:
            dec = st.decisions[i]
            out.append(doc.text[pos:a])
            length += a - pos
            res.spans.append(
                {
                    "type": dec.type,
                    "start": a,
                    "end": b,
                    "out_start": length,
                    "out_end": length + len(dec.replacement),
                    "replacement": dec.replacement,
                    "kind": dec.kind,
                    "rank": dec.rank,
                }
            )
            res.mapping[str(len(res.spans) - 1)] = doc.text[a:b]
            out.append(dec.replacement)
            length += len(dec.replacement)
            pos = b
        out.append(doc.text[pos:])
        text = "".join(out)
        reason = release_check(doc.text, text, doc.entities, doc.hits)
        if reason is None and restore(text, res.spans, res.mapping) != doc.text:
            reason = "restore_mismatch"
        if reason is not None:
            res.reason, res.spans, res.mapping = reason, [], {}
        else:
            res.text = text
        res.seconds += time.perf_counter() - started
        return res
