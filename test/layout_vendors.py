"""layout_vendors.py - the seam's rule (docs/ARCHITECTURE.md, "Where to add
a vendor"), for test/cli-layout.sh: no GPU vendor's name in an identifier
or a string of the product's code outside the seam's places.

The names: cupti, cuda, nvtx, nvml, roctx anywhere in a word, rocm and hip
where a word or a camel-case part starts (so "sigprocmask" and "ship" are
no vendor), any case. Comments and Python docstrings are documentation and
are not checked; identifiers and strings are.

The seam's places, where vendors are named freely:
  src/gpu/<folder>/      a vendor's folder (and devices/, the GPU
                         architectures of every vendor the readers know)
  src/diag/<vendor>.c    a file of src/diag/ that defines a kscope__gpu_vendor
  cmake/<vendor>.cmake   a file of cmake/ with build facts ("#:" lines)
  include/kscope/device.h  device-side scopes, compiled into CUDA kernels
  test/, bench/          not scanned
The registration lists of src/gpu/registry.c and src/diag/gpu.c (between
their "vendors" and "end of vendors" marker comments) name each vendor's
table entry: one line per vendor. ALLOWED below lists, with its reason,
every other line that must name a vendor: names of APIs kscope speaks
(MAX's, Proton's and Triton's) and earlier public names kept as aliases.

Usage: python3 layout_vendors.py SOURCE_DIR; prints each hit as
"path:line: text" and exits 1 when there is one.
"""
import ast
import glob
import io
import os
import re
import sys
import tokenize

VENDOR = re.compile(r"(?i:cupti|cuda|nvtx|nvml|roctx)"
                    r"|(?<![A-Za-z])(?i:rocm|hip)"
                    r"|(?<=[a-z])(?:ROCm|Rocm|ROCM|Hip|HIP)")

# (path, regex a line must match, why the vendor's name is needed there)
ALLOWED = [
    ("include/kscope.h", r"#define KSCOPE_ENOCUPTI KSCOPE_ENOGPUTOOL",
     "an earlier public name, kept as an alias"),
    ("include/kscope.h", r"KSCOPE_EXTERN int kscope_nvtx_ranges\(int on\);",
     "the public call that turns NVTX ranges into scopes names the API it serves"),
    ("python/kscope/__init__.py", r"\bcuda_profiler_region\b",
     "MAX's max.profiler name"),
    ("python/kscope/oneshot.py", r"\bdef cuda_profiler_region\(\)",
     "MAX's max.profiler name"),
    ("python/kscope/oneshot.py", r"^\s+(cupti|nvml): bool\b|def cudart_loadable|cudart_loadable: bool"
     r"|cupti=probe|nvml=probe|return Backend\(gpu=False, cupti=False, nvml=False"
     r"|self\.cupti|self\.nvml|self\.cudart_loadable|f\"cupti=|nvml=\{",
     "the fields of detect_backend()'s Backend and MAX's ProfileBackend, as documented"),
    ("python/kscope/oneshot.py", r'"--report", "cuda_gpu_kern_sum"',
     "the name of Nsight Systems' kernel report, for reading an nsys report"),
    ("python/kscope/sessions.py", r"\bnvtx_wanted\b|enable_nvtx|TRITON_ENABLE_NVTX",
     "Triton's knob (knobs.proton.enable_nvtx, TRITON_ENABLE_NVTX) that switches the ranges"),
]

MARK_BEGIN = re.compile(r"/\* -+ vendors \*/")
MARK_END = re.compile(r"/\* -+ end of vendors \*/")
REGISTRATION_FILES = ("src/gpu/registry.c", "src/diag/gpu.c")


def c_code(text):
    """The text with C comments blanked (strings and newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def python_code(text):
    """The text with comments and docstrings blanked (other strings kept)."""
    docs = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docs.add((body[0].lineno, body[0].col_offset))
    lines = text.split("\n")
    blank = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and tok.start in docs):
            blank.append((tok.start, tok.end))
    for (r0, c0), (r1, c1) in reversed(blank):
        for r in range(r0, r1 + 1):
            a = c0 if r == r0 else 0
            b = c1 if r == r1 else len(lines[r - 1])
            lines[r - 1] = lines[r - 1][:a] + " " * (b - a) + lines[r - 1][b:]
    return "\n".join(lines)


def cmake_code(text):
    """The text with CMake comments blanked (a '#' outside a quoted string)."""
    out = []
    for line in text.split("\n"):
        quoted, cut = False, len(line)
        for i, c in enumerate(line):
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                quoted = not quoted
            elif c == "#" and not quoted:
                cut = i
                break
        out.append(line[:cut])
    return "\n".join(out)


def checked_files(src):
    """(path relative to src, kind) of every file the rule covers."""
    files = []
    for path in sorted(glob.glob(os.path.join(src, "src", "**", "*.[ch]"), recursive=True)):
        rel = os.path.relpath(path, src)
        parts = rel.split(os.sep)
        if parts[1] == "gpu" and len(parts) > 3:
            continue  # src/gpu/<folder>/...: a vendor's folder
        if parts[1] == "diag" and "const kscope__gpu_vendor kscope__" in open(path).read():
            continue  # src/diag/<vendor>.c
        files.append((rel, "c"))
    files.append(("include/kscope.h", "c"))
    for path in sorted(glob.glob(os.path.join(src, "python", "src", "*.[ch]"))):
        files.append((os.path.relpath(path, src), "c"))
    for path in sorted(glob.glob(os.path.join(src, "python", "**", "*.py"), recursive=True)):
        rel = os.path.relpath(path, src)
        if not rel.startswith(os.path.join("python", "tests")):
            files.append((rel, "py"))
    files.append(("CMakeLists.txt", "cmake"))
    for path in sorted(glob.glob(os.path.join(src, "cmake", "*"))):
        text = open(path).read()
        if not re.search(r"^#: ", text, re.M):  # not cmake/<vendor>.cmake
            files.append((os.path.relpath(path, src), "cmake"))
    return files


def hits(src):
    strip = {"c": c_code, "py": python_code, "cmake": cmake_code}
    found = []
    for rel, kind in checked_files(src):
        raw = open(os.path.join(src, rel)).read()
        code = strip[kind](raw).split("\n")
        raw_lines = raw.split("\n")
        allowed = [re.compile(rx) for path, rx, _why in ALLOWED if path == rel]
        in_list = False
        for no, line in enumerate(code, 1):
            text = raw_lines[no - 1]
            if rel in REGISTRATION_FILES and MARK_BEGIN.search(text):
                in_list = True
            elif rel in REGISTRATION_FILES and MARK_END.search(text):
                in_list = False
            if in_list or not VENDOR.search(line):
                continue
            if any(a.search(text) for a in allowed):
                continue
            found.append(f"{rel}:{no}: {text.strip()}")
    return found


def main():
    found = hits(sys.argv[1])
    for h in found:
        print(h)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
