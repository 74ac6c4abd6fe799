#!/usr/bin/env python3
"""Times the NVML calls the sampler makes, one at a time and as the sampler groups them, on GPU 0
of a real driver (read-only: changes no setting). For each: wall and thread-CPU time per call (a
driver that spins shows CPU equal to wall), and for the power readings how often the value
changes when read every millisecond. Prints JSON. Needs pynvml. Usage: nvml-call-costs.py [SECONDS]
"""
import json
import sys
import time

import pynvml as n

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)


def fields(ids):
    return lambda: n.nvmlDeviceGetFieldValues(h, ids)


def timed(call):
    """Median wall and thread-CPU microseconds per call over SECONDS (at least 5 calls)."""
    walls, cpus = [], []
    end = time.perf_counter() + SECONDS
    while len(walls) < 5 or time.perf_counter() < end:
        w, c = time.perf_counter(), time.thread_time()
        try:
            call()
        except n.NVMLError as e:
            return {"error": str(e)}
        cpus.append(time.thread_time() - c)
        walls.append(time.perf_counter() - w)
    walls.sort(); cpus.sort()
    mid = len(walls) // 2
    return {"calls": len(walls), "wall_us": round(walls[mid] * 1e6, 1),
            "cpu_us": round(cpus[mid] * 1e6, 1), "wall_max_us": round(walls[-1] * 1e6, 1)}


def refresh(read, seconds=1.0):
    """Reads every millisecond: how many distinct values, and the mean time between changes."""
    values, changes, last = [], [], None
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        v = read()
        if v != last:
            changes.append(time.perf_counter()); last = v
        values.append(v)
        time.sleep(0.001)
    gaps = [b - a for a, b in zip(changes[1:], changes[2:])]
    return {"reads": len(values), "changes": len(changes) - 1,
            "mean_ms_between_changes": round(1000 * sum(gaps) / len(gaps), 2) if gaps else None}


def field_value(fid, stamp=False):
    v = n.nvmlDeviceGetFieldValues(h, [fid])[0]
    if v.nvmlReturn != 0:
        return None
    return v.timestamp if stamp else v.value.uiVal


calls = {
    "nvmlDeviceGetPowerUsage": lambda: n.nvmlDeviceGetPowerUsage(h),
    "nvmlDeviceGetTotalEnergyConsumption": lambda: n.nvmlDeviceGetTotalEnergyConsumption(h),
    "nvmlDeviceGetUtilizationRates": lambda: n.nvmlDeviceGetUtilizationRates(h),
    "nvmlDeviceGetClockInfo(SM)": lambda: n.nvmlDeviceGetClockInfo(h, 1),
    "nvmlDeviceGetTemperature": lambda: n.nvmlDeviceGetTemperature(h, 0),
    "nvmlDeviceGetMemoryInfo": lambda: n.nvmlDeviceGetMemoryInfo(h),
    "nvmlDeviceGetCurrentClocksEventReasons": lambda: n.nvmlDeviceGetCurrentClocksThrottleReasons(h),
    "field 186 (instant power) alone": fields([186]),
    "field 185 (average power) alone": fields([185]),
    "field 83 (energy) alone": fields([83]),
    "field 82 (memory temperature) alone": fields([82]),
    "fields 186+185": fields([186, 185]),
    "fields 186+185+83": fields([186, 185, 83]),
    "the main read's fields 186,185,82,PCIe tx/rx": fields([186, 185, 82, 197, 198]),
    "power usage then field 186 (a power row)":
        lambda: (n.nvmlDeviceGetPowerUsage(h), n.nvmlDeviceGetFieldValues(h, [186])),
}
out = {"driver": n.nvmlSystemGetDriverVersion(), "seconds_per_call": SECONDS,
       "calls": {name: timed(call) for name, call in calls.items()}}
out["refresh_every_ms_read"] = {
    "nvmlDeviceGetPowerUsage": refresh(lambda: n.nvmlDeviceGetPowerUsage(h)),
    "field 186's value": refresh(lambda: field_value(186)),
    "field 186's timestamp": refresh(lambda: field_value(186, True)),
    "field 185's value": refresh(lambda: field_value(185)),
    "nvmlDeviceGetTotalEnergyConsumption": refresh(lambda: n.nvmlDeviceGetTotalEnergyConsumption(h)),
}
print(json.dumps(out, indent=1))
