#!/usr/bin/env python3
"""A year of a GPU site as gpuscope's accounting database, for bench/fleet/bench_fleet.sh.

Writes JOBS jobs (7 M: a year of 2,000 nodes x 4 GPUs, about 19,000 a day) ending over the 365
days up to now, with the schema of src/store/accounting_db.cpp (read from that file, so the
bench follows it): `jobs` with every column filled as an update fills it (local end day and ISO
week, GPU-hours, idle GPU-hours, utilization, SM active, score, energy, CO2 at 475 g/kWh, flags;
1 % of the jobs without figures, source 'none'), `job_gpus` left empty (usage and the job list
do not read it), `usage_days` summed from `jobs` by one INSERT ... SELECT ... GROUP BY as
AccountingDb::add_jobs adds each job to its day, `meta` accounting_schema=1 and one done update.
"""
import argparse
import math
import os
import random
import re
import sqlite3
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "src", "store", "accounting_db.cpp")
USERS = 150
ACCOUNTS = 30
G_PER_KWH = 475.0
DAY_MS = 86_400_000


def schema():
    text = open(SOURCE).read()
    m = re.search(r'kSchema = R"\((.*?)\)";', text, re.S)
    if not m:
        sys.exit(f"gen_accounting_db: no kSchema in {SOURCE}")
    return m.group(1)


def local_day(ms):
    t = time.localtime(ms // 1000)
    return time.strftime("%Y-%m-%d", t), time.strftime("%G-W%V", t)


def jobs_of_day(rng, day_ms, count, next_id, users, weights, days_cache):
    rows = []
    for _ in range(count):
        next_id += 1
        r = rng.random()
        gpus = 1 if r < 0.58 else 2 if r < 0.78 else 4 if r < 0.982 else 8 if r < 0.993 else 16
        partition = "large" if gpus > 4 else "debug" if rng.random() < 0.05 else "gpu"
        length_ms = int(60_000 * math.exp(rng.uniform(math.log(5), math.log(20 * 60))))
        end = day_ms + rng.randrange(DAY_MS)
        start = end - length_ms
        user, account = rng.choices(users, weights)[0]
        nodes = max(1, gpus // 4)
        first = rng.randrange(2000 - nodes)
        node_list = ",".join(f"gpu{first + k + 1:04d}" for k in range(nodes))
        gpu_hours = length_ms / 3.6e6 * gpus
        s = rng.random()
        state, exit_code = (("COMPLETED", 0) if s < 0.8 else ("FAILED", 1) if s < 0.88 else
                            ("CANCELLED", 0) if s < 0.93 else ("TIMEOUT", 0) if s < 0.97 else
                            ("OUT_OF_MEMORY", 0))
        end_day, end_week = days_cache.get(end // 3_600_000) or days_cache.setdefault(
            end // 3_600_000, local_day(end))
        if rng.random() < 0.01:  # the server had nothing: GPU-hours only
            figures = (None,) * 9
            flags, source = "", "none"
        else:
            idle = rng.random() < 0.06
            util = rng.uniform(0, 0.8) if idle else rng.uniform(15, 98)
            idle_share = rng.uniform(0.6, 1.0) if idle else rng.uniform(0, 0.15)
            energy = gpu_hours * 3600 * (70 + 6 * util)
            flag = ("idle" if idle else "straggler" if gpus > 1 and rng.random() < 0.1 else
                    "too-large" if rng.random() < 0.03 else "")
            figures = (gpu_hours * idle_share, util, util * 0.85,
                       float(rng.randint(1, 80) * 2**30), energy, None,
                       energy / 3.6e6 * G_PER_KWH, G_PER_KWH, util / 110)
            flags, source = flag, "tsdb"
        rows.append((str(next_id), str(next_id), rng.choice(["train", "eval", "jupyter", "sweep"]),
                     user, account, partition, state, exit_code, start, end, end_day, end_week,
                     node_list, gpus, "h100", gpu_hours, *figures, flags, source, "", 1))
    rows.sort(key=lambda r: r[9])
    return rows, next_id


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--jobs", type=int, default=7_000_000)
    p.add_argument("--days", type=int, default=365)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if os.path.exists(a.out):
        sys.exit(f"gen_accounting_db: {a.out} exists")
    rng = random.Random(a.seed)
    users = [(f"user{u:03d}", f"acct{(u * 7) % ACCOUNTS:02d}") for u in range(USERS)]
    weights = [1 / (u + 1) ** 0.8 for u in range(USERS)]
    now_ms = int(time.time() * 1000)
    first_day = (now_ms // DAY_MS - a.days) * DAY_MS
    db = sqlite3.connect(a.out)
    db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                     "PRAGMA cache_size = -400000;")
    db.executescript(schema())
    db.execute("INSERT INTO meta VALUES('accounting_schema', '1')")
    insert = "INSERT INTO jobs VALUES(" + ",".join("?" * 29) + ")"
    next_id = 10_000_000
    per_day = a.jobs / a.days
    days_cache = {}
    written = 0
    t0 = time.time()
    for d in range(a.days):
        count = int(round(per_day * (d + 1))) - int(round(per_day * d))
        rows, next_id = jobs_of_day(rng, first_day + d * DAY_MS, count, next_id, users, weights,
                                    days_cache)
        rows = [r for r in rows if r[9] < now_ms]
        db.executemany(insert, rows)
        written += len(rows)
        if (d + 1) % 30 == 0:
            db.commit()
            print(f"   {d + 1} days, {written} jobs, {time.time() - t0:.0f} s", file=sys.stderr)
    db.commit()
    # The day sums as add_jobs keeps them (store/accounting_write.cpp, add_to_day).
    db.execute("""
      INSERT INTO usage_days
      SELECT end_day, max(end_week), user, account, partition, gpu_model, count(*),
             sum(gpu_hours), sum(coalesce(idle_gpu_hours, 0)), sum(coalesce(energy_j, 0)),
             sum(coalesce(co2_g, 0)),
             sum(iif(util_pct IS NULL, 0, gpu_hours)), sum(coalesce(util_pct * gpu_hours, 0)),
             sum(iif(sm_active_pct IS NULL, 0, gpu_hours)),
             sum(coalesce(sm_active_pct * gpu_hours, 0)),
             sum(iif(score IS NULL, 0, gpu_hours)), sum(coalesce(score * gpu_hours, 0)),
             sum(source = 'none'), sum(flags <> '')
      FROM jobs GROUP BY end_day, user, account, partition, gpu_model""")
    db.execute("INSERT INTO updates(id, started_ms, finished_ms, from_ms, to_ms, covered_until_ms,"
               " status, jobs_added, server, message) VALUES(1, ?, ?, ?, ?, ?, 'done', ?, "
               "'VictoriaMetrics at http://127.0.0.1:8428', '')",
               (now_ms, now_ms, first_day, now_ms, now_ms, written))
    db.commit()
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    print(f"   {written} jobs in {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
