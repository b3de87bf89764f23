"""mp.py - multiprocessing with fork and spawn: a pool's map, processes
that talk through a queue, a pool terminated with its workers busy (run
bare and under kscope run by test/faithful/corpus.py)."""
import multiprocessing as mp
import os
import sys
import time


def square(x):
    return x * x


def producer(q, n):
    for i in range(n):
        q.put(i)
    q.put(None)


def stall(_):
    time.sleep(30)


def run(method):
    ctx = mp.get_context(method)
    with ctx.Pool(2) as pool:
        print(method, "map:", pool.map(square, range(10)))
    q = ctx.Queue()
    p = ctx.Process(target=producer, args=(q, 5))
    p.start()
    got = []
    while (item := q.get()) is not None:
        got.append(item)
    p.join()
    print(method, "queue:", got, "exit", p.exitcode)
    pool = ctx.Pool(2)
    pool.map_async(stall, range(2))
    time.sleep(0.2)
    pool.terminate()  # SIGTERM to workers that are busy
    pool.join()
    print(method, "terminated a busy pool")


if __name__ == "__main__":
    for method in sys.argv[1:] or ["fork", "spawn"]:
        run(method)
    print("pid stays", os.getpid() == os.getpid())
