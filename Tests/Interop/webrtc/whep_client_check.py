#!/usr/bin/env python3
"""A reference WHEP client (aiortc): proves whep_server.py and is an oracle for the real client.

    .venv/bin/python Tests/Interop/webrtc/whep_client_check.py --url http://127.0.0.1:PORT/whep/NAME \\
        [--token T] --out FILE.wav --seconds S [--show-sdp]

POSTs a recvonly audio offer (candidates inline), prints `status <code>` and each response
header as `header <Name>: <value>`, records the audio for S seconds (mono 48 kHz), DELETEs the
session (`deleted <code>`) and prints `recorded <samples> <path>`. A non-201 answer: exit 1.
"""

import argparse
import asyncio
import sys
import urllib.error
import urllib.parse
import urllib.request

import loopback
from aiortc import RTCPeerConnection, RTCSessionDescription
from wav_audio import WavRecorder


def http(method: str, url: str, body: bytes | None, headers: dict[str, str]):
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--show-sdp", action="store_true")
    args = parser.parse_args()
    auth = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    pc = RTCPeerConnection(loopback.configuration())
    pc.addTransceiver("audio", direction="recvonly")
    recorder = None

    @pc.on("track")
    def on_track(track):
        nonlocal recorder
        recorder = WavRecorder(track, args.out)

    await pc.setLocalDescription(await pc.createOffer())
    if args.show_sdp:
        print("offer:\n" + pc.localDescription.sdp, flush=True)
    status, headers, body = await asyncio.to_thread(
        http, "POST", args.url, pc.localDescription.sdp.encode(), {"Content-Type": "application/sdp", **auth})
    print(f"status {status}", flush=True)
    for key, value in headers.items():
        print(f"header {key}: {value}", flush=True)
    if status != 201:
        print(body.decode(errors="replace").strip(), file=sys.stderr)
        await pc.close()
        return 1
    if args.show_sdp:
        print("answer:\n" + body.decode(), flush=True)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body.decode(), type="answer"))
    await asyncio.sleep(args.seconds)
    session = urllib.parse.urljoin(args.url, headers["Location"])
    status, _, _ = await asyncio.to_thread(http, "DELETE", session, None, auth)
    print(f"deleted {status}", flush=True)
    if recorder is not None:
        await recorder.stop()
    await pc.close()
    print(f"recorded {recorder.samples if recorder else 0} {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
