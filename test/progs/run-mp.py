"""run-mp.py - Python multiprocessing under `kscope run`: the parent and
each forked child record a scope through the preloaded libkscope (ctypes),
children end with os._exit (Process) or SIGTERM (Pool.terminate)."""
import ctypes
import multiprocessing as mp
import os
import sys

lib = ctypes.CDLL(None)  # the preloaded libkscope's global symbols


def scope(name):
    lib.kscope_enter(name.encode())
    lib.kscope_exit(name.encode())


def process_child(i):
    scope(f"process-child-{i}")


def pool_work(i):
    scope("pool-work")
    return i


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    scope("mp-parent")
    procs = [ctx.Process(target=process_child, args=(i,)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    with ctx.Pool(2) as pool:
        assert sorted(pool.map(pool_work, range(4))) == [0, 1, 2, 3]
    # leaving the with block terminates the pool's workers with SIGTERM
    print("mp done")
    sys.exit(0)
