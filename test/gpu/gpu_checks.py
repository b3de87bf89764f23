"""gpu_checks.py - what the GPU tests' Python checkers share (imported by
check_capture.py, check_graphs.py, graphs-torch.py, multi-devices.py,
multi-peer.py and multi-torchrun-check.py, which sit beside it): PASS/FAIL
lines with a count of the failures, reading kscope's output files, and
finding nodes in a tree. Standard library only."""
import json

failures = 0


def check(name, ok, detail=""):
    """Prints "PASS  name: detail" or "FAIL  name: detail"; a FAIL counts
    in `failures`."""
    global failures
    print(("PASS" if ok else "FAIL") + f"  {name}: {detail}")
    if not ok:
        failures += 1


def finish():
    """Prints the number of failures; returns it, at most 100, as the
    checker's exit status."""
    print(f"{failures} failure(s)")
    return min(failures, 100)


def load(path):
    """The JSON document of an output file."""
    with open(path) as f:
        return json.load(f)


def child(node, name):
    """The first child of `node` named `name`; None when there is none or
    `node` is None."""
    return next((c for c in (node or {}).get("children", []) if c["frame"]["name"] == name), None)


def names(node):
    """Every frame name in the subtree under (and including) `node`."""
    out = {node["frame"]["name"]}
    for c in node["children"]:
        out |= names(c)
    return out


def walk(node, path=()):
    """(path of frame names above, node) for every node."""
    yield path, node
    for c in node.get("children", []):
        yield from walk(c, path + (node["frame"]["name"],))
