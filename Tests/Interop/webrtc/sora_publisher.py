#!/usr/bin/env python3
"""A real WebRTC publisher (aiortc) into a Sora channel over Sora's WebSocket signaling (the Sora
stand-in, sora_standin.py, in the tests): one Opus audio track played from a WAV at real time.

    .venv/bin/python Tests/Interop/webrtc/sora_publisher.py --url ws://127.0.0.1:PORT/signaling \\
        --channel ID --name alice [--client-id C] --wav alice.wav [--seconds S] [--start-at-unix T] \\
        [--metadata JSON] [--no-pong] [--quiet]

It sends `connect` (role sendonly, `signaling_notify_metadata: {"name": NAME}`, the offer of a
throwaway PeerConnection, as the SDKs do), answers the server's offer with the WAV's track, answers
`ping` with `pong` (not with --no-pong: the server should drop it), and prints
`published <connection_id>` once its PeerConnection is connected. After S seconds (without
--seconds: until stdin closes), SIGTERM or SIGINT it sends `{"type": "disconnect", "reason":
"NO-ERROR"}` and exits 0. With --no-pong it prints `dropped <code> <reason>` when the server closes
the WebSocket and exits 0. With --start-at-unix the WAV's first sample is sent at that wall-clock
time (silence before). Messages are logged to stderr (--quiet: none). A refused connect: one line
`refused <code> <reason>` on stdout and exit 1.
"""

import argparse
import asyncio
import json
import signal
import sys
import threading

import loopback
from aiortc import RTCPeerConnection, RTCSessionDescription
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from wav_audio import WavAudioTrack

signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def parse_arguments():
    parser = argparse.ArgumentParser(description="aiortc publisher into a Sora channel")
    parser.add_argument("--url", required=True)
    parser.add_argument("--channel", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--client-id")
    parser.add_argument("--wav", required=True)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--start-at-unix", type=float)
    parser.add_argument("--metadata", help="the connect message's metadata, JSON (e.g. an access token)")
    parser.add_argument("--no-pong", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args()


async def run(args) -> int:
    track = WavAudioTrack(args.wav, start_at=args.start_at_unix)
    throwaway = RTCPeerConnection(loopback.configuration())
    throwaway.addTransceiver("audio", direction="sendonly")
    capability = (await throwaway.createOffer()).sdp
    await throwaway.close()
    pc = RTCPeerConnection(loopback.configuration())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    published = asyncio.Event()

    def log(direction, message):
        if not args.quiet:
            shown = dict(message)
            if isinstance(shown.get("sdp"), str):
                shown["sdp"] = shown["sdp"][:40] + "..."
            print(f"sora {direction} {json.dumps(shown)}", file=sys.stderr, flush=True)

    async with connect(args.url) as ws:
        message = {"type": "connect", "role": "sendonly", "channel_id": args.channel, "sdp": capability,
                   "sora_client": "sora_publisher.py", "environment": "aiortc", "audio": True, "video": False,
                   "signaling_notify_metadata": {"name": args.name}}
        if args.client_id:
            message["client_id"] = args.client_id
        if args.metadata:
            message["metadata"] = json.loads(args.metadata)
        await ws.send(json.dumps(message))
        connection_id = None

        @pc.on("connectionstatechange")
        def on_state():
            if pc.connectionState == "connected" and not published.is_set():
                published.set()
                print(f"published {connection_id}", flush=True)

        async def receive():
            nonlocal connection_id
            async for raw in ws:
                message = json.loads(raw)
                log("<", message)
                kind = message.get("type")
                if kind == "offer":
                    connection_id = message.get("connection_id")
                    await pc.setRemoteDescription(RTCSessionDescription(sdp=message["sdp"], type="offer"))
                    transceiver = pc.getTransceivers()[0]
                    transceiver.direction = "sendonly"
                    transceiver.sender.replaceTrack(track)
                    await pc.setLocalDescription(await pc.createAnswer())
                    await ws.send(json.dumps({"type": "answer", "sdp": pc.localDescription.sdp}))
                elif kind == "re-offer":
                    await pc.setRemoteDescription(RTCSessionDescription(sdp=message["sdp"], type="offer"))
                    await pc.setLocalDescription(await pc.createAnswer())
                    await ws.send(json.dumps({"type": "re-answer", "sdp": pc.localDescription.sdp}))
                elif kind == "ping" and not args.no_pong:
                    await ws.send(json.dumps({"type": "pong"}))

        receiver = asyncio.ensure_future(receive())
        if args.seconds is None:
            def read():
                while sys.stdin.buffer.read(4096):
                    pass
                loop.call_soon_threadsafe(stop.set)
            threading.Thread(target=read, daemon=True).start()
        stopper = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait([receiver, stopper], timeout=args.seconds,
                                     return_when=asyncio.FIRST_COMPLETED)
        if receiver in done:
            code, reason = ws.close_code, ws.close_reason
            if args.no_pong and published.is_set():
                print(f"dropped {code} {reason}", flush=True)
                await pc.close()
                return 0
            print(f"refused {code} {reason}", flush=True)
            await pc.close()
            return 1
        try:
            await ws.send(json.dumps({"type": "disconnect", "reason": "NO-ERROR"}))
        except ConnectionClosed:
            pass
        receiver.cancel()
        stopper.cancel()
    await pc.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run(parse_arguments())))
