#!/usr/bin/env python3
"""A reference WebRTC subscriber (aiortc) of a Janus VideoRoom over Janus's HTTP API: it records
every publisher's audio to a WAV. It proves the test harness (a WAV published by
janus_publisher.py comes back here) and is the oracle the real client is compared against.

    .venv/bin/python Tests/Interop/webrtc/janus_subscriber_check.py --janus http://127.0.0.1:PORT/janus \\
        --room 1234 [--pin P] --out DIR [--seconds S] [--display NAME]

It joins the room as a publisher that never publishes (to be told of publishers: the `joined`
answer's `publishers` list, then `event`s with `publishers`, `unpublished` and `leaving`) and
prints `joined <own id>`. For each publisher it attaches one more handle, joins it as a
subscriber (`ptype: subscriber`, `streams: [{feed: ID}]`, with the watcher's `private_id`),
answers Janus's offer, sends `start`, and records the feed's audio (mono 48 kHz, the first
channel of what Opus decodes) to DIR/<feed id>.wav, printing `subscribed <feed id> <display>`.
Sample 0 of every WAV is the moment `joined` was printed (silence until the feed's first frame
arrives), so the feeds share one timeline (to within the path's delay, tens of ms). A feed that leaves is closed. After S seconds (without
--seconds: when stdin closes; or on SIGTERM/SIGINT) it prints `recorded <feed id> <samples>
<path>` for each feed, leaves and destroys the session. Janus's messages go to stderr as JSON
lines (--quiet: none). Failure: one line on stderr and exit 1.
"""

import argparse
import asyncio
import os
import signal
import sys
import threading
import time

import loopback
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.sdp import candidate_from_sdp
from janus_http import JanusError, JanusSession
from wav_audio import WavRecorder

# A parent may have SIGTERM and SIGINT blocked (a Swift test binary's children inherit its
# threads' mask), and a blocked signal never reaches the handlers that make this leave cleanly.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def parse_arguments():
    parser = argparse.ArgumentParser(description="aiortc subscriber of a Janus VideoRoom (records each feed)")
    parser.add_argument("--janus", required=True)
    parser.add_argument("--room", required=True, type=int)
    parser.add_argument("--pin")
    parser.add_argument("--out", required=True, help="directory for <feed id>.wav")
    parser.add_argument("--seconds", type=float, help="how long to record (default: until stdin closes)")
    parser.add_argument("--display", default="roomtap-oracle", help="the watcher's display name")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args()


class Feed:
    """One subscription: a handle, a PeerConnection and the recorder of its audio."""

    def __init__(self, feed_id: int, display: str, path: str):
        self.feed_id = feed_id
        self.display = display
        self.path = path
        self.handle = None
        self.pc = RTCPeerConnection(loopback.configuration())
        self.recorder = None
        self.events_task = None

    async def close(self, janus: JanusSession):
        if self.events_task is not None:
            self.events_task.cancel()
        if self.recorder is not None:
            await self.recorder.stop()
        await self.pc.close()
        if self.handle is not None and not janus.closed:
            try:
                await janus.request(self.handle, {"request": "leave"}, timeout=5)
                await janus.detach(self.handle)
            except Exception as error:  # noqa: BLE001 - leaving is best effort
                print(f"janus_subscriber_check: leaving feed {self.feed_id}: {error}", file=sys.stderr, flush=True)
            self.handle = None


class Oracle:
    def __init__(self, args):
        self.args = args
        self.janus = JanusSession(args.janus, quiet=args.quiet)
        self.feeds: dict[int, Feed] = {}
        self.private_id = None
        self.joined_at = None

    def pinned(self, body: dict) -> dict:
        if self.args.pin is not None:
            body["pin"] = self.args.pin
        return body

    async def subscribe(self, publisher: dict):
        feed_id = publisher["id"]
        if feed_id in self.feeds:
            return
        feed = Feed(feed_id, publisher.get("display", ""), os.path.join(self.args.out, f"{feed_id}.wav"))
        self.feeds[feed_id] = feed

        @feed.pc.on("track")
        def on_track(track):
            if track.kind == "audio" and feed.recorder is None:
                feed.recorder = WavRecorder(track, feed.path, origin=self.joined_at)

        feed.handle = await self.janus.attach("janus.plugin.videoroom")
        feed.events_task = asyncio.ensure_future(self.trickled(feed))
        join = self.pinned({"request": "join", "ptype": "subscriber", "room": self.args.room,
                            "streams": [{"feed": feed_id}]})
        if self.private_id is not None:
            join["private_id"] = self.private_id
        attached, offer = await self.janus.request(feed.handle, join)
        if offer is None:
            raise RuntimeError(f"Janus attached feed {feed_id} without an offer: {attached}")
        await feed.pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type=offer["type"]))
        await feed.pc.setLocalDescription(await feed.pc.createAnswer())
        answer = {"type": feed.pc.localDescription.type, "sdp": feed.pc.localDescription.sdp}
        await self.janus.request(feed.handle, {"request": "start"}, answer)
        print(f"subscribed {feed_id} {feed.display}", flush=True)

    async def trickled(self, feed: Feed):
        """Janus's trickled candidates for the feed (if any) go to its PeerConnection."""
        while True:
            event = await self.janus.next_event(feed.handle)
            if event.get("janus") != "trickle":
                continue
            candidate = event.get("candidate", {})
            if candidate.get("completed") or "candidate" not in candidate:
                continue
            parsed = candidate_from_sdp(candidate["candidate"].split(":", 1)[1])
            parsed.sdpMid = candidate.get("sdpMid")
            parsed.sdpMLineIndex = candidate.get("sdpMLineIndex")
            await feed.pc.addIceCandidate(parsed)

    async def publishers_changed(self, data: dict):
        for publisher in data.get("publishers", []):
            try:
                await self.subscribe(publisher)
            except JanusError as error:  # the feed left before we subscribed (428): go on with the others
                print(f"janus_subscriber_check: cannot subscribe to feed {publisher['id']}: {error}",
                      file=sys.stderr, flush=True)
        for key in ("unpublished", "leaving"):
            gone = data.get(key)
            if isinstance(gone, int) and gone in self.feeds:
                feed = self.feeds[gone]
                if feed.recorder is not None:
                    await feed.recorder.stop()

    async def watch(self, handle: int):
        while True:
            event = await self.janus.next_event(handle)
            data = event.get("plugindata", {}).get("data", {})
            if data.get("videoroom") in ("event", "joined"):
                await self.publishers_changed(data)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        os.makedirs(self.args.out, exist_ok=True)
        watcher = None
        watching = None
        try:
            await self.janus.create()
            watcher = await self.janus.attach("janus.plugin.videoroom")
            joined, _ = await self.janus.request(watcher, self.pinned(
                {"request": "join", "ptype": "publisher", "room": self.args.room, "display": self.args.display}))
            self.private_id = joined.get("private_id")
            self.joined_at = time.time()
            print(f"joined {joined['id']}", flush=True)
            await self.publishers_changed(joined)
            watching = asyncio.ensure_future(self.watch(watcher))
            if self.args.seconds is None:
                def read():
                    while sys.stdin.buffer.read(4096):
                        pass
                    loop.call_soon_threadsafe(stop.set)
                threading.Thread(target=read, daemon=True).start()
            stopped = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait([stopped, watching], timeout=self.args.seconds,
                                         return_when=asyncio.FIRST_COMPLETED)
            if watching in done:
                watching.result()  # raises what failed while subscribing
            return 0
        except (JanusError, RuntimeError, ConnectionError, OSError, asyncio.TimeoutError) as error:
            what = "timed out waiting for Janus" if isinstance(error, asyncio.TimeoutError) else str(error)
            print(f"janus_subscriber_check: {what}", file=sys.stderr, flush=True)
            return 1
        finally:
            if watching is not None:
                watching.cancel()
            for feed in self.feeds.values():
                await feed.close(self.janus)
                samples = feed.recorder.samples if feed.recorder is not None else 0
                print(f"recorded {feed.feed_id} {samples} {feed.path}", flush=True)
            if self.janus.session_id is not None:
                try:
                    if self.joined_at is not None:
                        await self.janus.request(watcher, {"request": "leave"}, timeout=5)
                    await self.janus.destroy()
                except Exception as error:  # noqa: BLE001
                    print(f"janus_subscriber_check: destroy: {error}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(Oracle(parse_arguments()).run()))
