"""A small Chrome DevTools Protocol client for the browser checks: opens a
page in the Chromium that e2e/browser/run started, evaluates JavaScript in
it and takes screenshots."""

import base64
import json
import os
import time
import urllib.request

import websocket


class Page:
    """One tab, driven over the DevTools websocket."""

    def __init__(self, url):
        port = os.environ["CDP_PORT"]
        deadline = time.time() + 30
        while True:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
                target = json.load(urllib.request.urlopen(request))
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=60)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Page.navigate", url=url)

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def js(self, expression):
        """The value of `expression` (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, seconds=30):
        deadline = time.time() + seconds
        # Until the page has loaded, its document may not be there yet.
        while not self.js(f"(() => {{ try {{ return {expression}; }} catch {{ return false; }} }})()"):
            if time.time() > deadline:
                raise TimeoutError(f"waited {seconds}s for {expression}")
            time.sleep(0.1)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))
