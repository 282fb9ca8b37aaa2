"""Two scripted annotation teachers (and a verifier) behind real HTTP servers, their documents
and answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.annotate.prompt import build_messages
from spcl.cli import main
from tests.support.scripted_llm import ScriptedChatServer

A, B, V = "scripted-a", "scripted-b", "scripted-v"

DOCS: dict[str, str] = {  # id → text (invented people)
    "ko-med": "김가상(45)씨는 지난달 폐암 진단을 받고 항암 치료를 시작했다.",
    "ko-crime": "박예시(29)씨는 사기 혐의로 구속 기소됐다.",
    "ko-dis": "이민수 씨는 시각장애 1급 판정을 받았다고 밝혔다.",
    "ko-junk": "최유진 님이 어제 병원에 다녀왔다고 한다.",
    "ko-none2": "정수민 씨는 주말에 등산을 즐긴다.",
    "no-person": "오늘 서울은 맑고 낮 기온은 25도까지 오르겠습니다.",
    "ja-crime": "田中一郎さんは窃盗の疑いで逮捕された。",
    "ja-none": "佐藤花子さんは新しいカフェを開店した。",
    "ja-lgbt": "鈴木健太さんは自分が同性愛者だと友人に打ち明けた。",
    "ja-err": "高橋美咲さんは宗教団体の集会に参加した。",
    "no-person-ja": "東京の天気は晴れです。",
    "en-none": "Dr. Jane Roe will give the keynote talk at the conference on Friday.",
    "en-rel": "Mr. John Smith wrote a report on disability benefits in general.",
    "en-think": "My name is Sam Lee and I was diagnosed with diabetes last year.",
}
SCRIPT: dict[str, dict[str, tuple[int, str]]] = {  # id → model → (HTTP status, answer)
    "ko-med": {A: (200, "SCPI\tMEDICAL,MEDICAL_GUIDANCE\t0.95"), B: (200, "SCPI\tMEDICAL\t0.9")},
    "ko-crime": {
        A: (200, "SCPI\tCRIMINAL_PROCEDURE\t0.9"),
        B: (200, "<think>구속 기소</think>\nSCPI\tCRIMINAL_PROCEDURE,CRIMINAL_RECORD\t0.9"),
    },
    "ko-dis": {
        A: (200, "SCPI\tDISABILITY\t0.9"),
        B: (200, "SCPI\tDISABILITY\t0.9"),
        V: (200, "RELATED\tDISABILITY\t1"),
    },
    "ko-junk": {A: (200, "SCPI\tMEDICAL\t0.8"), B: (200, "The answer is SCPI.")},
    "ko-none2": {A: (200, "NONE\t-\t1"), B: (200, "NONE\t-\t0.95")},
    "ja-crime": {
        A: (200, "SCPI\tCRIMINAL_PROCEDURE\t0.9"),
        B: (200, "RELATED\tCRIMINAL_PROCEDURE\t0.9"),
    },
    "ja-none": {A: (200, "NONE\t-\t0.95"), B: (200, "NONE\t-\t0.95")},
    "ja-lgbt": {A: (200, "SCPI\tLGBT\t0.9"), B: (200, "SCPI\tLGBT,MEDICAL\t0.9")},
    "ja-err": {A: (400, ""), B: (200, "SCPI\tCREED\t0.9")},
    "en-none": {A: (200, "NONE\t-\t0.9"), B: (200, "NONE\t-\t0.9")},
    "en-rel": {A: (200, "RELATED\tDISABILITY\t0.9"), B: (200, "RELATED\tDISABILITY\t0.6")},
    "en-think": {
        A: (200, "<think>diagnosed: medical</think>SCPI\tMEDICAL\t0.9"),
        B: (200, "SCPI\tMEDICAL\t0.85"),
    },
}
BY_TEXT = {text: doc_id for doc_id, text in DOCS.items()}
EXPECTED_LABELLED = {
    "ko-med": ("SCPI", ["MEDICAL"]),
    "ko-crime": ("SCPI", ["CRIME"]),
    "ko-dis": ("SCPI", ["DISABILITY"]),
    "ko-none2": ("NONE", []),
    "ja-none": ("NONE", []),
    "en-none": ("NONE", []),
    "en-think": ("SCPI", ["MEDICAL"]),
}
EXPECTED_REJECTED = {
    "ja-crime": "label_disagreement",
    "ja-lgbt": "category_disagreement",
    "en-rel": "low_confidence",
    "ko-junk": "unparseable:scripted-b",
    "ja-err": "backend_error:scripted-a",
}
EXPECTED_DROPPED = {"no-person": "no_person_mention", "no-person-ja": "no_person_mention"}


def script(model: str, doc: str) -> tuple[int, str]:
    """The scripted teachers' answers; the verifier agrees with both teachers unless scripted
    otherwise."""
    answers = SCRIPT[BY_TEXT[doc]]
    return answers.get(model) or answers[A]


def document_of(prompt: str) -> str:
    """The document inside an ``annotate-v1`` prompt."""
    return prompt.rsplit("\nDocument:\n", 1)[1].rsplit("\n\nAnswer:", 1)[0]


class ScriptedTeachers:
    """One scripted OpenAI-compatible server per teacher; ``script(teacher, document)`` gives the
    answer text or an HTTP status. After ``down_after`` requests in all, every server goes away (the
    request's handler dies: the client gets no reply)."""

    def __init__(
        self, script: Callable[[str, str], tuple[int, str]], names: tuple[str, ...] = (A, B, V)
    ):
        self.script = script
        self.down_after: int | None = None
        self._served = 0
        self._lock = threading.Lock()
        self.servers = {n: ScriptedChatServer(partial(self._answer, n)) for n in names}

    def _answer(self, name: str, prompt: str, attempt: int) -> str | int:
        with self._lock:
            if self.down_after is not None and self._served >= self.down_after:
                raise ConnectionAbortedError("scripted server went away")
            self._served += 1
        status, content = self.script(name, document_of(prompt))
        return content if status == 200 else status

    def spec(self, name: str) -> str:
        """The ``--teacher`` value of teacher ``name``."""
        return f"openai:{name}@{self.servers[name].endpoint}"

    def asked(self, name: str, text: str) -> int:
        """Requests teacher ``name`` got for ``text``."""
        return self.servers[name].attempts[build_messages(text)[0]["content"]]

    def total(self) -> int:
        """Requests all teachers got."""
        return sum(s.requests() for s in self.servers.values())

    def __enter__(self) -> ScriptedTeachers:
        for s in self.servers.values():
            s.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for s in self.servers.values():
            s.__exit__()


def write_input(folder: Path) -> Path:
    """Two JSONL files (one with a malformed line), a filter-output-like Parquet file and
    metadata files."""
    (folder / "sub").mkdir(parents=True)
    ko = [i for i in DOCS if i.startswith(("ko", "no-person")) and i != "no-person-ja"]
    lines = [json.dumps({"id": i, "text": DOCS[i]}, ensure_ascii=False) for i in ko]
    (folder / "a.jsonl").write_text(
        "\n".join([*lines[:2], '{"id": "broken", "text": ', *lines[2:]]) + "\n"
    )
    ja = [i for i in DOCS if i.startswith("ja") or i == "no-person-ja"]
    (folder / "b.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": DOCS[i]}, ensure_ascii=False) + "\n" for i in ja)
    )
    en = [i for i in DOCS if i.startswith("en")]
    pq.write_table(
        pa.table(
            {
                "id": en,
                "text": [DOCS[i] for i in en],
                "lang": ["en"] * len(en),
                "decision": ["flagged"] * len(en),
            }
        ),
        folder / "sub" / "c.parquet",
    )
    for meta in ("stats.json", "manifest.json"):  # a filter output's metadata is not input
        (folder / meta).write_text('{"counts": {}}\n')
    return folder


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def annotate(inp: Path, out: Path, teachers: ScriptedTeachers, *extra: str) -> int:
    return main(
        [
            "annotate",
            "--input",
            str(inp),
            "--output",
            str(out),
            "--teacher",
            teachers.spec(A),
            "--teacher",
            teachers.spec(B),
            "--retries",
            "0",
            "--concurrency",
            "4",
            *extra,
        ]
    )
