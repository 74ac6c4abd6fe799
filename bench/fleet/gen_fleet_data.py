#!/usr/bin/env python3
"""A synthetic day of a GPU site, for bench/fleet/bench_fleet.sh: SLURM's jobs and the series
gpuscope serve left in VictoriaMetrics for them.

The site: NODES nodes (gpu0001...) of 4 H100s, scraped every 30 s (dcgm-exporter's and jobstats'
default) with a per-node offset. Jobs are packed onto the GPUs over the day: on most nodes jobs
of 1, 2 or 4 GPUs (some array tasks), on a tenth of them, in groups of 4 nodes, multi-node jobs
of 8 and 16 GPUs; lengths from 5 minutes to many hours (log-uniform), a few minutes' gap
between jobs. Some jobs leave their GPUs idle, some multi-GPU jobs have a straggler GPU, a few
an Xid error; states COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL. Jobs
still running at the end of the day are printed RUNNING, as sacct would.

Each GPU has the series `gpuscope jobs` asks of gpuscope serve: gpu_util, sm_active,
sm_occupancy, fp64/fp32/fp16/tensor active (ratios), memory used and free (bytes), power (W), an
energy counter integrating that power exactly (J), and the three health series (Xid errors,
uncorrected volatile ECC errors, row remap failure), with serve's labels (uuid, gpu, hostname)
and the scrape's (instance, job). While a job's process is on the GPU its samples also carry
`slurm_job_id`, from the second scrape after the job's start (as serve finds the process a
scrape late) until its end; the GPU's series without the label hold the samples in between.

  sacct     writes the jobs as `sacct --allusers --allocations --parsable2 --noheader --format
            JobIDRaw,JobID,User,Account,Partition,State,Start,End,NodeList,AllocTRES,ExitCode,
            JobName` prints them (times in the local zone)
  vmimport  POSTs the series to VictoriaMetrics' /api/v1/import as JSON lines, streamed and
            chunked one GPU at a time (bounded memory)
  squeue    prints the jobs still running at the end as Slurm 22.05's `squeue --json` (for
            bench/guard)
  sinfo     prints the nodes as `sinfo --Node --noheader --format=%N|%R|%T` (for bench/guard)
  summary   prints what the day holds (jobs, ended jobs, series, samples)
"""
import argparse
import http.client
import json
import math
import random
import sys
import time
import urllib.parse

STEP_S = 30
GPUS_PER_NODE = 4
MEMORY_BYTES = 85520809984  # an H100 80GB as NVML reports it
USERS = 150
ACCOUNTS = 30
MULTI_NODE_SHARE = 0.1  # of the nodes, in groups of 4, run the 8- and 16-GPU jobs


class Job:
    __slots__ = ("raw", "shown", "user", "account", "partition", "state", "exit", "start",
                 "end", "nodes", "gpus", "name", "idle", "straggler", "xid", "running")


def host(n):
    return f"gpu{n + 1:04d}"


def hostlist(nodes):
    """sacct's compressed form of consecutive nodes: gpu0005 or gpu[0005-0008]."""
    if len(nodes) == 1:
        return host(nodes[0])
    return f"gpu[{nodes[0] + 1:04d}-{nodes[-1] + 1:04d}]"


def job_length_s(rng, lo_min, hi_min):
    return int(60 * math.exp(rng.uniform(math.log(lo_min), math.log(hi_min))))


def schedule(a):
    """Every job of the day, and per GPU (node, index) its jobs in time order."""
    rng = random.Random(a.seed)
    day_end = a.start + a.hours * 3600
    users = [(f"user{u:03d}", f"acct{(u * 7) % ACCOUNTS:02d}") for u in range(USERS)]
    weights = [1 / (u + 1) ** 0.8 for u in range(USERS)]  # a few heavy users
    jobs = []
    next_id = [1_000_000]

    def new_job(nodes, gpus, start, length, partition, name):
        j = Job()
        next_id[0] += 1
        j.raw = str(next_id[0])
        j.shown = j.raw
        j.user, j.account = rng.choices(users, weights)[0]
        j.partition = partition
        j.start = start
        j.end = start + length
        j.nodes = nodes
        j.gpus = gpus
        j.name = name
        j.idle = rng.random() < 0.05
        j.straggler = gpus > 1 and not j.idle and rng.random() < 0.2
        j.xid = rng.random() < 0.002
        j.running = j.end > day_end
        r = rng.random()
        j.state, j.exit = (("COMPLETED", "0:0") if r < 0.80 else ("FAILED", "1:0") if r < 0.88
                           else ("CANCELLED by 0", "0:15") if r < 0.93 else
                           ("TIMEOUT", "0:1") if r < 0.97 else ("OUT_OF_MEMORY", "0:125")
                           if r < 0.99 else ("NODE_FAIL", "0:0"))
        if j.running:
            j.state, j.exit = "RUNNING", "0:0"
        jobs.append(j)
        return j

    per_gpu = {}  # (node, gpu) -> [(job, first gpu index of it on the node)]
    multi = int(a.nodes * MULTI_NODE_SHARE) // 4 * 4
    # Multi-node groups: 4 nodes; a 16-GPU job takes all, an 8-GPU job a pair.
    for g0 in range(0, multi, 4):
        free = [a.start + rng.randint(0, 1800)] * 4
        while min(free) < day_end:
            if rng.random() < 0.4:
                nodes = [g0, g0 + 1, g0 + 2, g0 + 3]
            else:
                pair = 0 if free[0] <= free[2] else 2
                nodes = [g0 + pair, g0 + pair + 1]
            start = max(free[n - g0] for n in nodes) + rng.randint(30, 600)
            if start >= day_end:
                for n in nodes:
                    free[n - g0] = day_end
                continue
            j = new_job(nodes, 4 * len(nodes), start, job_length_s(rng, 20, 16 * 60), "large",
                        rng.choice(["train-llm", "pretrain", "finetune-70b", "md-run"]))
            for n in nodes:
                free[n - g0] = j.end
                for g in range(GPUS_PER_NODE):
                    per_gpu.setdefault((n, g), []).append(j)
    # Single-node jobs of 1, 2 or 4 GPUs, each on the GPUs of its node free first.
    array = None
    for n in range(multi, a.nodes):
        free = [a.start + rng.randint(0, 900) for _ in range(GPUS_PER_NODE)]
        while min(free) < day_end:
            r = rng.random()
            size = 1 if r < 0.55 else 2 if r < 0.75 else 4
            gpus = sorted(range(GPUS_PER_NODE), key=lambda g: free[g])[:size]
            start = max(free[g] for g in gpus) + rng.randint(10, 300)
            if start >= day_end:
                for g in gpus:
                    free[g] = day_end
                continue
            partition = "debug" if rng.random() < 0.05 else "gpu"
            length = job_length_s(rng, 5, 30) if partition == "debug" else job_length_s(rng, 5, 20 * 60)
            j = new_job([n], size, start, length, partition,
                        rng.choice(["train", "eval", "jupyter", "inference", "sweep", "bash"]))
            if size == 1 and rng.random() < 0.1:  # an array task
                if array is None or array[1] >= 20:
                    array = [j.raw, 0]
                j.shown = f"{array[0]}_{array[1]}"
                array[1] += 1
            for g in gpus:
                free[g] = j.end
                per_gpu.setdefault((n, g), []).append(j)
    for lst in per_gpu.values():
        lst.sort(key=lambda j: j.start)
    return jobs, per_gpu


def sacct_time(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


def write_sacct(a, out):
    jobs, _ = schedule(a)
    for j in sorted(jobs, key=lambda j: j.start):
        tres = (f"billing={16 * j.gpus},cpu={16 * j.gpus},gres/gpu:h100={j.gpus},gres/gpu={j.gpus},"
                f"mem={240 * j.gpus}G,node={len(j.nodes)}")
        end = "Unknown" if j.running else sacct_time(j.end)
        out.write(f"{j.raw}|{j.shown}|{j.user}|{j.account}|{j.partition}|{j.state}|"
                  f"{sacct_time(j.start)}|{end}|{hostlist(j.nodes)}|{tres}|{j.exit}|{j.name}\n")


def write_squeue(a, out):
    """The jobs running at the window's end as Slurm 22.05's `squeue --json` prints them."""
    jobs, _ = schedule(a)
    records = []
    for j in jobs:
        if not j.running:
            continue
        array_id, task = (j.shown.split("_") + [None])[:2]
        records.append({
            "job_id": int(j.raw), "user_name": j.user, "account": j.account,
            "partition": j.partition, "qos": "normal", "name": j.name, "job_state": "RUNNING",
            "nodes": hostlist(j.nodes), "batch_flag": j.name != "jupyter",
            "tres_alloc_str": f"cpu={16 * j.gpus},node={len(j.nodes)},gres/gpu={j.gpus}",
            "start_time": j.start, "time_limit": 1440,
            "array_job_id": int(array_id) if task is not None else 0,
            "array_task_id": int(task) if task is not None else None,
            "het_job_id": 0, "het_job_offset": 0})
    json.dump({"meta": {"Slurm": {"version": {"major": 22, "micro": 8, "minor": 5},
                                  "release": "22.05.8"}},
               "errors": [], "jobs": records}, out)


def write_sinfo(a, out):
    """`sinfo --Node --noheader --format=%N|%R|%T` of the site's nodes."""
    for n in range(a.nodes):
        partitions = ["large"] if n < int(a.nodes * MULTI_NODE_SHARE) // 4 * 4 else ["gpu", "debug"]
        for partition in partitions:
            out.write(f"{host(n)}|{partition}|mixed\n")


# --- series ---------------------------------------------------------------------------------

Q = 1000  # utilisation quantised to 0.1 %: every series' value comes from a table by it

NAMES = ["gpuscope_gpu_util_ratio", "gpuscope_sm_active_ratio", "gpuscope_sm_occupancy_ratio",
         "gpuscope_fp64_active_ratio", "gpuscope_fp32_active_ratio", "gpuscope_fp16_active_ratio",
         "gpuscope_tensor_active_ratio", "gpuscope_power_watts"]


def tables():
    r3 = lambda v: repr(round(v, 3))
    t = {}
    t["gpuscope_gpu_util_ratio"] = [r3(q / Q) for q in range(Q + 1)]
    t["gpuscope_sm_active_ratio"] = [r3(0.9 * q / Q) for q in range(Q + 1)]
    t["gpuscope_sm_occupancy_ratio"] = [r3(0.4 * q / Q) for q in range(Q + 1)]
    t["gpuscope_fp64_active_ratio"] = ["0"] * (Q + 1)
    t["gpuscope_fp32_active_ratio"] = [r3(0.08 * q / Q) for q in range(Q + 1)]
    t["gpuscope_fp16_active_ratio"] = [r3(0.02 * q / Q) for q in range(Q + 1)]
    t["gpuscope_tensor_active_ratio"] = [r3(0.55 * q / Q) for q in range(Q + 1)]
    power = [round(70 + 630 * q / Q, 1) for q in range(Q + 1)]
    t["gpuscope_power_watts"] = [repr(p) for p in power]
    return t, power


def utilisation(rng, n, job, slow):
    """A job-GPU's utilisation per step (0..Q): the job's phases of compute, input waits and
    communication (the same on all its GPUs and nodes, from its id), this GPU's noise;
    a straggler GPU (`slow`) 30 % less active."""
    if job.idle:
        return [0] * n
    phases = random.Random(int(job.raw) * 31)
    out = []
    left = 0
    level = 0.0
    gauss = rng.gauss
    scale = 0.7 if slow else 1.0
    for _ in range(n):
        if left == 0:
            k = phases.random()
            level = (phases.uniform(0.0, 0.1) if k < 0.1 else phases.uniform(0.3, 0.6)
                     if k < 0.3 else phases.uniform(0.75, 1.0))
            left = phases.randint(4, 40)
        left -= 1
        v = int((level + gauss(0, 0.03)) * scale * Q)
        out.append(0 if v < 0 else Q if v > Q else v)
    return out


def gpu_segments(a, node, g, gjobs, rng):
    """Per step of the day: (job or None, utilisation q); the job's label from its second scrape
    after its start until its end. The scrape of this node happens at start + offset + i*STEP."""
    offset = (node * 7) % STEP_S
    steps = a.hours * 3600 // STEP_S
    t0 = a.start + offset
    owner = [None] * steps
    util = [0] * steps
    for j in gjobs:
        first = max(0, -(-(j.start - t0) // STEP_S))  # first scrape at or after the start
        last = min(steps - 1, (j.end - t0) // STEP_S)  # last scrape at or before the end
        if last < first:
            continue
        slow = j.straggler and g == int(j.raw) % GPUS_PER_NODE and node == j.nodes[0]
        util[first:last + 1] = utilisation(rng, last - first + 1, j, slow)
        for i in range(first + 1, last + 1):  # labelled from the second scrape
            owner[i] = j
    return t0, owner, util


def gpu_lines(a, node, g, gjobs, tabs, power, ts_cache):
    rng = random.Random(a.seed * 1_000_003 + node * 17 + g)
    uuid = f"GPU-{rng.getrandbits(32):08x}-{node:04x}-{g:04x}-fleet-{rng.getrandbits(48):012x}"
    hn = host(node)
    base = {"uuid": uuid, "gpu": str(g), "hostname": hn, "instance": f"{hn}:9400",
            "job": "gpuscope"}
    t0, owner, util = gpu_segments(a, node, g, gjobs, rng)
    steps = len(util)
    ts = ts_cache.get(t0)
    if ts is None:
        ts = [str((t0 + i * STEP_S) * 1000) for i in range(steps)]
        ts_cache.clear()
        ts_cache[t0] = ts
    # The energy counter (J since the driver loaded) and xid counter over the whole day.
    e = rng.uniform(1e9, 5e9)
    energy = []
    for q in util:
        energy.append(repr(round(e, 3)))
        e += power[q] * STEP_S
    xid = []
    count = 0
    prev = None
    for i in range(steps):
        j = owner[i]
        if j is not None and j.xid and j is not prev and j.nodes[0] == node and g == 0:
            count += 1  # an Xid at the job's first labelled sample
        prev = j
        xid.append(count)
    # Group the steps by who owns them (None: the unlabelled series).
    groups = {}
    for i, j in enumerate(owner):
        groups.setdefault(j, []).append(i)
    out = []
    idle_mem = float(512 * 2**20)
    for j, idx in groups.items():
        labels = dict(base)
        if j is not None:
            labels["slurm_job_id"] = j.raw
            mem = float(rng.randint(8, 78) * 2**30) if not j.idle else float(600 * 2**20)
        else:
            mem = None
        tss = ",".join([ts[i] for i in idx])
        qs = [util[i] for i in idx]
        n = len(idx)

        def line(name, values, extra=None):
            lab = {"__name__": name, **labels, **(extra or {})}
            out.append(f'{{"metric":{json.dumps(lab)},"values":[{values}],"timestamps":[{tss}]}}\n')

        for name in NAMES:
            tab = tabs[name]
            line(name, ",".join([tab[q] for q in qs]))
        used = idle_mem if mem is None else mem  # between jobs: a driver context
        line("gpuscope_memory_used_bytes", ",".join([repr(used)] * n))
        line("gpuscope_memory_free_bytes", ",".join([repr(MEMORY_BYTES - used)] * n))
        line("gpuscope_energy_joules_total", ",".join([energy[i] for i in idx]))
        line("gpuscope_gpu_xid_errors_total", ",".join([str(xid[i]) for i in idx]))
        line("gpuscope_gpu_ecc_errors_total", ",".join(["0"] * n),
             {"type": "uncorrected", "counter": "volatile"})
        line("gpuscope_gpu_row_remap_failure", ",".join(["0"] * n))
    return out


SERIES_PER_SEGMENT = len(NAMES) + 6


def vm_chunks(a, stats):
    jobs, per_gpu = schedule(a)
    tabs, power = tables()
    ts_cache = {}
    t0 = time.time()
    for node in range(a.nodes):
        chunk = []
        for g in range(GPUS_PER_NODE):
            lines = gpu_lines(a, node, g, per_gpu.get((node, g), []), tabs, power, ts_cache)
            stats["series"] += len(lines)
            chunk.extend(lines)
        data = "".join(chunk).encode()
        stats["bytes"] += len(data)
        yield data
        if a.progress and (node + 1) % 100 == 0:
            print(f"   {node + 1}/{a.nodes} nodes sent, {time.time() - t0:.0f} s", file=sys.stderr)


def vmimport(a):
    url = urllib.parse.urlsplit(a.url)
    stats = {"series": 0, "bytes": 0}
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=7200)
    conn.request("POST", "/api/v1/import", body=vm_chunks(a, stats), encode_chunked=True,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    body = r.read()
    if r.status // 100 != 2:
        sys.exit(f"import failed: {r.status} {body[:500]!r}")
    print(f"   {stats['series']} series pieces, {stats['bytes'] / 2**30:.2f} GiB of JSON sent",
          file=sys.stderr)


def summary(a):
    jobs, per_gpu = schedule(a)
    ended = [j for j in jobs if not j.running]
    sizes = {}
    for j in ended:
        sizes[j.gpus] = sizes.get(j.gpus, 0) + 1
    gpu_h = sum((j.end - j.start) * j.gpus for j in ended) / 3600
    steps = a.hours * 3600 // STEP_S
    samples = a.nodes * GPUS_PER_NODE * steps * SERIES_PER_SEGMENT
    print(f"jobs {len(jobs)} ended {len(ended)} running {len(jobs) - len(ended)}; "
          f"by GPUs {dict(sorted(sizes.items()))}; {gpu_h:.0f} GPU-hours ended "
          f"({gpu_h / (a.nodes * GPUS_PER_NODE * a.hours):.0%} of the site's); "
          f"{samples / 1e6:.0f} M samples")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["sacct", "squeue", "sinfo", "vmimport", "summary"])
    p.add_argument("--nodes", type=int, default=2000)
    p.add_argument("--start", type=int, required=True, help="the day's start, Unix seconds")
    p.add_argument("--hours", type=int, default=24)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--url", help="VictoriaMetrics base URL (vmimport)")
    p.add_argument("--progress", action="store_true")
    a = p.parse_args()
    if a.mode == "sacct":
        write_sacct(a, sys.stdout)
    elif a.mode == "squeue":
        write_squeue(a, sys.stdout)
    elif a.mode == "sinfo":
        write_sinfo(a, sys.stdout)
    elif a.mode == "summary":
        summary(a)
    else:
        vmimport(a)


if __name__ == "__main__":
    main()
