"""profiles.py - one profile file (a .hatchet tree, its MessagePack form, a
Chrome trace; kscope's or Proton's) into the columns of the fleet tables,
and which run and rank it belongs to.

What rolls up is read from the file, by the rule kscope's readers apply
(src/read/hatchet-build.c, root_placeholders; written by
src/format/hatchet-root.c): ROOT's "kscope": {"inclusive": [...]} lists the
metrics that roll up; without that list, a metric ROOT holds as 0 rolls up.
Those zeros are placeholders, not ROOT's own values. Stored values are each
node's own (exclusive); a metric that rolls up also gets `<column>_inc`,
the node's value plus its whole subtree's (missing values count as 0, as
the readers' roll-up does).
"""
import json
import os
import re

SEP = " > "  # between the names of a path, as kscope's views print it

# Columns every nodes row has (the dataset adds run and rank).
NODE_BASE = ("node_id", "parent_id", "depth", "path", "name", "kind", "comm")
# A metric column may not take one of these names (nor run/rank).
RESERVED = set(NODE_BASE) | {"run", "rank"}

_RANK_NAME = re.compile(r"^(?P<run>.+?)\.rank(?P<rank>\d+)(?:\.pid(?P<pid>\d+)(?:\.\d+)?)?$")
_PID_NAME = re.compile(r"^(?P<run>.+?)\.pid(?P<pid>\d+)(?:\.\d+)?$")
_RUN_BAD = re.compile(r"[^A-Za-z0-9._-]")
_COMM = re.compile(r"nccl|rccl", re.IGNORECASE)
_COPY_PREFIXES = ("Memcpy", "Memset", "[memcpy", "[memset")  # as `kscope report` tells copies


class InputError(Exception):
    """A file or option that cannot be used: one line, exit status 2."""

def _device_type(args):
    """A GPU event's device type: its own arg, else the first GPU backend's
    (what kscope's C trace reader also falls back to)."""
    given = args.get("device_type")
    if isinstance(given, str) and given:
        return given
    from .. import _kscope  # the registry says which vendor's words
    for _name, _label, device_type, _built in _kscope.backends():
        return device_type
    return "GPU"



def shown(text):
    """`text` with control characters escaped (\\n, \\t, \\r, \\xNN), as
    kscope's C side prints names and paths."""
    out = []
    for ch in str(text):
        o = ord(ch)
        if o < 0x20 or o == 0x7F:
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(ch, "\\x%02x" % o))
        else:
            out.append(ch)
    return "".join(out)


def is_comm(name):
    """Whether a kernel is collective communication (NCCL or RCCL): the
    one rule behind the `comm` column of nodes and kernels."""
    return bool(_COMM.search(name))


def is_copy(name):
    return name.startswith(_COPY_PREFIXES)


# ------------------------------------------------------------ formats


def format_table():
    """[(name, kind, extensions)] from kscope's one format table
    (src/format/format.h), through the extension."""
    from .. import _kscope

    return _kscope.formats()


def format_of(path):
    """(format name, "tree"|"trace") by the file's extension, or None."""
    best = None
    for name, kind, exts in format_table():
        for e in exts:
            if path.endswith(e) and len(path) > len(e) and (best is None or len(e) > best[2]):
                best = (name, kind, len(e))
    return best[:2] if best else None


def split_name(path):
    """(run, rank, pid) from a file name NAME.rank<R>[.pid<P>].EXT or
    NAME.pid<P>.EXT (a process without a launcher's rank: its pid is its
    rank); rank and pid are None for a plain NAME.EXT. The run's name keeps
    [A-Za-z0-9._-] and turns anything else into '_' (it names a folder)."""
    base = os.path.basename(path)
    fmt = format_of(base)
    stem = base
    if fmt:
        ext = max((e for n, _k, exts in format_table() if n == fmt[0] for e in exts if base.endswith(e)),
                  key=len)
        stem = base[: -len(ext)]
    m = _RANK_NAME.match(stem)
    if m:
        return run_name(m["run"]), int(m["rank"]), int(m["pid"]) if m["pid"] else None
    m = _PID_NAME.match(stem)
    if m:
        return run_name(m["run"]), int(m["pid"]), int(m["pid"])
    return run_name(stem), None, None


def run_name(text):
    return _RUN_BAD.sub("_", text) or "run"


# -------------------------------------------------------------- reading


def read_document(path):
    """The parsed file: JSON (a document opening with '[' or '{'), else
    MessagePack (.hatchet_msgpack), told apart by the bytes as kscope's
    readers do (src/read/read-file.c, kscope__format_sniff)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"{shown(path)}: cannot read: {e.strerror or e}") from None
    head = data.lstrip()[:1]
    if not head:
        raise InputError(f"{shown(path)}: empty file, not a profile")
    json_like = head in (b"[", b"{")
    try:
        if json_like:
            return json.loads(data)
        import msgpack

        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, UnicodeDecodeError) as e:
        line = str(e).splitlines()[0] if str(e) else type(e).__name__
        what = "JSON" if json_like else "neither JSON nor MessagePack"
        raise InputError(f"{shown(path)}: not a profile ({what}: {shown(line)})") from None
    except ImportError:
        raise  # the command names the package to install
    except Exception as e:  # msgpack's own errors (ExtraData, FormatError, ...)
        raise InputError(f"{shown(path)}: not a profile (neither JSON nor MessagePack: {shown(e)})") from None


def sniff_kind(doc):
    """"tree" or "trace" for a parsed document, None for neither."""
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return "trace"
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        if "frame" in doc[0]:
            return "tree"
        if "ph" in doc[0]:
            return "trace"
    return None


def column_name(metric):
    """The SQL column of a metric: lower case, each run of characters other
    than letters and digits one '_' ("time (ns)" -> time_ns); m_ before a
    name that starts with a digit or is taken by a fixed column."""
    col = re.sub(r"[^a-z0-9]+", "_", metric.lower()).strip("_") or "metric"
    if col[0].isdigit() or col in RESERVED:
        col = "m_" + col
    return col


_TYPES = {str: "string", int: "double", float: "double", bool: "double", list: "list"}


def _value_type(v):
    if isinstance(v, str):
        return "string"
    if isinstance(v, (int, float)):  # bool is an int
        return "double"
    if isinstance(v, list) and all(isinstance(x, (int, float)) for x in v):
        return "list"
    return None


def _root_layout(path, root):
    """(inclusive metric names, ROOT's own metrics) by the readers' rule."""
    metrics = root.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise InputError(f"{shown(path)}: ROOT's \"metrics\" is not an object")
    aside = root.get("kscope")
    listed = None
    own_aside = {}
    if isinstance(aside, dict):
        if "inclusive" in aside:
            listed = aside["inclusive"]
            if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
                raise InputError(f"{shown(path)}: ROOT: \"inclusive\" in \"kscope\" is not an array of names")
        own_aside = aside.get("metrics") or {}
        if not isinstance(own_aside, dict):
            raise InputError(f"{shown(path)}: ROOT: \"metrics\" in \"kscope\" is not an object")
    zeros = {k for k, v in metrics.items()
             if isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0}
    inclusive = set(listed) if listed is not None else set(zeros)
    own = {k: v for k, v in metrics.items() if not (k in zeros and k in inclusive)}
    own.update(own_aside)
    return inclusive, own


def flatten_tree(path, doc):
    """The nodes table's columns of a .hatchet document ([ROOT, devices]):
    (columns, metric info {column: (metric, type, inclusive)}, devices)."""
    import numpy as np

    if not isinstance(doc, list) or not doc or not isinstance(doc[0], dict):
        raise InputError(f"{shown(path)}: not a .hatchet tree (expected [ROOT, device info])")
    root = doc[0]
    devices = doc[1] if len(doc) > 1 and isinstance(doc[1], dict) else {}
    inclusive, root_own = _root_layout(path, root)
    names, parents, depths, paths, kinds, comms, mets = [], [], [], [], [], [], []
    stack = [(root, -1, 0, "", 0)]  # node, parent row, depth, parent's path, under a GPU node
    try:
        while stack:
            node, parent, depth, ppath, under = stack.pop()
            frame = node["frame"]
            name = frame["name"]
            if type(name) is not str:
                raise InputError(f"{shown(path)}: a frame name under '{shown(ppath or 'ROOT')}' "
                                 "is not a string")
            m = node.get("metrics") or {}
            row = len(names)
            if row == 0:
                m, kind, gpu, p = root_own, "root", 0, ""
            else:
                p = name if depth == 1 else ppath + SEP + name
                gpu = "device_id" in m
                if under:
                    kind = "line" if "num_samples" in m else "device_scope"
                elif gpu:
                    kind = "copy" if is_copy(name) else "kernel"
                else:
                    kind = "scope"
            names.append(name)
            parents.append(parent)
            depths.append(depth)
            paths.append(p)
            kinds.append(kind)
            comms.append(kind == "kernel" and is_comm(name))
            mets.append(m)
            kids = node.get("children") or ()
            for c in reversed(kids):
                stack.append((c, row, depth + 1, p, under or gpu))
    except (KeyError, TypeError, AttributeError):
        where = paths[-1] if paths else "ROOT"
        raise InputError(f"{shown(path)}: not a .hatchet tree: a node under '{shown(where or 'ROOT')}' "
                         "lacks a frame name, or its metrics or children have the wrong shape") from None
    n = len(names)
    cols = {"node_id": np.arange(n, dtype=np.int64),
            "parent_id": [None] + parents[1:],
            "depth": np.asarray(depths, dtype=np.int32), "path": paths, "name": names,
            "kind": kinds, "comm": comms}
    info = {}
    keys = set().union(*mets) if mets else set()
    if not any(mets):  # a tree with no value at all names nothing that rolls up
        inclusive = set()
    parent_arr = np.asarray(parents, dtype=np.int64)
    depth_arr = cols["depth"]
    for key in sorted(keys):
        if not isinstance(key, str):
            raise InputError(f"{shown(path)}: a metric name is not a string")
        col = column_name(key)
        if col in info or col in cols:
            other = info[col][0] if col in info else col
            raise InputError(f"{shown(path)}: metrics '{shown(key)}' and '{shown(other)}' "
                             f"both make column {col}")
        vals = [m.get(key) for m in mets]
        types = {_TYPES.get(t) for t in {type(v) for v in vals} if t is not type(None)}
        if "list" in types and not all(_value_type(v) == "list" for v in vals if isinstance(v, list)):
            types.add(None)
        if None in types or len(types) > 1:
            raise InputError(f"{shown(path)}: metric '{shown(key)}' holds values of different "
                             "kinds (numbers, text, vectors)")
        vtype = types.pop()
        rolls = vtype == "double" and key in inclusive
        if vtype == "double":
            arr = np.array(vals, dtype=np.float64)  # None: NaN
            cols[col] = arr
        elif vtype == "list":
            cols[col] = [None if v is None else [float(x) for x in v] for v in vals]
        else:
            cols[col] = vals
        info[col] = (key, vtype, rolls)
        if rolls:
            inc_col = col + "_inc"
            if inc_col in keys or any(column_name(k) == inc_col for k in keys):
                raise InputError(f"{shown(path)}: metric '{shown(key)}' rolls up into column "
                                 f"{inc_col}, which another metric takes")
            cols[inc_col] = rollup(np.nan_to_num(arr, nan=0.0), parent_arr, depth_arr)
            info[inc_col] = (key, "double", True)
    return cols, info, devices


def rollup(own, parent, depth):
    """Each node's value plus its subtree's: children are added into their
    parents one depth at a time, deepest first (numpy, no loop per node)."""
    import numpy as np

    inc = own.copy()
    for d in range(int(depth.max(initial=0)), 0, -1):
        at = np.nonzero(depth == d)[0]
        inc += np.bincount(parent[at], weights=inc[at], minlength=len(inc))
    return inc


# ---------------------------------------------------------------- traces


def _is_gpu(ev, cat):
    """A GPU activity, by the rule of kscope's trace reader
    (src/read/trace-read.c, is_gpu)."""
    if "kernel" in cat or "memcpy" in cat or "memset" in cat or cat == "gpu":
        return True
    if cat == "scope":
        return False
    return isinstance((ev.get("args") or {}).get("call_stack"), list)


def _int_or_none(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return None


def _stack_scope(stack, name):
    """The launching scope's path of a call stack ["ROOT", ..., name]."""
    parts = [s for s in stack if isinstance(s, str)]
    if parts and parts[0] == "ROOT":
        parts = parts[1:]
    if parts and parts[-1] == name:
        parts = parts[:-1]
    return SEP.join(parts)


def read_trace(path, doc):
    """(kernels table columns, a tree document built from the trace, run
    facts or None) of a Chrome trace. The tree has each GPU activity at its
    call stack's path (time (ns), count, bytes, device_id), and each host
    slice that carries a call stack at its own (calls, wall_time (ns)), as
    kscope's trace reader places them; host slices without a call stack
    (nested only by time) are left out of it."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    facts = doc.get("metadata") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise InputError(f"{shown(path)}: not a Chrome trace (no traceEvents array)")
    k = {c: [] for c in ("device", "stream", "name", "kind", "comm", "start_ns", "duration_ns",
                         "correlation", "scope", "bytes")}
    root = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
    index = {}  # path tuple -> node

    def node_at(parts):
        node, key = root, ()
        for part in parts:
            key += (part,)
            nxt = index.get(key)
            if nxt is None:
                nxt = {"frame": {"name": part, "type": "function"}, "metrics": {}, "children": []}
                node["children"].append(nxt)
                index[key] = nxt
            node = nxt
        return node

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise InputError(f"{shown(path)}: event {i} of traceEvents is not an object")
        if ev.get("ph") != "X":
            continue
        name, cat, args = ev.get("name"), ev.get("cat") or "", ev.get("args") or {}
        ts, dur = ev.get("ts"), ev.get("dur")
        if not isinstance(name, str) or not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) \
                or not isinstance(args, dict) or not isinstance(cat, str):
            raise InputError(f"{shown(path)}: event {i}: a complete event ('X') needs a name, "
                             "ts and dur")
        stack = args.get("call_stack")
        stack = stack if isinstance(stack, list) else None
        dur_ns = int(round(dur * 1000.0))
        if not _is_gpu(ev, cat):
            if stack:  # a host scope placed by its call stack
                parts = _stack_scope(stack, name).split(SEP) if _stack_scope(stack, name) else []
                m = node_at(parts + [name])["metrics"]
                m["calls"] = m.get("calls", 0) + 1
                m["wall_time (ns)"] = m.get("wall_time (ns)", 0) + dur_ns
            continue
        scope = _stack_scope(stack, name) if stack else ""
        device = _int_or_none(args.get("device", args.get("device_id")))
        device = 0 if device is None else device
        stream = _int_or_none(args.get("stream"))
        stream = _int_or_none(ev.get("tid")) if stream is None else stream
        nbytes = args.get("bytes")
        nbytes = float(nbytes) if isinstance(nbytes, (int, float)) and not isinstance(nbytes, bool) else None
        copy = is_copy(name) or "memcpy" in cat or "memset" in cat
        k["device"].append(device)
        k["stream"].append(stream)
        k["name"].append(name)
        k["kind"].append("copy" if copy else "kernel")
        k["comm"].append(not copy and is_comm(name))
        k["start_ns"].append(int(round(ts * 1000.0)))
        k["duration_ns"].append(dur_ns)
        k["correlation"].append(_int_or_none(args.get("correlation")))
        k["scope"].append(scope)
        k["bytes"].append(nbytes)
        # the tree: one node per (path, device), as kscope's builder keys kernels
        parts = scope.split(SEP) if scope else []
        parent = node_at(parts)
        key = tuple(parts) + ((name, device),)
        leaf = index.get(key)
        if leaf is None:
            leaf = {"frame": {"name": name, "type": "function"},
                    "metrics": {"device_id": str(device), "device_type": _device_type(args)},
                    "children": []}
            parent["children"].append(leaf)
            index[key] = leaf
        m = leaf["metrics"]
        m["time (ns)"] = m.get("time (ns)", 0) + dur_ns
        m["count"] = m.get("count", 0) + 1
        if nbytes is not None:
            m["bytes"] = m.get("bytes", 0) + nbytes
    root["kscope"] = {"inclusive": ["time (ns)", "count", "bytes"]}
    return k, [root, {}], facts if isinstance(facts, dict) else None


def read_facts(path):
    """The run's facts beside a tree profile (PATH.meta.json), or None; a
    file that is there but unreadable is (None, warning line)."""
    meta = path + ".meta.json"
    if not os.path.exists(meta):
        return None, None
    try:
        with open(meta, "rb") as f:
            facts = json.loads(f.read())
        if not isinstance(facts, dict):
            raise ValueError("not a JSON object")
        return facts, None
    except (OSError, ValueError, UnicodeDecodeError) as e:
        line = str(e).splitlines()[0] if str(e) else type(e).__name__
        return None, f"{shown(meta)}: the run's facts are left out: {shown(line)}"
