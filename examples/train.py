# train.py - Proton's API from kscope: a loop of steps, each with two phases
import time

import kscope as proton  # or `import kscope`: the same calls

proton.start("train")  # record until finalize(), then write train.hatchet
for step in range(4):
    with proton.scope("step", {"tokens": 4096}):
        with proton.scope("forward"):
            time.sleep(0.002)  # a model's kernels here land under step/forward
        with proton.scope("backward"):
            time.sleep(0.004)
proton.finalize()
