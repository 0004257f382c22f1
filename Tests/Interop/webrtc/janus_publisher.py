#!/usr/bin/env python3
"""A real WebRTC publisher (aiortc) into a Janus VideoRoom over Janus's HTTP API: one Opus audio
track played from a WAV at real time, on loopback only.

    .venv/bin/python Tests/Interop/webrtc/janus_publisher.py --janus http://127.0.0.1:PORT/janus \\
        --room 1234 [--pin P] --display alice --wav alice.wav [--seconds S] [--start-at-unix T]

It creates a session, attaches janus.plugin.videoroom, joins the room as a publisher with
`display`, publishes an aiortc offer (sendonly audio, Opus, candidates inline) and prints one line
`published <feed id>` on stdout once ICE/DTLS is up and Janus reports it receives the audio. Then
it runs for S seconds (without --seconds: until its standard input closes), or until SIGTERM or
SIGINT, and leaves: unpublish, leave, detach, destroy the session; exit 0. With --start-at-unix
the WAV's first sample is sent at that wall-clock time (silence before); otherwise the WAV starts
when media starts. After the WAV's end it sends silence. Requests and events are logged to stderr
as JSON lines (--quiet: none). Any failure: one line on stderr and exit 1.
"""

import argparse
import asyncio
import signal
import sys
import threading

import loopback
from aiortc import RTCPeerConnection, RTCSessionDescription
from janus_http import JanusError, JanusSession
from wav_audio import WavAudioTrack

# A parent may have SIGTERM and SIGINT blocked (a Swift test binary's children inherit its
# threads' mask), and a blocked signal never reaches the handlers that make this leave cleanly.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def parse_arguments():
    parser = argparse.ArgumentParser(description="aiortc publisher into a Janus VideoRoom")
    parser.add_argument("--janus", required=True, help="Janus's HTTP API, http://127.0.0.1:PORT/janus")
    parser.add_argument("--room", required=True, type=int)
    parser.add_argument("--pin")
    parser.add_argument("--display", required=True)
    parser.add_argument("--wav", required=True, help="16-bit PCM WAV, mono or stereo, any rate")
    parser.add_argument("--seconds", type=float, help="how long to stay published (default: until stdin closes)")
    parser.add_argument("--start-at-unix", type=float, help="wall-clock time of the WAV's first sample")
    parser.add_argument("--quiet", action="store_true", help="do not log Janus messages to stderr")
    return parser.parse_args()


def stop_on_stdin_end(loop, stop: asyncio.Event):
    def read():
        while sys.stdin.buffer.read(4096):
            pass
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=read, name="stdin", daemon=True).start()


async def wait_until_receiving(janus: JanusSession, handle: int, pc: RTCPeerConnection):
    """Waits for Janus's `webrtcup` and its `media` event saying it receives audio."""
    up = receiving = False
    while not (up and receiving):
        event = await janus.next_event(handle)
        if event.get("janus") == "webrtcup":
            up = True
        elif event.get("janus") == "media" and event.get("type") == "audio" and event.get("receiving"):
            receiving = True
        elif event.get("janus") == "hangup":
            raise RuntimeError(f"Janus hung up the PeerConnection: {event.get('reason')}")
    if pc.connectionState != "connected":
        raise RuntimeError(f"PeerConnection is {pc.connectionState} although Janus says webrtcup")


async def run(args) -> int:
    try:
        track = WavAudioTrack(args.wav, start_at=args.start_at_unix)
    except ValueError as error:
        print(f"janus_publisher: {error}", file=sys.stderr, flush=True)
        return 1
    janus = JanusSession(args.janus, quiet=args.quiet)
    pc = RTCPeerConnection(loopback.configuration())
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    handle = None
    joined_room = published = False
    try:
        await janus.create()
        handle = await janus.attach("janus.plugin.videoroom")
        join = {"request": "join", "ptype": "publisher", "room": args.room, "display": args.display}
        if args.pin is not None:
            join["pin"] = args.pin
        joined, _ = await janus.request(handle, join)
        joined_room = True
        feed = joined["id"]
        pc.addTransceiver(track, direction="sendonly")
        await pc.setLocalDescription(await pc.createOffer())
        offer = {"type": pc.localDescription.type, "sdp": pc.localDescription.sdp}
        configured, answer = await janus.request(handle, {"request": "publish", "display": args.display}, offer)
        if answer is None:
            raise RuntimeError(f"Janus answered publish without an SDP answer: {configured}")
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))
        await asyncio.wait_for(wait_until_receiving(janus, handle, pc), 30)
        published = True
        print(f"published {feed}", flush=True)
        if args.seconds is None:
            stop_on_stdin_end(loop, stop)
        try:
            await asyncio.wait_for(stop.wait(), args.seconds)
        except asyncio.TimeoutError:
            pass
        return 0
    except (JanusError, RuntimeError, ConnectionError, OSError, ValueError, asyncio.TimeoutError) as error:
        what = "timed out waiting for Janus" if isinstance(error, asyncio.TimeoutError) else str(error)
        print(f"janus_publisher: {what}", file=sys.stderr, flush=True)
        return 1
    finally:
        if joined_room and not janus.closed:
            for body in ([{"request": "unpublish"}] if published else []) + [{"request": "leave"}]:
                try:
                    await janus.request(handle, body, timeout=5)
                except Exception as error:  # noqa: BLE001 - leaving is best effort
                    print(f"janus_publisher: {body['request']}: {error}", file=sys.stderr, flush=True)
        await pc.close()
        if janus.session_id is not None:
            try:
                if handle is not None:
                    await janus.detach(handle)
                await janus.destroy()
            except Exception as error:  # noqa: BLE001
                print(f"janus_publisher: destroy: {error}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(run(parse_arguments())))
