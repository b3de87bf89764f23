"""diag-load.py - the load diag-gpu.sh monitors: idle, then an 8 GiB
allocation held, then a long matmul. While holding the allocation it asks
libkscope (argv[1], through ctypes) how much GPU memory this process uses,
and prints a PASS/FAIL line for it."""
import ctypes
import os
import sys
import time

import torch

GIB = 1 << 30


def process_memory(lib):
    lib.kscope_gpu_init.restype = ctypes.c_int
    lib.kscope_gpu_process_memory.argtypes = [ctypes.c_uint32, ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_uint64)]
    lib.kscope_last_error.restype = ctypes.c_char_p
    n = lib.kscope_gpu_init()
    if n <= 0:
        return None, lib.kscope_last_error().decode()
    total, errors = 0, []
    for d in range(n):
        b = ctypes.c_uint64(0)
        if lib.kscope_gpu_process_memory(d, os.getpid(), ctypes.byref(b)) == 0:
            total += b.value
        else:
            errors.append(lib.kscope_last_error().decode())
    lib.kscope_gpu_shutdown()
    return total, "; ".join(errors)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    time.sleep(1.0)  # baseline, before CUDA starts
    x = torch.empty(8 * GIB, dtype=torch.uint8, device="cuda")
    x.fill_(1)
    torch.cuda.synchronize()
    time.sleep(1.5)  # memory held
    used, why = process_memory(lib)
    ok = used is not None and used >= 8 * GIB
    print("%s  process memory: this process uses %s on the GPU (expected >= 8 GiB)%s" % (
        "PASS" if ok else "FAIL", "%.2f GiB" % (used / GIB) if used is not None else "?",
        " [%s]" % why if why else ""), flush=True)
    del x
    a = torch.randn(8192, 8192, device="cuda")
    b = torch.randn(8192, 8192, device="cuda")
    start = time.time()
    n = 0
    while time.time() - start < 6.0:  # a long matmul
        for _ in range(10):
            a @ b
        torch.cuda.synchronize()
        n += 10
    print("load: %d matmuls of 8192^2 in %.1f s" % (n, time.time() - start), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
