# serve.py - MAX's max.profiler API from kscope: run it under `kscope run`
import time

from kscope import Trace, traced  # was: from max.profiler import Trace, traced


@traced
def tokenize(text):
    time.sleep(0.001)


@traced(message="generate", color="green")
def generate(tokens):
    for _ in range(tokens):
        with Trace("decode_step"):
            time.sleep(0.0005)


for request in range(3):
    with Trace("request", color="blue"):
        tokenize("hello")
        generate(4)
