#!/usr/bin/env python3
"""Drives Flotilla's live view in headless Chromium (Debian's `chromium`)
over the DevTools protocol, as a user would with a mouse, and reports what
happened as one JSON line:

  drive_view.py URL --spawn-at X Y [--screenshot FILE] [--watch SECONDS]
  drive_view.py URL --only-watch --watch SECONDS   (frames per second only)

  1. load the page; record every console error and uncaught exception;
  2. read what it draws (`window.flotillaView.summary()`) and sample pixels:
     the first model's footprint and the first wall must not be background;
  3. drag the first model 100 px right and 60 px up (mouse press, moves,
     release) and report the world point it was dropped on;
  4. choose the first spawnable model file and click the world point X, Y;
  5. optionally watch for a while and report the frames per second drawn,
     and save a screenshot.

The caller checks the world itself (the model moved, the new one exists).
"""

import argparse
import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

BACKGROUND = [251, 251, 248]


class DevTools:
    """A minimal DevTools protocol client: commands, and the events seen."""

    def __init__(self, url: str):
        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params):
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def eval(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                found.append(params["exceptionDetails"].get("exception", {}).get("description", "exception"))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def mouse(self, kind: str, x: float, y: float):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=1 if kind != "mouseReleased" else 0, clickCount=1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(tools: DevTools, expression: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = tools.eval(expression)
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(f"never true: {expression}")


def not_background(pixel) -> bool:
    return any(abs(a - b) > 24 for a, b in zip(pixel[:3], BACKGROUND))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--spawn-at", nargs=2, type=float)
    parser.add_argument("--only-watch", action="store_true", help="no drag or spawn: load, watch, report fps")
    parser.add_argument("--screenshot")
    parser.add_argument("--watch", type=float, default=2.0)
    args = parser.parse_args()

    profile = tempfile.mkdtemp(prefix="flotilla-chromium-")
    port = free_port()
    chromium = subprocess.Popen(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--remote-allow-origins=*", f"--remote-debugging-port={port}",
         f"--user-data-dir={profile}", "--window-size=1000,800", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    pages = [t for t in json.load(r) if t["type"] == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit("chromium did not start")
            time.sleep(0.2)
        tools = DevTools(pages[0]["webSocketDebuggerUrl"])
        tools.call("Runtime.enable")
        tools.call("Log.enable")
        tools.call("Page.enable")
        tools.call("Page.navigate", url=args.url)
        wait_until(tools, "window.flotillaView && window.flotillaView.ready()")
        time.sleep(0.5)
        report = {}

        summary = tools.eval("flotillaView.summary()")
        rect = tools.eval("(() => { const r = document.getElementById('world').getBoundingClientRect(); return [r.left, r.top]; })()")
        first = summary["models"][0]
        sx, sy = first["screen"]
        report["robot_pixel"] = tools.eval(f"flotillaView.pixel({sx}, {sy})")
        ax, ay, bx, by = summary["firstWall"]
        mid = tools.eval(f"flotillaView.toScreen({(ax + bx) / 2}, {(ay + by) / 2})")
        around = [tools.eval(f"flotillaView.pixel({mid[0] + dx}, {mid[1] + dy})") for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
        report["wall_drawn"] = any(not_background(p) for p in around)
        report["robot_drawn"] = not_background(report["robot_pixel"])
        report["walls"] = summary["walls"]
        report["model"] = first["name"]
        report["model_pose"] = first["pose"]

        if args.only_watch:
            fps = []
            for _ in range(int(args.watch)):
                time.sleep(1.0)
                fps.append(tools.eval("flotillaView.fps()"))
            report["fps_each_second"] = fps
            report["models_drawn"] = len(tools.eval("flotillaView.summary()")["models"])
            report["console_errors"] = tools.errors()
            if args.screenshot:
                shot = tools.call("Page.captureScreenshot", format="png")
                with open(args.screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            print(json.dumps(report))
            return

        # Drag the first model by its centre.
        tx, ty = sx + 100, sy - 60
        tools.mouse("mousePressed", rect[0] + sx, rect[1] + sy)
        for k in range(1, 11):
            tools.mouse("mouseMoved", rect[0] + sx + (tx - sx) * k / 10, rect[1] + sy + (ty - sy) * k / 10)
        tools.mouse("mouseReleased", rect[0] + tx, rect[1] + ty)
        report["dragged_to"] = tools.eval(f"flotillaView.toWorld({tx}, {ty})")
        wait_until(tools, "flotillaView.lastReply() && flotillaView.lastReply().op === 'move'")
        report["move_reply"] = tools.eval("flotillaView.lastReply()")

        # Spawn the first spawnable model with a click on an empty spot.
        spawnable = tools.eval("Array.from(document.getElementById('spawn').options).map(o => o.value).filter(v => v)")
        report["spawnable"] = spawnable
        if spawnable and args.spawn_at:
            tools.eval(f"flotillaView.chooseModel({json.dumps(spawnable[0])})")
            px, py = tools.eval(f"flotillaView.toScreen({args.spawn_at[0]}, {args.spawn_at[1]})")
            tools.mouse("mousePressed", rect[0] + px, rect[1] + py)
            tools.mouse("mouseReleased", rect[0] + px, rect[1] + py)
            wait_until(tools, "flotillaView.lastReply() && flotillaView.lastReply().op === 'spawn'")
            report["spawn_reply"] = tools.eval("flotillaView.lastReply()")
            tools.eval("flotillaView.chooseModel('')")

        time.sleep(args.watch)
        report["fps"] = tools.eval("flotillaView.fps()")
        report["summary"] = tools.eval("flotillaView.summary()")
        if args.screenshot:
            shot = tools.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        report["console_errors"] = tools.errors()
        print(json.dumps(report))
    finally:
        chromium.terminate()
        try:
            chromium.wait(timeout=10)
        except subprocess.TimeoutExpired:
            chromium.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
