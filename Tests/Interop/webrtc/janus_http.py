"""A small client of Janus's HTTP API (the REST transport) for the test peers.

One `JanusSession` per process: `create` makes the session, a daemon thread long-polls
GET /janus/<session>?maxev=10 and hands each event to the asyncio loop, and a task sends a
`keepalive` every 20 s (Janus drops a session after `session_timeout`, 60 s by default, without
one). `request` sends a plugin message and returns the plugin's answer: Janus answers synchronous
requests (create, exists, listparticipants, ...) with `success` at once, asynchronous ones (join,
publish, configure, start, leave, ...) with `ack` and then an `event` carrying the same
transaction, which `request` waits for. Every other event of a handle is queued for `next_event`.
Every message sent and received is logged to stderr as one JSON line ("janus > " / "janus < ").
"""

import asyncio
import itertools
import json
import sys
import threading
import http.client
import urllib.parse
import urllib.request


class JanusError(Exception):
    """Janus or its plugin said no: `code` and `reason` as Janus gave them."""

    def __init__(self, code, reason, message=None):
        super().__init__(f"Janus error {code}: {reason}")
        self.code = code
        self.reason = reason
        self.message = message


def log(direction: str, message) -> None:
    print(f"janus {direction} {json.dumps(message, separators=(',', ':'))}", file=sys.stderr, flush=True)


class JanusSession:
    def __init__(self, base_url: str, quiet: bool = False):
        self.base = base_url.rstrip("/")
        self.quiet = quiet
        self.session_id = None
        self.loop = None
        self.transactions = itertools.count(1)
        self.pending: dict[str, asyncio.Future] = {}
        self.events: dict[int, asyncio.Queue] = {}
        self.closed = False
        self.poll_lock = threading.Lock()
        self.keepalive_task = None

    # --- transport

    def _post_blocking(self, path: str, message: dict, timeout: float = 10):
        if not self.quiet:
            log(">", message)
        request = urllib.request.Request(self.base + path, data=json.dumps(message).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)

    async def _post(self, path: str, message: dict) -> dict:
        if "transaction" not in message:
            message["transaction"] = f"t{next(self.transactions)}"
        reply = await asyncio.to_thread(self._post_blocking, path, message)
        if not self.quiet:
            log("<", reply)
        if reply.get("janus") == "error":
            error = reply.get("error", {})
            raise JanusError(error.get("code"), error.get("reason"), reply)
        return reply

    def _poll(self):
        url = urllib.parse.urlsplit(f"{self.base}/{self.session_id}?maxev=10")
        while True:
            # Sending a poll and `destroy` closing the session exclude each other, so no poll reaches
            # Janus after its session is gone (Janus would log "Couldn't find any session" as an error).
            with self.poll_lock:
                if self.closed:
                    return
                connection = http.client.HTTPConnection(url.hostname, url.port, timeout=40)
                try:
                    connection.request("GET", f"{url.path}?{url.query}")
                except OSError as error:
                    self.loop.call_soon_threadsafe(self._poll_failed, error)
                    return
            try:
                response = connection.getresponse()
                body = response.read()
                if response.status != 200:
                    raise ConnectionError(f"HTTP {response.status} from the long poll")
                events = json.loads(body)
            except Exception as error:  # noqa: BLE001 - the loop decides whether it matters
                if not self.closed:
                    self.loop.call_soon_threadsafe(self._poll_failed, error)
                return
            finally:
                connection.close()
            if isinstance(events, dict):
                events = [events]
            for event in events:
                self.loop.call_soon_threadsafe(self._dispatch, event)

    def _poll_failed(self, error):
        print(f"janus long poll failed: {error}", file=sys.stderr, flush=True)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError(f"Janus long poll failed: {error}"))

    def _dispatch(self, event: dict):
        kind = event.get("janus")
        if kind == "keepalive":
            return
        if not self.quiet:
            log("<", event)
        future = self.pending.get(event.get("transaction"))
        if future is not None and kind in ("event", "error") and not future.done():
            future.set_result(event)
            return
        if kind == "error" and event.get("session_id") == self.session_id and "sender" not in event:
            print(f"janus session error: {event}", file=sys.stderr, flush=True)
        sender = event.get("sender")
        if sender is not None:
            self.events.setdefault(sender, asyncio.Queue()).put_nowait(event)

    async def _keepalive(self):
        while not self.closed:
            await asyncio.sleep(20)
            try:
                await self._post(f"/{self.session_id}", {"janus": "keepalive"})
            except Exception as error:  # noqa: BLE001
                print(f"janus keepalive failed: {error}", file=sys.stderr, flush=True)

    # --- API

    async def create(self) -> int:
        """Creates the session and starts the long poll and the keepalives; returns the session id."""
        self.loop = asyncio.get_running_loop()
        reply = await self._post("", {"janus": "create"})
        self.session_id = reply["data"]["id"]
        threading.Thread(target=self._poll, name="janus-long-poll", daemon=True).start()
        self.keepalive_task = asyncio.ensure_future(self._keepalive())
        return self.session_id

    async def attach(self, plugin: str = "janus.plugin.videoroom") -> int:
        reply = await self._post(f"/{self.session_id}", {"janus": "attach", "plugin": plugin})
        handle = reply["data"]["id"]
        self.events.setdefault(handle, asyncio.Queue())
        return handle

    async def request(self, handle: int, body: dict, jsep: dict | None = None, timeout: float = 30):
        """Sends `body` (and `jsep`) to the handle's plugin; returns (plugin data, jsep or None).
        Raises JanusError when Janus or the plugin answers with an error."""
        message = {"janus": "message", "body": body, "transaction": f"t{next(self.transactions)}"}
        if jsep is not None:
            message["jsep"] = jsep
        future = self.loop.create_future()
        self.pending[message["transaction"]] = future
        try:
            reply = await self._post(f"/{self.session_id}/{handle}", message)
            if reply.get("janus") != "ack":
                result = reply
            else:
                result = await asyncio.wait_for(future, timeout)
        finally:
            self.pending.pop(message["transaction"], None)
        if result.get("janus") == "error":
            error = result.get("error", {})
            raise JanusError(error.get("code"), error.get("reason"), result)
        data = result.get("plugindata", {}).get("data", {})
        if "error_code" in data or "error" in data:
            raise JanusError(data.get("error_code"), data.get("error"), result)
        return data, result.get("jsep")

    async def trickle(self, handle: int, candidate: dict | None):
        """Sends one trickled candidate, or the end of candidates (`None`)."""
        body = candidate if candidate is not None else {"completed": True}
        await self._post(f"/{self.session_id}/{handle}", {"janus": "trickle", "candidate": body})

    async def next_event(self, handle: int, timeout: float | None = None) -> dict:
        """The handle's next event that answered no request (webrtcup, media, publishers, ...)."""
        queue = self.events.setdefault(handle, asyncio.Queue())
        return await asyncio.wait_for(queue.get(), timeout)

    async def detach(self, handle: int):
        await self._post(f"/{self.session_id}/{handle}", {"janus": "detach"})

    async def destroy(self):
        """Destroys the session (best effort) and stops the poll and keepalives. Idempotent."""
        if self.closed or self.session_id is None:
            self.closed = True
            return
        with self.poll_lock:
            self.closed = True
        if self.keepalive_task is not None:
            self.keepalive_task.cancel()
        await self._post(f"/{self.session_id}", {"janus": "destroy"})
