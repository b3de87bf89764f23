#!/usr/bin/env python3
"""gen_ranks.py - write one generated .hatchet per rank, as `kscope run`
names them under a launcher (NAME.rank<R>.hatchet), for the fleet
benchmark (bench/fleet/run.py) and the fleet tests (python/tests/).

Each tree has the shape a training step has in kscope's files: ROOT >
data_load (a scope with a copy and a kernel), ROOT > train > step >
layer_<i> > forward|backward > attn|mlp|norm > kernels, and step >
allreduce > an NCCL kernel; scopes carry calls and wall_time (ns), kernels
time (ns), count, device_id, device_type and bytes, and ROOT the 0
placeholders of the metrics that roll up. Values jitter by a few percent
per rank (seeded: the same arguments write the same files). Two things can
be planted:
  - a straggler: one rank whose step kernels take --slow times as long;
  - an imbalance: data_load's time grows linearly with the rank, from
    0.2 to 1.8 times its mean (a spread, not one outlier).

--scale F multiplies every rank's step kernels (a slower or faster run,
for diffs).

usage: gen_ranks.py OUT_DIR RANKS NODES [--straggler R] [--slow F] [--no-imbalance]
                    [--scale F] [--name NAME] [--seed N]
NODES is the number of nodes per tree, roughly (at least about 40).
"""
import argparse
import json
import os
import random

KERNELS = {
    "attn": ["flash_fwd_kernel<128, 64, true>", "rotary_embedding_kernel", "softmax_warp_forward"],
    "mlp": ["sm90_xmma_gemm_f16f16_f32_tn_n_tilesize128x128x64", "gelu_kernel"],
    "norm": ["rms_norm_kernel<float, 1024>"],
}
NCCL = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def kernel(name, ns, count, device=0, nbytes=0):
    m = {"time (ns)": int(ns), "count": count, "device_id": str(device), "device_type": "CUDA"}
    if nbytes:
        m["bytes"] = nbytes
    return {"frame": {"name": name, "type": "function"}, "metrics": m, "children": []}


def scope(name, children, wall_ns, calls=1):
    return {"frame": {"name": name, "type": "function"},
            "metrics": {"calls": calls, "wall_time (ns)": int(wall_ns)}, "children": children}


def tree(rank, ranks, nodes, straggler, slow, imbalance, seed, scale=1.0):
    rng = random.Random(seed * 1000003 + rank)

    def jit(ns):
        return ns * (1.0 + rng.uniform(-0.02, 0.02))

    factor = (slow if rank == straggler else 1.0) * scale
    layers = max(1, (nodes - 12) // 20)
    layer_nodes = []
    for i in range(layers):
        passes = []
        for p, scale in (("forward", 1.0), ("backward", 2.0)):
            parts = []
            for part, names in KERNELS.items():
                ks = [kernel(k, jit(20000 * scale * (j + 1)) * factor, 4) for j, k in enumerate(names)]
                parts.append(scope(part, ks, sum(k["metrics"]["time (ns)"] for k in ks) * 1.1, 4))
            passes.append(scope(p, parts, sum(c["metrics"]["wall_time (ns)"] for c in parts) * 1.05, 4))
        layer_nodes.append(scope(f"layer_{i}", passes, sum(c["metrics"]["wall_time (ns)"] for c in passes)))
    comm = scope("allreduce", [kernel(NCCL, jit(400000 * layers), 4 * layers)], 500000 * layers,
                 4 * layers)
    step = scope("step", layer_nodes + [comm],
                 sum(c["metrics"]["wall_time (ns)"] for c in layer_nodes + [comm]), 4)
    train = scope("train", [step], step["metrics"]["wall_time (ns)"] * 1.01)
    # data_load: about a tenth of the step's GPU time; spread linearly over
    # the ranks (0.2 to 1.8 of its mean) when the imbalance is planted
    load_ns = 15000 * layers * (0.2 + 1.6 * rank / max(1, ranks - 1) if imbalance else 1.0)
    load = scope("data_load", [kernel("Memcpy HtoD", jit(load_ns), 8, nbytes=1 << 26),
                               kernel("decode_images_kernel", jit(load_ns), 8)], jit(load_ns * 2.5))
    root = {"frame": {"name": "ROOT", "type": "function"},
            "metrics": {"time (ns)": 0, "count": 0, "bytes": 0}, "children": [load, train]}
    devices = {"CUDA": {"0": {"arch": "90", "num_sms": 132, "clock_rate": 1980000,
                              "memory_clock_rate": 3201000, "bus_width": 6016}}}
    return [root, devices]


def write_ranks(out_dir, ranks, nodes, straggler=None, slow=1.5, imbalance=True, name="train",
                seed=0, scale=1.0):
    """Write RANKS files OUT_DIR/NAME.rank<R>.hatchet (compact JSON, as
    kscope writes); returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for r in range(ranks):
        path = os.path.join(out_dir, f"{name}.rank{r}.hatchet")
        with open(path, "w") as f:
            json.dump(tree(r, ranks, nodes, straggler, slow, imbalance, seed, scale), f,
                      separators=(",", ":"))
        paths.append(path)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("ranks", type=int)
    ap.add_argument("nodes", type=int)
    ap.add_argument("--straggler", type=int, default=None)
    ap.add_argument("--slow", type=float, default=1.5)
    ap.add_argument("--no-imbalance", action="store_true")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--name", default="train")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    write_ranks(a.out, a.ranks, a.nodes, a.straggler, a.slow, not a.no_imbalance, a.name, a.seed,
                a.scale)


if __name__ == "__main__":
    main()
