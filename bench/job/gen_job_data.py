#!/usr/bin/env python3
"""Synthetic `gpuscope serve` series of a past job, for bench/job/bench_job.sh.

Every GPU (labels gpu, uuid, hostname, plus the scrape's instance and job) gets the series serve
exports for an H100 with DCGM profiling: a utilisation profile that varies in phases (compute,
input waits, communication), power 100-700 W following it, an energy counter that integrates
that power exactly (J, 15 s steps), SM/tensor/DRAM/FP activity ratios, clocks, memory,
temperatures, PCIe/NVLink rates, clock event reasons, and gpuscope_gpu_info.

  openmetrics  writes OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`
  vmimport     POSTs VictoriaMetrics /api/v1/import JSON lines (streamed, chunked) to a URL

--metrics full: every family above (29 series per GPU); core: the 10 the analysis leans on most
(power, energy, power limit, GPU util, SM/tensor/DRAM active, SM clock, temperature, memory
used) plus gpuscope_gpu_info.
"""
import argparse
import http.client
import json
import math
import random
import sys
import urllib.parse

STEP_S = 15

# name, counter?, function of (u = utilisation 0..1 at this step, gpu constants) -> value
FULL = [
    "gpuscope_power_watts", "gpuscope_power_instant_watts", "gpuscope_power_limit_watts",
    "gpuscope_energy_joules_total", "gpuscope_energy_since_start_joules_total",
    "gpuscope_gpu_util_ratio", "gpuscope_mem_util_ratio", "gpuscope_sm_clock_hertz",
    "gpuscope_mem_clock_hertz", "gpuscope_graphics_clock_hertz", "gpuscope_temperature_celsius",
    "gpuscope_memory_temperature_celsius", "gpuscope_memory_used_bytes",
    "gpuscope_memory_free_bytes", "gpuscope_clock_event_reasons",
    "gpuscope_pcie_tx_bytes_per_second", "gpuscope_pcie_rx_bytes_per_second",
    "gpuscope_graphics_active_ratio", "gpuscope_sm_active_ratio", "gpuscope_sm_occupancy_ratio",
    "gpuscope_tensor_active_ratio", "gpuscope_dram_active_ratio", "gpuscope_fp64_active_ratio",
    "gpuscope_fp32_active_ratio", "gpuscope_fp16_active_ratio",
    "gpuscope_nvlink_tx_bytes_per_second", "gpuscope_nvlink_rx_bytes_per_second",
    "gpuscope_last_sample_timestamp_seconds",
]
CORE = [
    "gpuscope_power_watts", "gpuscope_power_limit_watts", "gpuscope_energy_joules_total",
    "gpuscope_gpu_util_ratio", "gpuscope_sm_active_ratio", "gpuscope_tensor_active_ratio",
    "gpuscope_dram_active_ratio", "gpuscope_sm_clock_hertz", "gpuscope_temperature_celsius",
    "gpuscope_memory_used_bytes",
]


def utilisation(rng, n):
    """A job's GPU utilisation per step: phases of a few minutes at different levels, with noise."""
    out = []
    level = rng.uniform(0.5, 0.95)
    left = 0
    for _ in range(n):
        if left == 0:
            kind = rng.random()
            level = (rng.uniform(0.0, 0.1) if kind < 0.1 else      # waiting for input
                     rng.uniform(0.3, 0.6) if kind < 0.3 else      # communication-bound
                     rng.uniform(0.75, 1.0))                      # compute
            left = rng.randint(4, 40)
        left -= 1
        out.append(min(1.0, max(0.0, level + rng.gauss(0, 0.04))))
    return out


def series_values(name, u, ts_s, c):
    r3 = lambda v: round(v, 3)
    if name in ("gpuscope_power_watts", "gpuscope_power_instant_watts"):
        return c["power"]
    if name == "gpuscope_power_limit_watts":
        return [700.0] * len(u)
    if name == "gpuscope_energy_joules_total":
        return c["energy"]
    if name == "gpuscope_energy_since_start_joules_total":
        base = c["energy"][0]
        return [r3(e - base) for e in c["energy"]]
    if name == "gpuscope_gpu_util_ratio":
        return [r3(min(1.0, x * 1.05 + 0.02)) for x in u]
    if name == "gpuscope_mem_util_ratio":
        return [r3(0.45 * x) for x in u]
    if name in ("gpuscope_sm_clock_hertz", "gpuscope_graphics_clock_hertz"):
        return [1980e6 if x > 0.15 else 1410e6 for x in u]
    if name == "gpuscope_mem_clock_hertz":
        return [2619e6] * len(u)
    if name == "gpuscope_temperature_celsius":
        return [round(34 + 44 * x, 1) for x in u]
    if name == "gpuscope_memory_temperature_celsius":
        return [round(38 + 40 * x, 1) for x in u]
    if name == "gpuscope_memory_used_bytes":
        return [c["mem"]] * len(u)
    if name == "gpuscope_memory_free_bytes":
        return [85520809984.0 - c["mem"]] * len(u)
    if name == "gpuscope_clock_event_reasons":
        return [4.0 if p > 650 else 0.0 if x > 0.15 else 1.0 for p, x in zip(c["power"], u)]
    if name in ("gpuscope_pcie_tx_bytes_per_second", "gpuscope_pcie_rx_bytes_per_second"):
        return [float(int(2e9 * (1 - x) + 1e7)) for x in u]
    if name in ("gpuscope_nvlink_tx_bytes_per_second", "gpuscope_nvlink_rx_bytes_per_second"):
        return [float(int(1.2e11 * (1 - x) * x + 1e6)) for x in u]
    if name == "gpuscope_graphics_active_ratio":
        return [r3(0.97 * x) for x in u]
    if name == "gpuscope_sm_active_ratio":
        return [r3(0.92 * x) for x in u]
    if name == "gpuscope_sm_occupancy_ratio":
        return [r3(0.41 * x) for x in u]
    if name == "gpuscope_tensor_active_ratio":
        return [r3(c["tensor"] * x) for x in u]
    if name == "gpuscope_dram_active_ratio":
        return [r3(0.05 + 0.45 * x) for x in u]
    if name == "gpuscope_fp64_active_ratio":
        return [0.0] * len(u)
    if name == "gpuscope_fp32_active_ratio":
        return [r3(0.08 * x) for x in u]
    if name == "gpuscope_fp16_active_ratio":
        return [r3(0.02 * x) for x in u]
    if name == "gpuscope_last_sample_timestamp_seconds":
        return [float(t) for t in ts_s]
    raise KeyError(name)


def gpus(hosts, per_host, seed):
    for h in range(hosts):
        host = f"gpu{h + 1:04d}"
        for g in range(per_host):
            rng = random.Random(seed * 100003 + h * 97 + g)
            uuid = f"GPU-{rng.getrandbits(32):08x}-{h:04x}-{g:04x}-bench-{rng.getrandbits(48):012x}"
            yield host, g, uuid, rng


def gpu_constants(rng, n):
    u = utilisation(rng, n)
    power = [round(100 + 600 * x + rng.gauss(0, 5), 1) for x in u]
    power = [min(700.0, max(60.0, p)) for p in power]
    energy, e = [], rng.uniform(1e9, 5e9)  # the hardware counter, since the driver loaded
    for p in power:
        energy.append(round(e, 3))
        e += p * STEP_S
    return u, {"power": power, "energy": energy, "mem": float(rng.randint(20, 78) * 2**30),
               "tensor": rng.uniform(0.3, 0.7)}


def labels_of(host, g, uuid):
    return {"gpu": str(g), "uuid": uuid, "hostname": host, "instance": f"{host}:9400",
            "job": "gpuscope"}


def openmetrics(a, out):
    ts = [a.start + i * STEP_S for i in range(a.points)]
    names = FULL if a.metrics == "full" else CORE
    per_name = {n: [] for n in names}
    info = []
    for host, g, uuid, rng in gpus(a.hosts, a.gpus_per_host, a.seed):
        u, c = gpu_constants(rng, a.points)
        lab = labels_of(host, g, uuid)
        text = ",".join(f'{k}="{v}"' for k, v in lab.items())
        for n in names:
            per_name[n].append((text, series_values(n, u, ts, c)))
        info.append(f'{text},name="NVIDIA H100 80GB HBM3",pci_bus_id="00000000:{g + 0x18:02X}:00.0"')
    w = out.write
    for n in names:  # OpenMetrics wants each family's samples together
        for text, values in per_name[n]:
            w("".join(f"{n}{{{text}}} {v} {t}\n" for v, t in zip(values, ts)))
    for text in info:
        w("".join(f"gpuscope_gpu_info{{{text}}} 1 {t}\n" for t in ts))
    w("# EOF\n")


def vm_lines(a):
    ts = [(a.start + i * STEP_S) * 1000 for i in range(a.points)]
    ts_s = [t // 1000 for t in ts]
    ts_json = json.dumps(ts)
    names = FULL if a.metrics == "full" else CORE
    ones = json.dumps([1] * a.points)
    for host, g, uuid, rng in gpus(a.hosts, a.gpus_per_host, a.seed):
        u, c = gpu_constants(rng, a.points)
        lab = labels_of(host, g, uuid)
        chunk = []
        for n in names:
            metric = json.dumps({"__name__": n, **lab})
            chunk.append(f'{{"metric":{metric},"values":{json.dumps(series_values(n, u, ts_s, c))},'
                         f'"timestamps":{ts_json}}}\n')
        info = json.dumps({"__name__": "gpuscope_gpu_info", **lab, "name": "NVIDIA H100 80GB HBM3",
                           "pci_bus_id": f"00000000:{g + 0x18:02X}:00.0"})
        chunk.append(f'{{"metric":{info},"values":{ones},"timestamps":{ts_json}}}\n')
        yield "".join(chunk).encode()


def vmimport(a):
    url = urllib.parse.urlsplit(a.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=3600)
    conn.request("POST", "/api/v1/import", body=vm_lines(a), encode_chunked=True,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    body = r.read()
    if r.status // 100 != 2:
        sys.exit(f"import failed: {r.status} {body[:500]!r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["openmetrics", "vmimport"])
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--gpus-per-host", type=int, default=8)
    p.add_argument("--start", type=int, required=True, help="first sample, Unix seconds")
    p.add_argument("--points", type=int, required=True, help="samples per series (15 s apart)")
    p.add_argument("--metrics", choices=["full", "core"], default="full")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--url", help="VictoriaMetrics base URL (vmimport)")
    a = p.parse_args()
    if a.mode == "openmetrics":
        openmetrics(a, sys.stdout)
    else:
        vmimport(a)


if __name__ == "__main__":
    main()
