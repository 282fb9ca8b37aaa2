"""The output writer of one task: ``OUTPUT_SCHEMA`` batches → ``decision=…/part-KEY.parquet`` files.

Both engines write through this class, from inside the task that screened the input file (Spark only
distributes the tasks). The file name is a function of the input file (``KEY``), so a retried or
speculative task rewrites the same files with the same bytes. Files are written under a hidden
``.inprogress`` name (or a local temp file for remote outputs) and moved into place only when
complete; each written file is counted and hashed for the manifest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from spcl.io.hashing import sha256_file
from spcl.io.schema import DECISIONS, OUTPUT_SCHEMA
from spcl.io.storage import filesystem, is_local, join, local_path
from spcl.messages import with_path

FILE_SCHEMA = OUTPUT_SCHEMA.remove(OUTPUT_SCHEMA.get_field_index("decision"))
"""Columns stored in the files: ``decision`` lives in the folder name (hive partitioning)."""


@dataclass(frozen=True)
class WrittenFile:
    """One output file: its path relative to the output folder, rows, SHA-256 and size."""

    path: str
    rows: int
    sha256: str
    bytes: int

    def as_dict(self) -> dict[str, object]:
        """Plain-dict form (JSON-ready)."""
        return asdict(self)


def file_key(source: str) -> str:
    """The output name key of an input file: 16 hex digits of SHA-256 of its source name."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


class PartitionWriter:
    """Writes one task's output rows, split by decision, and reports what it wrote."""

    def __init__(self, output: str, key: str, compression: str = "zstd") -> None:
        self.output = output
        self.key = key
        self.compression = None if compression == "none" else compression
        self._local = is_local(output)
        self._tmpdir: str | None = None
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._paths: dict[str, str] = {}
        self._rows: dict[str, int] = {}

    def _relative(self, decision: str) -> str:
        return f"decision={decision}/part-{self.key}.parquet"

    def _open(self, decision: str, schema: pa.Schema = FILE_SCHEMA) -> pq.ParquetWriter:
        if self._local:
            final = os.path.join(local_path(self.output), self._relative(decision))
            os.makedirs(os.path.dirname(final), exist_ok=True)
            temp = os.path.join(os.path.dirname(final), f".part-{self.key}.parquet.inprogress")
        else:
            self._tmpdir = self._tmpdir or tempfile.mkdtemp(prefix="spcl-part-")
            temp = os.path.join(self._tmpdir, f"{decision}.parquet")
        self._paths[decision] = temp
        self._rows[decision] = 0
        return pq.ParquetWriter(temp, schema, compression=self.compression)

    def write(self, batch: pa.RecordBatch) -> None:
        """Append one ``OUTPUT_SCHEMA`` batch. A failed write (full disk, read-only folder) raises
        ``OSError`` naming the file."""
        table = pa.Table.from_batches([batch])
        for decision in DECISIONS:
            part = table.filter(pc.equal(table["decision"], decision))
            if part.num_rows == 0:
                continue
            try:
                # the screen kind's ``scores`` struct is the batch's
                stored = part.drop_columns(["decision"])
                if decision not in self._writers:
                    self._writers[decision] = self._open(decision, stored.schema)
                self._writers[decision].write_table(stored)
            except OSError as err:
                raise with_path(
                    err, self._paths.get(decision) or join(self.output, self._relative(decision))
                ) from err
            self._rows[decision] += part.num_rows

    def close(self) -> list[WrittenFile]:
        """Finish every file, move it into place and return what was written (``OSError`` naming the
        file when that fails)."""
        written = []
        try:
            for decision, writer in self._writers.items():
                try:
                    written.append(self._finish(decision, writer))
                except OSError as err:
                    raise with_path(err, self._paths[decision]) from err
        finally:
            if self._tmpdir:
                shutil.rmtree(self._tmpdir, ignore_errors=True)
        return written

    def _finish(self, decision: str, writer: pq.ParquetWriter) -> WrittenFile:
        """Close one decision's file, hash it and move it into place."""
        writer.close()
        temp = self._paths[decision]
        entry = WrittenFile(
            self._relative(decision), self._rows[decision], sha256_file(temp), os.path.getsize(temp)
        )
        if self._local:
            os.replace(temp, os.path.join(local_path(self.output), entry.path))
        else:
            fs, base = filesystem(self.output)
            pafs.copy_files(
                temp,
                join(base, entry.path),
                source_filesystem=pafs.LocalFileSystem(),
                destination_filesystem=fs,
            )
        return entry


def footer_rows(output: str, relative_path: str) -> int:
    """Rows recorded in the Parquet footer of one output file (reads the footer only)."""
    fs, base = filesystem(output)
    with fs.open_input_file(join(base, relative_path)) as fh:
        return pq.ParquetFile(fh).metadata.num_rows
