#!/usr/bin/env python3
"""A realistic nvidia-smi --query-gpu log for bench_logs.sh (docs/performance.md, "Importing logs").

Written as `nvidia-smi --query-gpu=<the fields below> --format=csv -lms 100` prints it on an
8-GPU H100 node: ", " between fields, units after the values, local times with milliseconds,
the GPUs of one tick a few ms apart, [N/A] where the driver has no value (fan.speed on SXM
parts). Deterministic for a seed. Stops at the first tick past SIZE bytes.

usage: gen_smi_csv.py OUT SIZE [--gpus 8] [--interval-ms 100] [--seed 1]
       SIZE in bytes, or with a K/M/G suffix (powers of 1000)
"""
import argparse
import datetime
import random
import sys

FIELDS = ("timestamp, index, name, uuid, pci.bus_id, pstate, temperature.gpu, "
          "temperature.memory, utilization.gpu [%], utilization.memory [%], memory.total [MiB], "
          "memory.used [MiB], memory.free [MiB], power.draw [W], power.limit [W], "
          "enforced.power.limit [W], clocks.current.sm [MHz], clocks.current.memory [MHz], "
          "clocks_event_reasons.active, fan.speed [%]")
TOTAL_MIB = 81559
RESERVED_MIB = 528


def size_of(text):
    scale = {"K": 10**3, "M": 10**6, "G": 10**9}
    if text[-1:].upper() in scale:
        return int(float(text[:-1]) * scale[text[-1:].upper()])
    return int(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("size")
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--interval-ms", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    size = size_of(args.size)
    rng = random.Random(args.seed)

    gpus = []
    for i in range(args.gpus):
        uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(48))
        bus = "00000000:%02X:00.0" % (0x18 + 0x10 * i)
        # The fields that never change, joined once.
        fixed = f", {i}, NVIDIA H100 80GB HBM3, {uuid}, {bus}, "
        gpus.append({"fixed": fixed, "util": 0.0, "temp": 35 + rng.random() * 4})

    t = datetime.datetime(2026, 11, 25, 22, 40, 11, 719000)
    step = datetime.timedelta(milliseconds=args.interval_ms)
    written = 0
    tick = 0
    with open(args.out, "w", buffering=1 << 20) as out:
        header = FIELDS + "\n"
        out.write(header)
        written += len(header)
        lines = []
        while written < size:
            # A job that alternates busy and idle phases of a few minutes.
            busy = (tick // 3000) % 3 != 2
            for i, g in enumerate(gpus):
                at = t + datetime.timedelta(microseconds=(i * 3 + rng.randint(0, 2)) * 1000)
                stamp = at.strftime("%Y/%m/%d %H:%M:%S.") + "%03d" % (at.microsecond // 1000)
                target = 97 if busy else 0
                g["util"] += (target - g["util"]) * 0.3 + rng.uniform(-2, 2)
                util = min(100, max(0, round(g["util"])))
                g["temp"] += ((62 if busy else 36) - g["temp"]) * 0.01 + rng.uniform(-0.3, 0.3)
                temp = round(g["temp"])
                used = (RESERVED_MIB + 71234 + rng.randint(0, 64)) if busy else RESERVED_MIB
                power = (480 + util * 2.1 + rng.uniform(-15, 15)) if busy else (70 + rng.uniform(0, 3))
                sm = 1980 if busy else 345
                reasons = "0x0000000000000000" if busy else "0x0000000000000001"
                pstate = "P0"
                lines.append(
                    f"{stamp}{g['fixed']}{pstate}, {temp}, {temp + 4}, {util} %, "
                    f"{util * 2 // 5} %, {TOTAL_MIB} MiB, {used} MiB, {TOTAL_MIB - used} MiB, "
                    f"{power:.2f} W, 700.00 W, 700.00 W, {sm} MHz, 2619 MHz, {reasons}, [N/A]\n")
            chunk = "".join(lines)
            lines.clear()
            out.write(chunk)
            written += len(chunk)
            t += step
            tick += 1
    print(f"{args.out}: {written} bytes, {tick} ticks x {args.gpus} GPUs", file=sys.stderr)


if __name__ == "__main__":
    main()
