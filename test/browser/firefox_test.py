"""firefox_test.py - `kscope report --html` pages open and render in a
headless Firefox ESR (Debian's firefox-esr, `--headless --screenshot`): the
flame graph of a tree, the timeline of a trace, the diff of two trees and
the source lines of a profile with PC samples (its hottest line's share
bar, 91% of its kernel, is the long bar there).
A screenshot shows what the page's script drew, so each one must hold a
long bar in a colour of the drawing (ROOT in the flame graph and the diff,
the whole-run scope in the timeline); a page whose script failed shows the
static header only. The screenshots are kept in the build tree
(report-screens/firefox-*.png).

Exit 77 (skipped, with a message) when no Firefox is installed, except
under CI, where .ci/run installs firefox-esr and its absence is a failure.
The Chromium tests (report_test.py) check the page's state and requests;
this one checks that a second engine draws it."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

KS = os.environ["KSCOPE_CLI"]
SRC = os.environ["KSCOPE_SOURCE_DIR"]
BIN = os.environ["KSCOPE_BINARY_DIR"]
WORK = os.path.join(BIN, "report-screens")
fails = []


def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f" ({detail})"))
    if not ok:
        fails.append(what)


def find_firefox():
    for name in ("firefox-esr", "firefox"):
        path = shutil.which(name)
        if path:
            return path
    return None


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA,
    non-interlaced PNG: what Firefox's screenshots are."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    at, idat, head = 8, b"", None
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    w, h, depth, color, _, _, interlace = head
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"{path}: PNG of depth {depth}, colour type {color}: not read here")
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def longest_drawn_bar(path):
    """The longest horizontal run of one coloured (not white or grey)
    pixel colour: the page's static parts are white and greys only."""
    w, h, rows = read_png(path)
    best = 0
    for row in rows:
        run, last = 0, None
        for px in row:
            run = run + 1 if px == last else 1
            last = px
            if max(px) - min(px) > 30:
                best = max(best, run)
    return best, w


def screenshot(exe, page, name):
    """Open page (a file, with a #view) in a fresh profile; the PNG's path."""
    out = os.path.join(WORK, f"firefox-{name}.png")
    if os.path.exists(out):
        os.remove(out)
    profile = tempfile.mkdtemp(prefix="kscope-firefox-")
    try:
        # Nothing to fetch on start: no updates, telemetry or safe browsing lists.
        with open(os.path.join(profile, "user.js"), "w") as f:
            for pref in ("app.update.enabled", "datareporting.policy.dataSubmissionEnabled",
                         "toolkit.telemetry.enabled", "browser.safebrowsing.malware.enabled",
                         "browser.safebrowsing.phishing.enabled", "network.captive-portal-service.enabled"):
                f.write(f'user_pref("{pref}", false);\n')
        r = subprocess.run([exe, "--headless", "--no-remote", "-profile", profile, "--window-size=1280,800",
                            "--screenshot", out, "file://" + page], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, MOZ_HEADLESS="1"))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if not os.path.exists(out):
        raise RuntimeError(f"firefox wrote no screenshot (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    return out


def report(name, *profiles):
    path = os.path.join(WORK, f"firefox-{name}.html")
    subprocess.run([KS, "report", "--html", path, *profiles], check=True)
    return path


def main():
    exe = find_firefox()
    if not exe:
        if os.environ.get("CI"):
            print("FAIL: firefox-esr not found, though CI installs it (.ci/run)")
            sys.exit(1)
        print("SKIPPED: firefox-esr not found: install it (apt-get install firefox-esr) to check the "
              "HTML report in Firefox")
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    example = os.path.join(BIN, "example")
    for name, data in (("ff-a", "tree"), ("ff-t", "trace")):
        subprocess.run([example, os.path.join(WORK, name), data], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    tree = os.path.join(SRC, "test", "data", "proton", "rich_tree.hatchet")
    merged = os.path.join(WORK, "firefox-merged.hatchet")
    subprocess.run([KS, "merge", "-o", merged, tree, tree], check=True, stdout=subprocess.DEVNULL)
    pages = [("flame", report("tree", os.path.join(WORK, "ff-a.hatchet")) + "#flame"),
             ("timeline", report("trace", os.path.join(WORK, "ff-t.chrome_trace")) + "#timeline"),
             ("diff", report("diff", tree, merged) + "#diff"),
             ("lines", report("lines", os.path.join(SRC, "test", "data", "kscope", "pcsampling.hatchet")) + "#lines")]
    print("firefox:", subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip())
    for view, page in pages:
        try:
            png = screenshot(exe, page, view)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            check(f"{view}: Firefox opens the page", False, e)
            continue
        bar, width = longest_drawn_bar(png)
        want = 130 if view == "lines" else width // 2  # lines: 91% of a 160 px share bar
        check(f"{view}: Firefox draws it (a {bar} px bar of the drawing in {width} px)", bar >= want,
              f"see {png}")
    print(f"screenshots in {WORK}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
