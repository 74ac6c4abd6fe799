#!/usr/bin/env python3
"""Beginning plus ending a window from Python (gpuscope.Monitor), on the 8 simulated H100s of
h100x8-idle-start unless GPUSCOPE_NVML_LIBRARY already names a driver: the median and the 99th
percentile of N begin/end pairs, with `mon.begin`/`mon.end` and with `with mon.window()`.
Usage: bench_windows.py BUILD_DIR [N]"""
import os
import sys
import time
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build").resolve()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
source = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(source / "python"))
os.environ.setdefault("GPUSCOPE_LIBRARY", str(build / "lib" / "libgpuscope.so.0"))
if "GPUSCOPE_NVML_LIBRARY" not in os.environ:
    os.environ["GPUSCOPE_NVML_LIBRARY"] = str(build / "lib" / "gpuscope" / "libgpuscope-sim-nvml.so")
    os.environ["GPUSCOPE_SIM_SCENARIO"] = str(source / "scenarios" / "h100x8-idle-start.json")

import gpuscope  # noqa: E402


def timed(pair):
    times = []
    for _ in range(n):
        t = time.perf_counter_ns()
        pair()
        times.append(time.perf_counter_ns() - t)
    times.sort()
    return times[len(times) // 2] / 1e3, times[int(len(times) * 0.99)] / 1e3


with gpuscope.Monitor(sync=False, history=1) as mon:
    def ids():
        mon.end(mon.begin("step"))

    def context():
        with mon.window("step"):
            pass

    for label, pair in (("begin + end", ids), ("with window()", context)):
        timed(pair)  # warm
        p50, p99 = timed(pair)
        print(f"{label:14s} {mon.gpu_count} GPUs: median {p50:.1f} us, p99 {p99:.1f} us ({n} pairs)")
