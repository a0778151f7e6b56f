"""The history store: snapshots and validation / bench runs, in SQLite by default, PostgreSQL by URL.

A small API, shared by ``gpuvet snapshot/history/diff/rollback`` and ``gpuvet validate/bench``::

    from gpuvet.store import open_store
    store = open_store(url=None, environ=os.environ)   # --db URL, else $GPUVET_DB, else the XDG file
    rec = store.add_snapshot(doc, good=False)          # doc: a snapshot document (dict); -> SnapshotRecord
    store.snapshots(limit=20)                          # newest first, without the documents
    store.snapshot("12" | "good" | "latest" | LABEL | UID-PREFIX)   # -> SnapshotRecord with .doc
    store.mark_good("12")
    run_id = store.add_run("validate", snapshot_id=rec.id, results=[{...per case...}],
                           started_at="2026-12-01T10:00:00Z", finished_at=..., status="failed",
                           level="quick", summary={...}, meta={...})
    store.runs(kind="bench", snapshot_id=rec.id)       # -> [RunRecord], newest first
    store.run(run_id)

Every JSON value written is passed through the redactor (``model.redact``) first.  Migrations are
Alembic revisions under ``migrations/versions`` (``schema.HEAD`` is the newest); a database at an
older revision is upgraded on open (under a lock: a file lock for SQLite, an advisory lock for
PostgreSQL), one from a newer gpuvet is refused.  SQLite runs in WAL mode with ``BEGIN IMMEDIATE``
write transactions and a busy time-out, so concurrent writers queue instead of failing, and a
writer killed mid-transaction leaves nothing behind (the transaction is rolled back on next open).

Errors the user can act on (unreachable server, unreadable or corrupt file, newer schema, unknown
reference) raise :class:`StoreError` with a one-line message.
"""
from __future__ import annotations

import json
import os
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from gpuvet.model.redact import is_secret_name, redact_text

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

HEAD = "0001"  # the newest migration revision; bump together with a new file in migrations/versions
ENV_VAR = "GPUVET_DB"
MASK = "***"
DB_FILE = "history.sqlite"


class StoreError(Exception):
    """A problem with the history database, worded for the user (one line)."""


@dataclass
class SnapshotRecord:
    id: int
    uid: str
    created_at: str
    label: str | None
    host: str
    python: str
    score: int | None
    good: bool
    good_at: str | None
    summary: dict[str, Any] = field(default_factory=dict)
    doc: dict[str, Any] | None = None  # loaded by Store.snapshot(), not by Store.snapshots()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "uid": self.uid, "created_at": self.created_at, "label": self.label,
                "host": self.host, "python": self.python, "score": self.score, "good": self.good,
                "good_at": self.good_at, "summary": self.summary}


@dataclass
class RunRecord:
    id: int
    uid: str
    kind: str
    snapshot_id: int | None
    started_at: str
    finished_at: str | None
    status: str
    level: str | None
    host: str
    summary: dict[str, Any]
    results: list[Any]
    meta: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def utcnow() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def redact_json(value: Any) -> Any:
    """A JSON value with every string (keys included) passed through the redactor."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        out = {redact_text(str(k)): (MASK if is_secret_name(str(k)) and isinstance(v, str) and v else redact_json(v))
               for k, v in value.items()}
        # a {"name": SECRET_NAME, "value": ...} row (env_vars, docker inspect labels): mask the value
        if isinstance(value.get("name"), str) and isinstance(value.get("value"), str) and value["value"] \
                and is_secret_name(value["name"]):
            out["value"] = MASK
        return out
    if isinstance(value, (list, tuple)):
        return [redact_json(v) for v in value]
    return value


def default_path(environ: Mapping[str, str]) -> str:
    base = environ.get("XDG_DATA_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"),
                                                        ".local", "share")
    return os.path.join(base, "gpuvet", DB_FILE)


def resolve_url(url: str | None, environ: Mapping[str, str]) -> str:
    """--db URL, else $GPUVET_DB, else the SQLite file in the XDG data directory.  A plain path means
    a SQLite file; ``postgresql://`` uses psycopg (version 3) when it is installed."""
    url = url or environ.get(ENV_VAR) or ""
    if not url:
        return "sqlite:///" + default_path(environ)
    if "://" not in url:
        return "sqlite:///" + os.path.abspath(url)
    if url.startswith(("postgresql://", "postgres://")):
        rest = url.split("://", 1)[1]
        try:
            import psycopg  # noqa: F401

            return "postgresql+psycopg://" + rest
        except ImportError:
            return "postgresql://" + rest
    return url


def display_url(url: str) -> str:
    """The URL with any password masked (for messages)."""
    return redact_text(url)


def open_store(url: str | None = None, environ: Mapping[str, str] | None = None) -> "Store":
    environ = os.environ if environ is None else environ
    return Store(resolve_url(url, environ))


class Store:
    def __init__(self, url: str):
        self.url = url
        self._engine: Engine | None = None

    # -- connection and migrations --------------------------------------------------------------
    @property
    def engine(self):
        if self._engine is None:
            self._engine = self._connect()
        return self._engine

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    def _sqlite_path(self) -> str | None:
        if not self.is_sqlite:
            return None
        path = self.url.split(":///", 1)[1] if ":///" in self.url else ""
        return None if path in ("", ":memory:") else path

    def _connect(self):
        try:
            import sqlalchemy as sa
        except ImportError:  # pragma: no cover - a dependency
            raise StoreError("the history store needs SQLAlchemy (pip install sqlalchemy alembic)") from None
        path = self._sqlite_path()
        if path:
            d = os.path.dirname(path)
            try:
                os.makedirs(d, mode=0o700, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the history directory {d}: {exc.strerror}") from None
            if os.path.isdir(path):
                raise StoreError(f"history database {path} is a directory, not a file")
        try:
            if self.is_sqlite:
                engine = sa.create_engine(self.url, connect_args={"timeout": 60})
                _sqlite_pragmas(engine)
            else:
                engine = sa.create_engine(self.url, pool_pre_ping=True)
        except Exception as exc:  # unknown dialect, missing driver
            raise StoreError(f"cannot open history database {display_url(self.url)}: {_why(exc)}") from None
        self._engine = engine
        import random
        import time

        # a brand-new SQLite file opened by many processes at once: SQLite answers "database is locked" at once,
        # without its busy handler, while another connection switches the file to WAL or recovers its index;
        # those are moments, so the first open retries for up to the busy time-out instead of failing the writer
        deadline = time.monotonic() + 60
        while True:
            try:
                self._ensure_schema(engine)
                break
            except StoreError:
                engine.dispose()
                raise
            except Exception as exc:
                if self.is_sqlite and "locked" in str(exc).lower() and time.monotonic() < deadline:
                    engine.dispose()
                    time.sleep(0.02 + random.random() * 0.08)
                    continue
                engine.dispose()
                raise StoreError(f"cannot open history database {display_url(self.url)}: {_why(exc)}") from None
        if path:
            try:
                os.chmod(path, 0o600)  # snapshots describe the machine: keep them the user's
            except OSError:
                pass
        return engine

    def _revision(self, conn) -> str | None:
        import sqlalchemy as sa

        if not sa.inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()

    def _ensure_schema(self, engine) -> None:
        with engine.connect() as conn:
            rev = self._revision(conn)
            conn.rollback()
        if rev == HEAD:
            return  # the fast path: no Alembic import
        if rev is not None and rev not in _known_revisions():
            raise StoreError(f"history database {display_url(self.url)} has schema revision {rev}, written by "
                             f"a newer gpuvet (this one knows up to {HEAD}); upgrade gpuvet or use another --db")
        self.migrate()

    def migrate(self) -> None:
        """Upgrade the database to ``HEAD`` under a lock, so that concurrent first opens are safe."""
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", os.path.join(os.path.dirname(__file__), "migrations"))
        engine = self.engine  # set by _connect before it migrates
        path = self._sqlite_path()
        if self.is_sqlite:
            import fcntl

            lockfile = (path + ".lock") if path else None
            fh = open(lockfile, "a+") if lockfile else None
            try:
                if fh:
                    fcntl.flock(fh, fcntl.LOCK_EX)
                with engine.connect() as conn:
                    cfg.attributes["connection"] = conn
                    command.upgrade(cfg, "head")
                    conn.commit()
            finally:
                if fh:
                    fh.close()
        else:
            import sqlalchemy as sa

            with engine.connect() as conn:
                conn.execute(sa.text("SELECT pg_advisory_lock(726173)"))  # arbitrary fixed key
                conn.commit()
                try:
                    cfg.attributes["connection"] = conn
                    command.upgrade(cfg, "head")
                    conn.commit()
                finally:
                    conn.execute(sa.text("SELECT pg_advisory_unlock(726173)"))
                    conn.commit()

    def revision(self) -> str | None:
        with self.engine.connect() as conn:
            return self._revision(conn)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _tx(self):
        return self.engine.begin()

    def _guard(self, what: str):
        return _Guard(self, what)

    # -- snapshots ------------------------------------------------------------------------------
    # -- the SQLite fast path ---------------------------------------------------------------------
    def _fast_db(self):
        """An sqlite3 connection when this is an existing SQLite file already at ``HEAD`` (the common
        case of `gpuvet snapshot`): one INSERT without importing SQLAlchemy (~0.3 s of CPU).  None
        otherwise: the SQLAlchemy path creates / migrates the schema under its lock."""
        path = self._sqlite_path()
        if not path or self._engine is not None or not os.path.isfile(path):
            return None
        import sqlite3

        try:
            con = sqlite3.connect(path, timeout=60, isolation_level=None)
            con.execute("PRAGMA busy_timeout = 60000")
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA synchronous = NORMAL")
            con.execute("PRAGMA foreign_keys = ON")
            rev = con.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.Error:
            return None  # not at HEAD, damaged, locked for long: the full path says why
        if not rev or rev[0] != HEAD:
            con.close()
            return None
        return con

    def prepare(self) -> None:
        """Open the database now (create or migrate it when needed), cheaply when it is ready."""
        con = self._fast_db()
        if con is not None:
            con.close()
            return
        self.engine  # noqa: B018

    def _fast_insert(self, table: str, values: Mapping[str, Any]) -> int | None:
        con = self._fast_db()
        if con is None:
            return None
        import sqlite3

        cols = list(values)
        try:
            con.execute("BEGIN IMMEDIATE")
            cur = con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                              [int(v) if isinstance(v, bool) else v for v in values.values()])
            con.execute("COMMIT")
            return int(cur.lastrowid)
        except sqlite3.Error as exc:
            try:
                con.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise StoreError(f"cannot write to history database {self.where()}: {redact_text(str(exc))[:300]}") from None
        finally:
            con.close()

    def add_snapshot(self, document: Mapping[str, Any], *, good: bool = False) -> SnapshotRecord:
        doc: dict[str, Any] = redact_json(dict(document))
        uid = str(doc.get("id") or uuid.uuid4())
        created = str(doc.get("created_at") or utcnow())
        found = doc.get("summary")
        summary: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        now = utcnow()
        label: str | None = doc.get("label") or None
        host = str(doc.get("host", {}).get("hostname", "") if isinstance(doc.get("host"), Mapping) else "")
        python = str(doc.get("python", {}).get("executable", "") if isinstance(doc.get("python"), Mapping) else "")
        score = doc.get("score") if isinstance(doc.get("score"), int) else None
        good_at = now if good else None
        values = dict(uid=uid, created_at=created, label=label, host=host, python=python, score=score,
                      schema_version=int(doc.get("schema_version") or 0), digest=str(doc.get("digest") or ""),
                      good=bool(good), good_at=good_at,
                      summary=json.dumps(summary, sort_keys=True), doc=json.dumps(doc, sort_keys=True))
        new_id = self._fast_insert("snapshots", values)
        if new_id is None:
            from .schema import snapshots

            with self._guard("write a snapshot to"):
                with self._tx() as conn:
                    new_id = conn.execute(snapshots.insert().values(**values)).inserted_primary_key[0]
        return SnapshotRecord(id=int(new_id), uid=uid, created_at=created, label=label, host=host, python=python,
                              score=score, good=bool(good), good_at=good_at, summary=dict(summary), doc=doc)

    def snapshots(self, limit: int | None = None) -> list[SnapshotRecord]:
        import sqlalchemy as sa

        from .schema import snapshots as t

        cols = [c for c in t.c if c.name != "doc"]
        q = sa.select(*cols).order_by(t.c.id.desc())
        if limit:
            q = q.limit(limit)
        with self._guard("read"):
            with self.engine.connect() as conn:
                return [_snap(r) for r in conn.execute(q).mappings()]

    def snapshot(self, ref: str | int) -> SnapshotRecord:
        """A snapshot by id, ``good`` (the latest marked good), ``latest``, label (newest with it) or
        uid prefix (at least 6 characters).  Raises StoreError when nothing or several match."""
        import sqlalchemy as sa

        from .schema import snapshots as t

        ref = str(ref).strip()
        with self._guard("read"):
            with self.engine.connect() as conn:
                q = sa.select(t)
                if ref.isdigit():
                    rows = list(conn.execute(q.where(t.c.id == int(ref))).mappings())
                elif ref == "good":
                    rows = list(conn.execute(q.where(t.c.good.is_(True))
                                             .order_by(t.c.good_at.desc(), t.c.id.desc()).limit(1)).mappings())
                    if not rows:
                        raise StoreError("no snapshot is marked good yet (gpuvet snapshot --mark-good, "
                                         "or gpuvet mark-good ID)")
                elif ref == "latest":
                    rows = list(conn.execute(q.order_by(t.c.id.desc()).limit(1)).mappings())
                else:
                    rows = list(conn.execute(q.where(t.c.label == ref).order_by(t.c.id.desc()).limit(1)).mappings())
                if not rows and ref not in ("good", "latest") and len(ref) >= 6:
                    # a uid prefix (it may be all digits: then it is tried after the numeric id)
                    rows = list(conn.execute(q.where(t.c.uid.like(ref.replace("%", "") + "%")).limit(2)).mappings())
                    if len(rows) > 1:
                        raise StoreError(f"snapshot reference {ref!r} matches several snapshots; give more of the id")
        if not rows:
            raise StoreError(f"no snapshot {ref!r} in the history ({self.where()}); `gpuvet history` lists them")
        rec = _snap(rows[0])
        try:
            rec.doc = json.loads(rows[0]["doc"])
        except ValueError:
            raise StoreError(f"snapshot {rec.id} in the history is damaged (its document is not JSON)") from None
        return rec

    def mark_good(self, ref: str | int) -> SnapshotRecord:
        import sqlalchemy as sa

        from .schema import snapshots as t

        rec = self.snapshot(ref)
        now = utcnow()
        with self._guard("update"):
            with self._tx() as conn:
                conn.execute(sa.update(t).where(t.c.id == rec.id).values(good=True, good_at=now))
        rec.good, rec.good_at = True, now
        return rec

    def delete_snapshot(self, ref: str | int) -> None:
        import sqlalchemy as sa

        from .schema import snapshots as t

        rec = self.snapshot(ref)
        with self._guard("update"):
            with self._tx() as conn:
                conn.execute(sa.delete(t).where(t.c.id == rec.id))

    # -- validation / bench runs ----------------------------------------------------------------
    def add_run(self, kind: str, snapshot_id: int | None, results: Iterable[Any], *, started_at: str | None = None,
                finished_at: str | None = None, status: str = "ok", level: str | None = None,
                summary: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
                host: str | None = None) -> int:
        """Record one validation / bench (or other) run, tied to a snapshot (or None).  ``results`` is
        the list of per-case results (any JSON); timestamps are ISO 8601 UTC strings (default: now)."""
        from .schema import runs

        values = dict(uid=str(uuid.uuid4()), kind=str(kind), snapshot_id=snapshot_id,
                      started_at=started_at or utcnow(), finished_at=finished_at, status=str(status),
                      level=level, host=host if host is not None else socket.gethostname(),
                      summary=json.dumps(redact_json(dict(summary or {})), sort_keys=True),
                      results=json.dumps(redact_json(list(results))),
                      meta=json.dumps(redact_json(dict(meta or {})), sort_keys=True))
        with self._guard("write a run to"):
            with self._tx() as conn:
                return int(conn.execute(runs.insert().values(**values)).inserted_primary_key[0])

    def runs(self, kind: str | None = None, snapshot_id: int | None = None, limit: int | None = None) -> list[RunRecord]:
        import sqlalchemy as sa

        from .schema import runs as t

        q = sa.select(t).order_by(t.c.id.desc())
        if kind:
            q = q.where(t.c.kind == kind)
        if snapshot_id is not None:
            q = q.where(t.c.snapshot_id == snapshot_id)
        if limit:
            q = q.limit(limit)
        with self._guard("read"):
            with self.engine.connect() as conn:
                return [_run(r) for r in conn.execute(q).mappings()]

    def run_counts(self) -> dict[int, dict[str, int]]:
        """{snapshot id: {kind: number of runs}} (for `gpuvet history`)."""
        import sqlalchemy as sa

        from .schema import runs as t

        q = sa.select(t.c.snapshot_id, t.c.kind, sa.func.count()).where(t.c.snapshot_id.is_not(None)) \
            .group_by(t.c.snapshot_id, t.c.kind)
        out: dict[int, dict[str, int]] = {}
        with self._guard("read"):
            with self.engine.connect() as conn:
                for sid, kind, n in conn.execute(q):
                    out.setdefault(int(sid), {})[kind] = int(n)
        return out

    def run(self, run_id: int) -> RunRecord:
        import sqlalchemy as sa

        from .schema import runs as t

        with self._guard("read"):
            with self.engine.connect() as conn:
                r = conn.execute(sa.select(t).where(t.c.id == int(run_id))).mappings().first()
        if r is None:
            raise StoreError(f"no run {run_id} in the history ({self.where()})")
        return _run(r)

    def where(self) -> str:
        return self._sqlite_path() or display_url(self.url)


class _Guard:
    """Turn database errors into one-line StoreErrors."""

    def __init__(self, store: Store, what: str):
        self.store, self.what = store, what

    def __enter__(self) -> None:
        return None

    def __exit__(self, et, exc, tb) -> None:  # never swallows: lets the exception through, or raises a StoreError
        if exc is None or isinstance(exc, StoreError):
            return None
        try:
            import sqlalchemy.exc as sae
        except ImportError:  # pragma: no cover
            return None
        if isinstance(exc, sae.SQLAlchemyError):
            raise StoreError(f"cannot {self.what} history database {self.store.where()}: {_why(exc)}") from None
        return None


def _why(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    return redact_text(text)[:300]


def _sqlite_pragmas(engine) -> None:
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):  # pragma: no cover - exercised by every SQLite test
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (IMMEDIATE: writers queue, no upgrade deadlock)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 60000")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # pragma: no cover
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def _known_revisions() -> set[str]:
    vdir = os.path.join(os.path.dirname(__file__), "migrations", "versions")
    return {name.split("_", 1)[0] for name in os.listdir(vdir) if name[:4].isdigit() and name.endswith(".py")}


def _loads(text: Any, default: Any) -> Any:
    try:
        return json.loads(text) if text else default
    except (TypeError, ValueError):
        return default


def _snap(r: Mapping[str, Any]) -> SnapshotRecord:
    return SnapshotRecord(id=int(r["id"]), uid=r["uid"], created_at=r["created_at"], label=r["label"],
                          host=r["host"] or "", python=r["python"] or "", score=r["score"], good=bool(r["good"]),
                          good_at=r["good_at"], summary=_loads(r["summary"], {}))


def _run(r: Mapping[str, Any]) -> RunRecord:
    return RunRecord(id=int(r["id"]), uid=r["uid"], kind=r["kind"], snapshot_id=r["snapshot_id"],
                     started_at=r["started_at"], finished_at=r["finished_at"], status=r["status"],
                     level=r["level"], host=r["host"] or "", summary=_loads(r["summary"], {}),
                     results=_loads(r["results"], []), meta=_loads(r["meta"], {}))
