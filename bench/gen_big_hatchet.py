#!/usr/bin/env python3
"""gen_big_hatchet.py - write a large .hatchet file for benchmarking the readers.

The file has the shape Proton and kscope write (indented JSON, keys sorted:
children, frame, metrics): host scopes a few levels deep, each with kernel
leaves carrying time (ns), count, device_id, device_type and some flops/bytes,
plus kscope's calls and wall_time (ns) on scopes. Values vary with --seed so
per-rank files differ.

--compact writes it without white space, as kscope's own writer does (about
four times the nodes per megabyte: the harder case for a reader).

usage: gen_big_hatchet.py OUT SIZE_MB [--seed N] [--rank R] [--compact]
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("size_mb", type=float)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--compact", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)  # shape
    vrng = random.Random(1000003 * (args.rank + 1))  # values
    target = int(args.size_mb * 1024 * 1024)
    kernels = [f"kernel_{k}_sm90_xmma_gemm_f16f16_f32_tn_n_tilesize128x128x64" for k in range(40)]
    written = 0
    parts = []

    def emit(s):
        nonlocal written
        if args.compact:
            s = s.replace("\n", "").replace("    ", "").replace('": ', '":')
        parts.append(s)
        written += len(s)
        if len(parts) > 4096:
            f.write("".join(parts))
            parts.clear()

    def ind(level):
        return "    " * level

    def kernel(level, name):
        t = vrng.randint(1000, 5_000_000)
        c = vrng.randint(1, 50)
        emit(f'{ind(level)}{{\n{ind(level+1)}"children": [],\n{ind(level+1)}"frame": {{\n'
             f'{ind(level+2)}"name": "{name}",\n{ind(level+2)}"type": "function"\n{ind(level+1)}}},\n'
             f'{ind(level+1)}"metrics": {{\n{ind(level+2)}"bytes": {vrng.randint(0, 1 << 30)},\n'
             f'{ind(level+2)}"count": {c},\n{ind(level+2)}"device_id": "0",\n'
             f'{ind(level+2)}"device_type": "CUDA",\n{ind(level+2)}"flops16": {float(vrng.randint(0, 1 << 40))},\n'
             f'{ind(level+2)}"max_time (ns)": {t // c + 100},\n{ind(level+2)}"min_time (ns)": {max(1, t // c - 100)},\n'
             f'{ind(level+2)}"time (ns)": {t}\n{ind(level+1)}}}\n{ind(level)}}}')

    def scope(level, name, depth):
        emit(f'{ind(level)}{{\n{ind(level+1)}"children": [\n')
        nchild = rng.randint(2, 6)
        for i in range(nchild):
            if depth > 0 and i % 2 == 0:
                scope(level + 2, f"layer{i}.block{rng.randint(0, 99)}", depth - 1)
            else:
                kernel(level + 2, kernels[rng.randrange(len(kernels))] + f"_{i}")
            emit(",\n" if i + 1 < nchild else "\n")
        emit(f'{ind(level+1)}],\n{ind(level+1)}"frame": {{\n{ind(level+2)}"name": "{name}",\n'
             f'{ind(level+2)}"type": "function"\n{ind(level+1)}}},\n{ind(level+1)}"metrics": {{\n'
             f'{ind(level+2)}"calls": {vrng.randint(1, 100)},\n'
             f'{ind(level+2)}"wall_time (ns)": {vrng.randint(10_000, 900_000_000)}\n{ind(level+1)}}}\n{ind(level)}}}')

    with open(args.out, "w") as f:
        emit('[\n    {\n        "children": [\n')
        step = 0
        while True:
            scope(3, f"step_{step}", 4)
            step += 1
            if written >= target - 2048:
                emit("\n")
                break
            emit(",\n")
        emit('        ],\n        "frame": {\n            "name": "ROOT",\n            "type": "function"\n'
             '        },\n        "metrics": {\n            "bytes": 0,\n            "count": 0,\n'
             '            "flops16": 0,\n            "time (ns)": 0\n        }\n    },\n'
             '    {\n        "CUDA": {\n            "0": {\n                "arch": "90",\n'
             '                "bus_width": 6016,\n                "clock_rate": 1980000,\n'
             '                "memory_clock_rate": 3201000,\n                "num_sms": 132\n'
             '            }\n        }\n    }\n]\n')
        f.write("".join(parts))


if __name__ == "__main__":
    main()
