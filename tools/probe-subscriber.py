"""probe-subscriber.py LIBKSCOPE - can Proton subscribe to CUPTI after a
kscope session (C library through ctypes) has ended in the same process?
Prints which libcupti files are mapped before and after. A diagnostic for
the GPU machine; tools/gpu-run.sh does not need it."""
import ctypes
import sys


class Opts(ctypes.Structure):
    _fields_ = [(n, ctypes.c_char_p) for n in ("name", "context", "data", "backend", "mode", "sample")]


def cupti_maps():
    return sorted({l.split()[-1] for l in open("/proc/self/maps") if "cupti" in l})


lib = ctypes.CDLL(sys.argv[1])
lib.kscope_last_error.restype = ctypes.c_char_p
import torch  # noqa: E402  (CUDA context first, as a program would)

torch.zeros(1, device="cuda").add_(1)
sid = lib.kscope_start(ctypes.byref(Opts(name=b"/tmp/probe-kscope", backend=b"cupti")))
torch.zeros(1, device="cuda").add_(1)
print("kscope start:", sid, lib.kscope_last_error().decode())
print("kscope finalize:", lib.kscope_finalize(sid, None), lib.kscope_last_error().decode())
print("cupti mapped after kscope:", cupti_maps())
import triton.profiler as proton  # noqa: E402

try:
    p = proton.start("/tmp/probe-proton")
    torch.zeros(1, device="cuda").add_(1)
    proton.finalize(p)
    print("proton after kscope: ok")
except Exception as e:  # the finding this probe exists for
    print("proton after kscope: FAILED:", e)
print("cupti mapped after proton:", cupti_maps())
