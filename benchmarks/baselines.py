"""Raw SQLite and huey baselines for ``bench_jobs.py`` (nothing here touches the project's API).

Adapted from ``research/bench_queues.py`` (shared as ``/work/shared/reference/bench_queues.py``,
the script behind perf-anchors.md Part B). Copied from it, with type hints and house formatting:

- ``RAW_DDL``, ``CLAIM_SQL``, ``COMPLETE_SQL`` and every other SQL string, **verbatim**, so that
  the ratios mean what perf-anchors.md says they mean;
- ``RawQueue`` (``put``, ``put_project``, ``put_batch``, ``claim``, ``complete``, the app-level
  ``BEGIN IMMEDIATE`` retry of ``raw_retry``), ``RawAdapter``, ``HueyAdapter``, ``make_adapter``
  restricted to ``raw``, ``raw_proj``, ``raw_retry`` and ``huey``;
- ``worker_main``, ``scenario_enqueue``, ``fill`` and ``scenario_drain`` (the drain harness:
  spawned workers, a barrier, the clock from barrier release to the last worker's empty poll);
  the only change is that workers also return their raw latency samples so pooled
  percentiles can be computed;
- ``extras`` split into ``build_raw_history``, ``raw_history_drain``, ``raw_pages``,
  ``raw_counts`` and ``raw_feed`` (the 1e6-row anchors of Part B5).

Added here (not in ``bench_queues.py``), as *diagnostics* reported for information only:
``raw_reference_frames`` (WAL frames written per commit by the ``raw`` and ``raw_proj`` loops)
and ``commit_page_cost`` (what one dirty page adds to a commit on this machine). With the WAL
frames per commit that ``bench_jobs.py`` measures for the API, they split the gap to ``raw``
into "pages the schema writes" and "Python work per call".
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import secrets
import shutil
import sqlite3
import statistics
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_S = 30.0
LEASE_S = 300.0
PAYLOAD = "x" * 64  # small payload; queue overhead dominates
WAL_FRAME = 4096 + 24


# --------------------------------------------------------------------------
# raw sqlite3 baseline (verbatim SQL from bench_queues.py)
# --------------------------------------------------------------------------

RAW_DDL = [
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id INTEGER PRIMARY KEY, state TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT 0,"
    " payload TEXT, lease_token TEXT, lease_expires REAL, worker TEXT,"
    " created REAL NOT NULL, updated REAL NOT NULL)",
    # partial index: only claimable rows are indexed, so the claim probe is O(log n)
    # regardless of how many finished rows the table holds
    "CREATE INDEX IF NOT EXISTS jobs_claimable ON jobs(priority DESC, id) WHERE state = 'requested'",
    "CREATE TABLE IF NOT EXISTS outputs (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, data TEXT)",
    "CREATE TABLE IF NOT EXISTS activities (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
    " output_id INTEGER, agent TEXT, started REAL, ended REAL)",
    "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
    " job_id INTEGER, ts REAL NOT NULL)",
]

# The claim probe names its index (see bench_queues.py): INDEXED BY keeps it O(log n).
CLAIM_SQL = (
    "UPDATE jobs SET state = 'claimed', lease_token = ?, lease_expires = ?, worker = ?, updated = ?"
    " WHERE id = (SELECT id FROM jobs INDEXED BY jobs_claimable WHERE state = 'requested'"
    " ORDER BY priority DESC, id LIMIT 1)"
    " RETURNING id, payload"
)
COMPLETE_SQL = (
    "UPDATE jobs SET state = 'succeeded', lease_token = NULL, updated = ?"
    " WHERE id = ? AND state = 'claimed' AND lease_token = ? AND lease_expires > ?"
)


def raw_connect(path: str, sync: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={sync}")
    return conn


def raw_init(path: str, sync: str) -> None:
    conn = raw_connect(path, sync)
    for stmt in RAW_DDL:
        conn.execute(stmt)
    conn.close()


class RawQueue:
    """Minimal claim/complete store; ``project`` adds output+activity+event writes."""

    def __init__(
        self,
        path: str,
        sync: str = "NORMAL",
        project: bool = False,
        worker: str = "w",
        app_retry: bool = False,
    ) -> None:
        self.conn = raw_connect(path, sync)
        self.claim_sql = CLAIM_SQL
        self.project = project
        self.worker = worker
        self.app_retry = app_retry
        if app_retry:
            # no SQLite busy handler: BEGIN IMMEDIATE fails fast and we retry ourselves
            self.conn.execute("PRAGMA busy_timeout=0")

    def _begin(self) -> None:
        if not self.app_retry:
            self.conn.execute("BEGIN IMMEDIATE")  # SQLite busy handler waits
            return
        deadline = time.perf_counter() + BUSY_TIMEOUT_S
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.perf_counter() > deadline:
                    raise
                time.sleep(random.uniform(0.0, 0.0005))

    def put(self, i: int) -> None:
        now = time.time()
        # autocommit: one implicit transaction per statement
        self.conn.execute(
            "INSERT INTO jobs (id, state, payload, created, updated) VALUES (?, 'requested', ?, ?, ?)",
            (i + 1, f"{i}:{PAYLOAD}", now, now),
        )

    def put_project(self, i: int) -> None:
        now = time.time()
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        c.execute(
            "INSERT INTO jobs (id, state, payload, created, updated) VALUES (?, 'requested', ?, ?, ?)",
            (i + 1, f"{i}:{PAYLOAD}", now, now),
        )
        c.execute("INSERT INTO events (kind, job_id, ts) VALUES ('requested', ?, ?)", (i + 1, now))
        c.execute("COMMIT")

    def put_batch(self, n: int) -> None:
        now = time.time()
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        c.executemany(
            "INSERT INTO jobs (id, state, payload, created, updated) VALUES (?, 'requested', ?, ?, ?)",
            ((i + 1, f"{i}:{PAYLOAD}", now, now) for i in range(n)),
        )
        c.execute("COMMIT")

    def claim(self) -> tuple[int, str, str] | None:
        c = self.conn
        now = time.time()
        token = secrets.token_hex(16)
        self._begin()
        try:
            row = c.execute(self.claim_sql, (token, now + LEASE_S, self.worker, now)).fetchone()
            if row is not None and self.project:
                c.execute("INSERT INTO events (kind, job_id, ts) VALUES ('claimed', ?, ?)", (row[0], now))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        if row is None:
            return None
        return row[0], token, row[1]

    def complete(self, job_id: int, token: str) -> None:
        c = self.conn
        now = time.time()
        self._begin()
        try:
            cur = c.execute(COMPLETE_SQL, (now, job_id, token, now))
            if cur.rowcount != 1:
                raise RuntimeError(f"lost lease on job {job_id}")
            if self.project:
                out = c.execute(
                    "INSERT INTO outputs (job_id, data) VALUES (?, ?)", (job_id, "result")
                ).lastrowid
                c.execute(
                    "INSERT INTO activities (job_id, output_id, agent, started, ended) VALUES (?, ?, ?, ?, ?)",
                    (job_id, out, self.worker, now, now),
                )
                c.execute("INSERT INTO events (kind, job_id, ts) VALUES ('succeeded', ?, ?)", (job_id, now))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def sync_mode(self) -> int:
        return int(self.conn.execute("PRAGMA synchronous").fetchone()[0])

    def close(self) -> None:
        self.conn.close()


# --------------------------------------------------------------------------
# adapters: init(dir), open(dir) -> handle, put(h, i), one(h) -> id | None
# --------------------------------------------------------------------------


def _db(dirpath: str) -> str:
    return os.path.join(dirpath, "q.db")


class RawAdapter:
    def __init__(self, sync: str, project: bool, app_retry: bool = False) -> None:
        self.sync, self.project, self.app_retry = sync, project, app_retry

    def init(self, d: str) -> None:
        raw_init(_db(d), self.sync)

    def open(self, d: str, worker: str = "w") -> RawQueue:
        return RawQueue(_db(d), self.sync, self.project, worker, self.app_retry)

    def put(self, h: RawQueue, i: int) -> None:
        if self.project:
            h.put_project(i)
        else:
            h.put(i)

    def one(self, h: RawQueue) -> int | None:
        got = h.claim()
        if got is None:
            return None
        job_id, token, payload = got
        h.complete(job_id, token)
        return int(payload.split(":", 1)[0])

    def sync_mode(self, h: RawQueue) -> int:
        return h.sync_mode()

    def close(self, h: RawQueue) -> None:
        h.close()


class HueyAdapter:
    """huey's ``SqliteHuey`` with its defaults (results on, ``synchronous`` left at FULL)."""

    name = "huey"

    def init(self, d: str) -> None:
        pass

    def open(self, d: str, worker: str = "w") -> tuple[Any, Any]:
        from huey import SqliteHuey

        h = SqliteHuey(name="bench", filename=_db(d), results=True)

        def noop(i: int) -> int:
            return i

        # huey keys its task registry by module + name; pin the module so the spawned
        # workers (whose main module is renamed) resolve the same key
        noop.__module__ = "baselines"
        return (h, h.task(name="bench_noop")(noop))

    def put(self, hh: tuple[Any, Any], i: int) -> None:
        hh[1](i)

    def one(self, hh: tuple[Any, Any]) -> int | None:
        h = hh[0]
        task = h.dequeue()
        if task is None:
            return None
        h.execute(task)
        return int(task.args[0])

    def sync_mode(self, hh: tuple[Any, Any]) -> int:
        return int(hh[0].storage.conn.execute("PRAGMA synchronous").fetchone()[0])

    def close(self, hh: tuple[Any, Any]) -> None:
        hh[0].storage.close()


Adapter = RawAdapter | HueyAdapter


def make_adapter(name: str) -> Adapter:
    if name == "raw":
        return RawAdapter("NORMAL", False)
    if name == "raw_proj":
        return RawAdapter("NORMAL", True)
    if name == "raw_retry":
        return RawAdapter("NORMAL", False, app_retry=True)
    if name == "huey":
        return HueyAdapter()
    raise ValueError(name)


def huey_available() -> bool:
    try:
        import huey  # noqa: F401
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------
# worker process and scenarios (from bench_queues.py)
# --------------------------------------------------------------------------


def worker_main(lib: str, d: str, wid: int, barrier: Any, results: Any, max_seconds: float) -> None:
    try:
        ad: Any = make_adapter(lib)
        h = ad.open(d, worker=f"w{wid}")
        ids: list[int] = []
        lat: list[float] = []
        errors, first_error = 0, None
        barrier.wait()
        t_end = time.perf_counter() + max_seconds
        empty_streak = 0
        while True:
            t0 = time.perf_counter()
            try:
                got = ad.one(h)
            except (sqlite3.OperationalError, RuntimeError) as exc:  # lock timeouts, lost leases
                errors += 1
                first_error = first_error or f"{type(exc).__name__}: {exc}"
                if errors > 1000:
                    raise RuntimeError(f"too many errors: {exc}") from exc
                continue
            lat.append(time.perf_counter() - t0)
            if got is None:
                # an empty answer can be transient under contention for queues that read
                # outside the write lock; confirm twice
                empty_streak += 1
                if empty_streak >= 3:
                    break
                continue
            empty_streak = 0
            ids.append(got)
            if time.perf_counter() > t_end:
                break
        done_t = time.perf_counter()
        ad.close(h)
        results.put(
            {"wid": wid, "ids": ids, "errors": errors, "first_error": first_error, "done": done_t, "lat": lat}
        )
    except BaseException:
        results.put({"wid": wid, "fatal": traceback.format_exc()})


def percentile(samples: list[float], p: float) -> float:
    """The p-quantile (0..1) of samples by the nearest-rank rule used in bench_queues.py."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def scenario_enqueue(lib: str, n: int, root: str) -> dict[str, Any]:
    d = tempfile.mkdtemp(prefix=f"{lib}-enq-", dir=root)
    ad: Any = make_adapter(lib)
    ad.init(d)
    h = ad.open(d)
    sync = ad.sync_mode(h)
    t0 = time.perf_counter()
    for i in range(n):
        ad.put(h, i)
    dt = time.perf_counter() - t0
    ad.close(h)
    shutil.rmtree(d, ignore_errors=True)
    return {"ops": n / dt, "secs": dt, "sync": sync}


def fill(lib: str, n: int, root: str) -> str:
    d = tempfile.mkdtemp(prefix=f"{lib}-fill-", dir=root)
    ad: Any = make_adapter(lib)
    ad.init(d)
    h = ad.open(d)
    if isinstance(ad, RawAdapter) and not ad.project:
        h.put_batch(n)  # untimed; identical rows to per-item put
    else:
        for i in range(n):
            ad.put(h, i)
    ad.close(h)
    return d


def run_together(
    target: Callable[..., None], workers: int, args: Callable[[int, Any, Any], tuple[Any, ...]]
) -> tuple[list[dict[str, Any]], float]:
    """Spawn ``workers`` processes running ``target(*args(w, barrier, results))``, start the
    clock when all of them wait at the barrier, and collect one result dict from each:
    (the results, the start on ``time.perf_counter``)."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(workers + 1), ctx.Queue()
    procs = [ctx.Process(target=target, args=args(w, barrier, results)) for w in range(workers)]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    outs = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return outs, t0


def scenario_drain(lib: str, d: str, n: int, workers: int, max_seconds: float) -> dict[str, Any]:
    outs, t0 = run_together(
        worker_main, workers, lambda w, barrier, results: (lib, d, w, barrier, results, max_seconds)
    )
    fatal = [o["fatal"] for o in outs if "fatal" in o]
    if fatal:
        return {"error": fatal[0].strip().splitlines()[-1], "ops": float("nan")}
    dt = max(o["done"] for o in outs) - t0
    all_ids = [i for o in outs for i in o["ids"]]
    uniq = set(all_ids)
    lat = [x for o in outs for x in o["lat"]]
    per_worker = sorted(len(o["ids"]) for o in outs)
    mean = sum(per_worker) / len(per_worker)
    return {
        "ops": len(uniq) / dt,
        "secs": dt,
        "claimed": len(all_ids),
        "unique": len(uniq),
        "duplicates": len(all_ids) - len(uniq),
        "missing": n - len(uniq),
        "errors": sum(o["errors"] for o in outs),
        "first_error": next((o["first_error"] for o in outs if o.get("first_error")), None),
        "per_worker": per_worker,
        "min_share": per_worker[0] / mean if mean else 0.0,
        "p50_ms": 1000 * percentile(lat, 0.50),
        "p99_ms": 1000 * percentile(lat, 0.99),
        "max_ms": 1000 * max(lat, default=0.0),
    }


def drain(lib: str, n: int, workers: int, root: str, max_seconds: float = 120.0) -> dict[str, Any]:
    """Fill ``n`` items (untimed), then drain them with ``workers`` processes."""
    d = fill(lib, n, root)
    try:
        return scenario_drain(lib, d, n, workers, max_seconds)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------------
# 1e6-row anchors (bench_queues.py ``extras``, split into parts)
# --------------------------------------------------------------------------


def median_us(fn: Callable[[], object], reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(ts)


def build_raw_history(root: str, history: int, ready: int) -> tuple[str, float]:
    """A raw database with ``history`` finished jobs (90/5/5), as many events, ``ready`` requested
    jobs and the general ``(state, id)`` list index; returns (dir, build seconds)."""
    d = tempfile.mkdtemp(prefix="extras-", dir=root)
    path = _db(d)
    raw_init(path, "NORMAL")
    c = raw_connect(path, "NORMAL")
    c.execute("CREATE INDEX IF NOT EXISTS jobs_state_id ON jobs(state, id)")
    states = ["succeeded"] * 90 + ["failed"] * 5 + ["cancelled"] * 5
    now = time.time()
    t0 = time.perf_counter()
    c.execute("BEGIN IMMEDIATE")
    c.executemany(
        "INSERT INTO jobs (id, state, payload, created, updated) VALUES (?, ?, ?, ?, ?)",
        ((i + 1, states[i % 100], f"{i}:{PAYLOAD}", now + i * 1e-3, now) for i in range(history)),
    )
    c.executemany(
        "INSERT INTO events (kind, job_id, ts) VALUES (?, ?, ?)",
        ((states[i % 100], i + 1, now) for i in range(history)),
    )
    c.executemany(
        "INSERT INTO jobs (id, state, payload, created, updated) VALUES (?, 'requested', ?, ?, ?)",
        ((history + i + 1, f"{i}:{PAYLOAD}", now, now) for i in range(ready)),
    )
    c.execute("COMMIT")
    c.execute("ANALYZE")
    c.close()
    return d, time.perf_counter() - t0


def raw_history_drain(d: str, ready: int, root: str) -> dict[str, float]:
    """Claim+complete W=1 of the ready jobs on top of the history vs an empty table (same indexes)."""
    with_history = scenario_drain("raw", d, ready, 1, 120.0)["ops"]
    d2 = fill("raw", ready, root)
    c3 = raw_connect(_db(d2), "NORMAL")
    c3.execute("CREATE INDEX IF NOT EXISTS jobs_state_id ON jobs(state, id)")  # same schema as above
    c3.close()
    empty = scenario_drain("raw", d2, ready, 1, 120.0)["ops"]
    shutil.rmtree(d2, ignore_errors=True)
    return {
        "drain_w1_with_history": with_history,
        "drain_w1_empty_history": empty,
        "history_ratio": with_history / empty,
    }


def raw_pages(d: str, history: int, ready: int, reps: int) -> dict[str, float]:
    """50-row keyset pages newest first (unfiltered and state = failed) at first/middle/last depth."""
    out: dict[str, float] = {}
    c = raw_connect(_db(d), "NORMAL")
    page = 50
    pos = {"p0": 0, "mid": history // 2, "end": history - page}
    q_key = "SELECT id, state, created FROM jobs WHERE id < ? ORDER BY id DESC LIMIT ?"
    q_key_f = "SELECT id, state, created FROM jobs WHERE state = 'failed' AND id < ? ORDER BY id DESC LIMIT ?"
    top = history + ready + 1
    nfailed = c.execute("SELECT count(*) FROM jobs WHERE state='failed'").fetchone()[0]
    for label, off in pos.items():
        out[f"page_keyset_{label}_us"] = median_us(
            lambda off=off: c.execute(q_key, (top - off, page)).fetchall(), reps
        )
        foff = {"p0": 0, "mid": nfailed // 2, "end": max(0, nfailed - page)}[label]
        cursor_id = c.execute(
            "SELECT id FROM jobs WHERE state='failed' ORDER BY id DESC LIMIT 1 OFFSET ?", (max(0, foff - 1),)
        ).fetchone()
        cid = (cursor_id[0] if cursor_id else top) if foff else top
        out[f"page_keyset_failed_{label}_us"] = median_us(
            lambda cid=cid: c.execute(q_key_f, (cid, page)).fetchall(), reps
        )
    c.close()
    return out


def raw_counts(d: str) -> dict[str, float]:
    c = raw_connect(_db(d), "NORMAL")
    out = {
        "count_all_us": median_us(lambda: c.execute("SELECT count(*) FROM jobs").fetchone(), 5),
        "count_failed_us": median_us(
            lambda: c.execute("SELECT count(*) FROM jobs WHERE state='failed'").fetchone(), 5
        ),
    }
    c.close()
    return out


def raw_feed(d: str, reps: int) -> dict[str, float]:
    """Event-feed polls: caught up, 100 behind, head lookup, and ``PRAGMA data_version``."""
    path = _db(d)
    c = raw_connect(path, "NORMAL")
    out: dict[str, float] = {}
    head = c.execute("SELECT max(seq) FROM events").fetchone()[0]
    q_feed = "SELECT seq, kind, job_id, ts FROM events WHERE seq > ? ORDER BY seq LIMIT 100"
    out["feed_poll_caught_up_us"] = median_us(lambda: c.execute(q_feed, (head,)).fetchall(), reps)
    out["feed_poll_100_behind_us"] = median_us(lambda: c.execute(q_feed, (head - 100,)).fetchall(), reps)
    out["feed_head_us"] = median_us(lambda: c.execute("SELECT max(seq) FROM events").fetchone(), reps)
    # polling from a second connection while the file is idle: the cheapest probe
    c2 = raw_connect(path, "NORMAL")
    out["feed_data_version_us"] = median_us(lambda: c2.execute("PRAGMA data_version").fetchone(), reps)
    c2.close()
    c.close()
    return out


# --------------------------------------------------------------------------
# diagnostics (not from bench_queues.py): what a commit costs per page it writes
# --------------------------------------------------------------------------


def commit_page_cost(root: str, n: int = 2000) -> dict[str, float]:
    """Microseconds per commit when a transaction dirties 1 page vs 16 pages (one row appended to
    each of K tables, WAL, NORMAL, default checkpointing); the slope is the cost of one page."""
    out: dict[str, float] = {}
    for k in (1, 16):
        d = tempfile.mkdtemp(prefix=f"pages{k}-", dir=root)
        c = raw_connect(_db(d), "NORMAL")
        for t in range(k):
            c.execute(f"CREATE TABLE t{t} (id INTEGER PRIMARY KEY, v TEXT)")
        t0 = time.perf_counter()
        for _ in range(n):
            c.execute("BEGIN IMMEDIATE")
            for t in range(k):
                c.execute(f"INSERT INTO t{t} (v) VALUES (?)", (PAYLOAD,))
            c.execute("COMMIT")
        out[f"txn_{k}_pages_us"] = 1e6 * (time.perf_counter() - t0) / n
        c.close()
        shutil.rmtree(d, ignore_errors=True)
    out["us_per_page"] = (out["txn_16_pages_us"] - out["txn_1_pages_us"]) / 15
    return out


def raw_reference_frames(root: str) -> dict[str, float]:
    """WAL frames per commit of the reference ``raw`` and ``raw_proj`` loops (for comparison)."""
    out: dict[str, float] = {}
    for lib in ("raw", "raw_proj"):
        d = tempfile.mkdtemp(prefix=f"{lib}-frames-", dir=root)
        ad = RawAdapter("NORMAL", lib == "raw_proj")
        ad.init(d)
        h = ad.open(d)
        h.conn.execute("PRAGMA wal_autocheckpoint = 0")
        wal = Path(f"{_db(d)}-wal")

        def frames(wal: Path = wal) -> int:
            return wal.stat().st_size // WAL_FRAME if wal.exists() else 0

        k = 200
        f0 = frames()
        for i in range(k):
            ad.put(h, i)
        f1 = frames()
        for _ in range(k):
            ad.one(h)
        f2 = frames()
        out[f"{lib}_frames_per_request"] = (f1 - f0) / k
        out[f"{lib}_frames_per_job_drain"] = (f2 - f1) / k
        ad.close(h)
        shutil.rmtree(d, ignore_errors=True)
    return out
