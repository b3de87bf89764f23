"""cdp.py - a headless Chromium driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on fds 3 and 4), so
the report tests need no network port and no Python package beyond the
standard library."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_or_exit():
    """The Chromium to run; without one, says so and exits: 77 (skipped),
    or 1 under CI, which installs it (tools/setup-deps.sh)."""
    exe = find_chromium()
    if not exe:
        print("chromium not found: install it (tools/setup-deps.sh) to run the browser tests")
        sys.exit(1 if os.environ.get("CI") else 77)
    return exe


class Browser:
    def __init__(self, exe):
        self.profile = tempfile.mkdtemp(prefix="kscope-chromium-")
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def fds():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        # (pass_fds keeps 3 and 4 open past the close after fds() runs.)
        # --host-resolver-rules makes any name lookup fail: a page that
        # tried to reach the network would fail too, not pass by luck.
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--disable-extensions", "--user-data-dir=" + self.profile,
             "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,800", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4, to_child_r, from_child_w),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def drain(self, seconds=0.2):
        """Collect the events that arrive within `seconds`."""
        self.send("Browser.getVersion", timeout=seconds + 30)

    def open_page(self):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable", session=session)
        return Page(self, session)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser, session):
        self.b = browser
        self.session = session

    def send(self, method, params=None, timeout=30):
        return self.b.send(method, params, self.session, timeout)

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def goto(self, url, timeout=20):
        self.b.events.clear()
        self.send("Page.navigate", {"url": url})
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.eval("!!(window.kscopeReport && kscopeReport.state.ready) || "
                         "document.readyState === 'complete' && !!document.querySelector('pre')"):
                return
            time.sleep(0.05)
        raise TimeoutError(f"{url}: the page did not become ready")

    def problems(self):
        """Console errors, exceptions and requests that left the page."""
        self.b.drain()
        out = []
        for e in self.b.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:300])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append("console: " + json.dumps(p.get("args"))[:300])
            elif m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                out.append("log: " + p["entry"].get("text", "")[:300])
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    out.append("request: " + url)
        return out

    def requests_through(self):
        """URLs of requests that went out (not blocked by the page's policy)."""
        self.b.drain()
        blocked = {e["params"]["requestId"] for e in self.b.events
                   if e.get("method") == "Network.loadingFailed" and e["params"].get("blockedReason")}
        return [e["params"]["request"]["url"] for e in self.b.events
                if e.get("method") == "Network.requestWillBeSent"
                and e["params"]["requestId"] not in blocked]

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 1})

    def key(self, key):
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "text": key})

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
