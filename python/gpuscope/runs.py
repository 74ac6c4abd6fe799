"""gpuscope's run databases from Python: read_run() as pandas DataFrames, analyze() as the JSON
analysis (`gpuscope analyze --json`) in Python objects. docs/database.md describes the tables."""
import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from typing import Any

from .errors import GpuscopeError


def _pandas():
    try:
        import pandas
    except ImportError:
        raise GpuscopeError("read_run needs pandas (pip install pandas, or apt install "
                            "python3-pandas)") from None
    return pandas


@dataclass
class Run:
    """A run database's tables as DataFrames. samples: one row per GPU per sample, with
    `time` (UTC) and `elapsed_s` (from the GPU's first sample) added; gpus: the devices with
    each GPU's sample count and mean of the main metrics; phases and events as stored; runs:
    the profiled processes."""
    path: str
    runs: Any
    gpus: Any
    samples: Any
    phases: Any
    events: Any


def _connect(path):
    if not os.path.isfile(path):
        raise GpuscopeError(f"{path}: no such file; give a run database written by gpuscope "
                            "profile, import or merge")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        con.execute("SELECT 1 FROM runs LIMIT 1")
    except sqlite3.DatabaseError as e:
        raise GpuscopeError(f"{path} is not a gpuscope run database ({e}); give one written by "
                            "gpuscope profile, import or merge") from None
    return con


def _columns(con, table):
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def read_run(path):
    """The run database at `path` as a Run of DataFrames (read-only; a database being written
    reads as far as it was committed)."""
    pd = _pandas()
    con = _connect(path)
    try:
        runs = pd.read_sql("SELECT * FROM runs", con)
        samples = pd.read_sql("SELECT * FROM samples ORDER BY run_id, device_index, mono_ns", con)
        if len(samples):
            samples["time"] = pd.to_datetime(samples["wall_ns"], unit="ns", utc=True)
            first = samples.groupby(["run_id", "device_index"])["mono_ns"].transform("min")
            samples["elapsed_s"] = (samples["mono_ns"] - first) / 1e9
        gpus = pd.read_sql("SELECT * FROM devices ORDER BY run_id, device_index", con)
        wanted = [c for c in ("power_w", "gpu_util_pct", "sm_active_pct", "memory_used_bytes")
                  if c in samples.columns]
        if len(samples) and len(gpus):
            summary = samples.groupby(["run_id", "device_index"]).agg(
                samples=("mono_ns", "size"), **{f"mean_{c}": (c, "mean") for c in wanted})
            gpus = gpus.merge(summary.reset_index(), on=["run_id", "device_index"], how="left")
        phases = (pd.read_sql("SELECT * FROM phases ORDER BY run_id, start_mono_ns", con)
                  if _columns(con, "phases") else pd.DataFrame())
        events = pd.read_sql("SELECT * FROM events ORDER BY run_id, mono_ns", con)
    finally:
        con.close()
    return Run(path, runs, gpus, samples, phases, events)


def _binary():
    found = os.environ.get("GPUSCOPE_BINARY") or shutil.which("gpuscope")
    if not found:
        raise GpuscopeError("analyze needs the gpuscope program: install gpuscope or set "
                            "GPUSCOPE_BINARY to its path")
    return found


def analyze(paths, *args):
    """`gpuscope analyze --json PATHS ARGS...` as Python objects: `paths` a path or a list of
    them (run databases, folders of ranks, logs: whatever analyze reads), `args` further options
    ("--region", "DE"). Raises GpuscopeError with gpuscope's own message when it fails."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    command = [_binary(), "analyze", "--json", *map(os.fspath, paths), *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        message = done.stderr.strip() or f"gpuscope analyze exited with {done.returncode}"
        raise GpuscopeError(message.removeprefix("gpuscope: error: "), done.returncode)
    return json.loads(done.stdout)
