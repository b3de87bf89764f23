"""frames.py - what the `kscope run` shell tests ask of a .hatchet file
(run-lib.sh's names, metric_of and parent_of), with one walk of its tree.

    frames.py names FILE                every frame name, one per line
    frames.py metric FILE NAME METRIC   that metric of the first frame called
                                        NAME (an empty line without it)
    frames.py parent FILE NAME          the parent frame's name of the first
                                        NAME ("None" for the root)

"First" is in the walk's order: depth first, the last child first. A NAME
that no frame has prints nothing. Standard library only.
"""
import json
import sys


def frames(path):
    """(node, parent's name or None) for every frame of the file's tree."""
    stack = [(json.load(open(path))[0], None)]
    while stack:
        node, parent = stack.pop()
        yield node, parent
        stack.extend((c, node["frame"]["name"]) for c in node.get("children", []))


def main(what, path, *args):
    for node, parent in frames(path):
        name = node["frame"]["name"]
        if what == "names":
            print(name)
        elif name == args[0]:
            print(node["metrics"].get(args[1], "") if what == "metric" else parent)
            return


if __name__ == "__main__":
    main(*sys.argv[1:])
