"""Where interface E keeps its streams: Parquet files under the sandbox's data folder.

    <data folder>/logs/<stream>/.stream.json                       created_at, fields
    <data folder>/logs/<stream>/date=2024-05-01/hour=12/minute=03/<ingest>.parquet

the way Parseable lays out its object store (a prefix per stream, then per date, hour and
minute of `p_timestamp`). Each acknowledged ingest request is one Parquet file, written
under a temporary name and renamed into place, so a query never sees half of one and the
stream survives a restart with `--db` (the data folder sits beside the database). A
stream's schema (`.stream.json`) is written, atomically, before the first file that needs
a new field. In memory mode the data folder is temporary and goes with the sandbox.

A query reads every file of a stream through DataFusion with the stream's schema (a file
written before a field existed reads it as null), keeping the rows whose `p_timestamp` is
in the query's range: the stream's table is a view with that filter.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.fsutil import atomic_write
from toolkit_sandbox.logs import records
from toolkit_sandbox.logs.records import TIME_FIELD

if TYPE_CHECKING:
    import pyarrow as pa
    from datafusion import DataFrame, SessionContext

META_NAME = ".stream.json"
DATA_SUFFIX = ".parquet"
_names = itertools.count()


class StreamGone(LookupError):
    """The stream was deleted while a request was about to write into it."""


class Stream:
    """One stream: its fields and its files. Ingests are serialised by its lock."""

    def __init__(self, folder: Path, name: str, fields: dict[str, str], created_at: str):
        self.folder = folder
        self.name = name
        self.fields = fields  # name -> type (records.UTF8, ...), p_timestamp excluded
        self.created_at = created_at
        self.lock = threading.Lock()
        self.gone = False  # deleted: nothing more is written here

    @classmethod
    def load(cls, folder: Path) -> Stream | None:
        try:
            meta = json.loads((folder / META_NAME).read_text(encoding="utf-8"))
            fields = {str(k): str(v) for k, v in meta["fields"].items()}
            return cls(folder, folder.name, fields, str(meta["created_at"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _save_meta(self) -> None:
        atomic_write(
            self.folder / META_NAME,
            json.dumps(
                {"name": self.name, "created_at": self.created_at, "fields": self.fields},
                indent=2,
                sort_keys=True,
            ).encode("utf-8"),
        )

    # -- writing ---------------------------------------------------------------------------

    def ingest(self, events: Sequence[dict[str, Any]], now: dt.datetime) -> int:
        """Store one request's events (already flattened) as one file; the rows stored."""
        import pyarrow.parquet as pq

        if not events:
            return 0
        with self.lock:
            if self.gone:
                raise StreamGone(self.name)
            table, new = records.table_of(events, self.fields, now)
            if new:
                self.fields = {**self.fields, **new}
                self._save_meta()
            stamp = now.astimezone(dt.UTC)
            partition = self.folder / stamp.strftime("date=%Y-%m-%d/hour=%H/minute=%M")
            partition.mkdir(parents=True, exist_ok=True)
            name = f"{stamp.strftime('%Y%m%dT%H%M%S%f')}.{os.getpid()}.{next(_names)}"
            temporary = partition / f".{name}.tmp"
            pq.write_table(table, temporary)
            os.replace(temporary, partition / f"{name}{DATA_SUFFIX}")
            return int(table.num_rows)

    # -- reading ---------------------------------------------------------------------------

    def arrow_schema(self) -> pa.Schema:
        import pyarrow as pa

        return pa.schema(
            [(TIME_FIELD, pa.timestamp("ms"))]
            + [(name, records.arrow_type(kind)) for name, kind in sorted(self.fields.items())]
        )

    def files(self) -> list[Path]:
        return sorted(self.folder.rglob(f"*{DATA_SUFFIX}"))

    def frame(
        self, context: SessionContext, bounds: tuple[dt.datetime, dt.datetime] | None
    ) -> DataFrame:
        """The stream's rows (within `bounds`: start included, end excluded)."""
        import pyarrow as pa
        from datafusion import col, lit

        schema = self.arrow_schema()
        if any(True for _ in self.folder.rglob(f"*{DATA_SUFFIX}")):
            frame = context.read_parquet(
                str(self.folder), schema=schema, file_extension=DATA_SUFFIX
            )
        else:
            frame = context.from_arrow(schema.empty_table())
        if bounds is not None:
            stamp = pa.timestamp("ms")
            frame = frame.filter(
                (col(TIME_FIELD) >= lit(pa.scalar(bounds[0], stamp)))
                & (col(TIME_FIELD) < lit(pa.scalar(bounds[1], stamp)))
            )
        return frame

    def describe(self) -> dict[str, Any]:
        """What the control API shows of it: its fields, files and rows."""
        import pyarrow.parquet as pq

        files = self.files()
        rows = sum(pq.read_metadata(path).num_rows for path in files)
        return {
            "name": self.name,
            "created_at": self.created_at,
            "fields": {TIME_FIELD: records.TIMESTAMP, **dict(sorted(self.fields.items()))},
            "files": len(files),
            "rows": rows,
        }


class Storage:
    """The streams under one data folder."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._streams: dict[str, Stream] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        try:
            entries = sorted(os.scandir(self.folder), key=lambda entry: entry.name)
        except FileNotFoundError:
            return []
        return [
            entry.name
            for entry in entries
            if entry.is_dir() and (Path(entry.path) / META_NAME).is_file()
        ]

    def get(self, name: str) -> Stream | None:
        with self._lock:
            stream = self._streams.get(name)
            if stream is None:
                stream = Stream.load(self.folder / name)
                if stream is not None:
                    self._streams[name] = stream
            return stream

    def get_or_create(self, name: str, now: dt.datetime) -> Stream:
        stream = self.get(name)
        if stream is not None:
            return stream
        with self._lock:
            stream = self._streams.get(name)
            if stream is None:
                folder = self.folder / name
                folder.mkdir(parents=True, exist_ok=True)
                stream = Stream(folder, name, {}, now.astimezone(dt.UTC).isoformat())
                stream._save_meta()
                self._streams[name] = stream
            return stream

    def delete(self, name: str) -> bool:
        """Remove a stream and its files (after an ingest in progress); whether it was."""
        stream = self.get(name)
        if stream is None:
            return False
        with self._lock, stream.lock:
            stream.gone = True
            self._streams.pop(name, None)
            (stream.folder / META_NAME).unlink(missing_ok=True)  # gone for names() first
            shutil.rmtree(stream.folder, ignore_errors=True)
        return True

    def clear(self) -> None:
        with self._lock:
            for name in list(self._streams):
                with self._streams[name].lock:
                    pass  # wait for an ingest in progress
            self._streams.clear()
            if self.folder.is_dir():
                for entry in os.scandir(self.folder):
                    path = Path(entry.path)
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        path.unlink(missing_ok=True)


class LogsState:
    """Interface E's runtime state: the storage of each data folder it has served (one,
    for a running sandbox). A reset empties them all."""

    def __init__(self) -> None:
        self._storages: dict[Path, Storage] = {}
        self._lock = threading.Lock()

    @classmethod
    def create(cls, rate_window: float) -> LogsState:
        return cls()

    def storage(self, folder: Path) -> Storage:
        with self._lock:
            storage = self._storages.get(folder)
            if storage is None:
                storage = self._storages[folder] = Storage(folder)
            return storage

    def reset(self) -> None:
        with self._lock:
            storages = list(self._storages.values())
        for storage in storages:
            storage.clear()
