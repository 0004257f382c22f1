#!/usr/bin/env python3
"""A WHEP server (draft-ietf-wish-whep) on aiortc for the client's tests: each stream is a WAV
sent as Opus audio at real time, on loopback only.

    .venv/bin/python Tests/Interop/webrtc/whep_server.py --stream alice=alice.wav [--stream NAME=WAV ...] \\
        [--token T] [--port P] [--ice-server URL ...]

It binds 127.0.0.1 (port P, default one the kernel gives) and prints `listening <port>` on stdout.
  POST /whep/NAME  (Content-Type: application/sdp, the client's offer) -> 201 Created,
      Location: /whep/NAME/<session>, Content-Type: application/sdp, the answer (the offer's
      first audio m-line sendonly, Opus, carrying the WAV from the moment media flows; silence
      after its end), one `Link: <URL>; rel="ice-server"` per --ice-server (default
      stun:127.0.0.1:3478, where nothing answers: the client must parse it, not need it).
      401 without `Authorization: Bearer T` when --token is given; 404 for an unknown NAME;
      415 for another content type; 400 for an offer that is no SDP or has no audio to receive.
  DELETE /whep/NAME/<session> -> 200 and the PeerConnection closes (404 when unknown).
  PATCH /whep/NAME/<session> -> 405 (no trickle ICE: candidates travel in the offer and answer).
  OPTIONS /whep/NAME -> 204 with Accept-Post: application/sdp and the Link headers.
Each request is logged to stderr as one line: `whep: METHOD PATH -> STATUS [detail]`. SIGTERM or
SIGINT closes every session and exits 0.
"""

import argparse
import asyncio
import os
import signal
import sys
import uuid

import loopback
from aiortc import RTCPeerConnection, RTCSessionDescription
from wav_audio import WavAudioTrack

# A parent may have SIGTERM and SIGINT blocked (a Swift test binary's children inherit its
# threads' mask), and a blocked signal never reaches the handlers that make this leave cleanly.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 401: "Unauthorized",
           404: "Not Found", 405: "Method Not Allowed", 411: "Length Required", 413: "Content Too Large",
           415: "Unsupported Media Type", 500: "Internal Server Error"}
MAX_BODY = 1 << 20


class Response:
    def __init__(self, status: int, body: bytes | str = b"", headers: list[tuple[str, str]] | None = None,
                 detail: str = ""):
        self.status = status
        self.body = body.encode() if isinstance(body, str) else body
        self.headers = headers or []
        self.detail = detail


def text(status: int, message: str, headers=None) -> Response:
    return Response(status, message + "\n", [("Content-Type", "text/plain")] + (headers or []), message)


class WHEPServer:
    def __init__(self, streams: dict[str, str], token: str | None, ice_servers: list[str]):
        self.streams = streams
        self.token = token
        self.ice_servers = ice_servers
        self.sessions: dict[str, tuple[str, RTCPeerConnection]] = {}

    def links(self) -> list[tuple[str, str]]:
        return [("Link", f'<{url}>; rel="ice-server"') for url in self.ice_servers]

    async def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Response:
        parts = path.split("?", 1)[0].strip("/").split("/")
        if len(parts) not in (2, 3) or parts[0] != "whep":
            return text(404, f"no such resource {path}: streams are at /whep/NAME")
        if self.token is not None and headers.get("authorization") != f"Bearer {self.token}":
            return text(401, "missing or wrong bearer token", [("WWW-Authenticate", 'Bearer realm="whep"')])
        name = parts[1]
        if name not in self.streams:
            return text(404, f"no stream {name!r}; streams: {', '.join(sorted(self.streams))}")
        if len(parts) == 2:
            if method == "POST":
                return await self.offer(name, headers, body)
            if method == "OPTIONS":
                return Response(204, b"", [("Accept-Post", "application/sdp")] + self.links())
            return text(405, f"{method} not allowed on an endpoint", [("Allow", "POST, OPTIONS")])
        session = parts[2]
        if session not in self.sessions or self.sessions[session][0] != name:
            return text(404, f"no session {session} of stream {name}")
        if method == "DELETE":
            _, pc = self.sessions.pop(session)
            await pc.close()
            return Response(200, b"", detail=f"session {session} closed")
        if method == "PATCH":
            return text(405, "trickle ICE is not supported: send every candidate in the offer",
                        [("Allow", "DELETE")])
        return text(405, f"{method} not allowed on a session", [("Allow", "DELETE, PATCH")])

    async def offer(self, name: str, headers: dict[str, str], body: bytes) -> Response:
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/sdp":
            return text(415, f"Content-Type is {content_type or 'missing'}: send the offer as application/sdp")
        try:
            sdp = body.decode("utf-8")
        except UnicodeDecodeError:
            return text(400, "the offer is not UTF-8 text")
        if not sdp.startswith("v=0") or "\nm=" not in sdp:
            return text(400, "the body is not an SDP offer (no v=0 line or no m= line)")
        pc = RTCPeerConnection(loopback.configuration())
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="offer"))
            audio = next((t for t in pc.getTransceivers() if t.kind == "audio"), None)
            if audio is None:
                await pc.close()
                return text(400, "the offer has no audio m-line")
            audio.direction = "sendonly"
            audio.sender.replaceTrack(WavAudioTrack(self.streams[name]))
            await pc.setLocalDescription(await pc.createAnswer())
        except Exception as error:  # noqa: BLE001 - whatever aiortc rejects is the client's bad offer
            await pc.close()
            return text(400, f"cannot answer the offer: {error}".replace("\n", " "))
        answer = pc.localDescription.sdp
        if "a=sendonly" not in answer:
            await pc.close()
            return text(400, "the offer's audio cannot receive (it must be recvonly or sendrecv) or has no Opus")
        session = uuid.uuid4().hex
        self.sessions[session] = (name, pc)

        @pc.on("connectionstatechange")
        async def on_state():
            print(f"whep: session {session} {pc.connectionState}", file=sys.stderr, flush=True)
            if pc.connectionState == "failed":
                await pc.close()

        headers = [("Content-Type", "application/sdp"), ("Location", f"/whep/{name}/{session}"),
                   ("ETag", f'"{session}"')] + self.links()
        return Response(201, answer, headers, f"session {session}")

    async def close(self):
        for _, pc in self.sessions.values():
            await pc.close()
        self.sessions.clear()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        """HTTP/1.1 with keep-alive, one request at a time (Content-Length bodies only)."""
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                try:
                    method, path, version = line.decode("latin-1").split()
                except ValueError:
                    return await self.send(writer, "?", "?", text(400, "malformed request line"), close=True)
                headers = {}
                while True:
                    header = await reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    key, _, value = header.decode("latin-1").partition(":")
                    headers[key.strip().lower()] = value.strip()
                length = headers.get("content-length")
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    return await self.send(writer, method, path, text(411, "send a Content-Length"), close=True)
                if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
                    return await self.send(writer, method, path, text(413, "body too large"), close=True)
                body = await reader.readexactly(int(length)) if length else b""
                try:
                    response = await self.handle(method, path, headers, body)
                except Exception as error:  # noqa: BLE001 - the log says what broke
                    response = text(500, f"internal error: {error}")
                close = headers.get("connection", "").lower() == "close" or version == "HTTP/1.0"
                await self.send(writer, method, path, response, close)
                if close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    async def send(self, writer, method: str, path: str, response: Response, close: bool):
        head = [f"HTTP/1.1 {response.status} {REASONS.get(response.status, '')}",
                f"Content-Length: {len(response.body)}"]
        head += [f"{key}: {value}" for key, value in response.headers]
        if close:
            head.append("Connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)
        await writer.drain()
        detail = f" {response.detail}" if response.detail else ""
        print(f"whep: {method} {path} -> {response.status}{detail}", file=sys.stderr, flush=True)


def parse_arguments():
    parser = argparse.ArgumentParser(description="WHEP server: WAV files as Opus streams over WebRTC")
    parser.add_argument("--stream", action="append", default=[], metavar="NAME=WAV", required=True)
    parser.add_argument("--token", help="require Authorization: Bearer TOKEN")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ice-server", action="append", metavar="URL",
                        help='URL for a Link rel="ice-server" header (default stun:127.0.0.1:3478)')
    args = parser.parse_args()
    streams = {}
    for item in args.stream:
        name, sep, path = item.partition("=")
        if not sep or not name or "/" in name:
            parser.error(f"--stream {item!r}: give NAME=WAV (a name without '/')")
        if not os.path.isfile(path):
            parser.error(f"--stream {item!r}: no file {path}")
        WavAudioTrack(path)  # fails here, with what is wrong, on a file that is not a 16-bit WAV
        streams[name] = path
    args.streams = streams
    return args


async def main() -> int:
    args = parse_arguments()
    whep = WHEPServer(args.streams, args.token, args.ice_server or ["stun:127.0.0.1:3478"])
    server = await asyncio.start_server(whep.serve, "127.0.0.1", args.port)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    await whep.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except ValueError as error:
        print(f"whep_server: {error}", file=sys.stderr)
        sys.exit(2)
