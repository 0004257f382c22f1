#!/usr/bin/env python3
"""A Sora stand-in for the tests of `roomtap record --join sora+ws://...`: Sora's WebSocket
signaling as Shiguredo's SDKs speak it (shared/sora-reference.md §1), with aiortc as the media
side, relaying real WebRTC publishers' audio to receive-only clients. Loopback only.

    .venv/bin/python Tests/Interop/webrtc/sora_standin.py [--channel ID ...] [--access-token T]
        [--ping-interval S] [--pong-timeout S] [--redirect] [--quiet]

It listens on two "nodes" of one cluster (two ports on 127.0.0.1) and prints
`listening <port> <second port>` on stdout. What it does, as strictly as Sora documents:
- The first message must be `connect`: `type`, `role` (sendonly | recvonly | sendrecv),
  `channel_id` (one of --channel, default any), `sdp` (an offer: starts with v=0), `sora_client`,
  `environment` (strings), `audio`, `video`; `metadata` equal to {"access_token": T} with
  --access-token; no `multistream` (obsolete), `data_channel_signaling` false if given (no
  DataChannel signaling here); `redirect: true` only after a redirect; no unknown member. A connect
  that breaks a rule is refused: the WebSocket closes with code 4000 and Sora-like reason text
  (e.g. `INVALID-CHANNEL-ID`), and stdout says `refused <REASON>`.
- With --redirect the first recvonly connect on the first node gets
  `{"type": "redirect", "location": "ws://127.0.0.1:<second>/signaling"}`; the connect there
  must say `redirect: true`.
- A sendonly connection gets an offer to receive its audio; a recvonly one an offer with one
  `m=audio` per publisher (msid = the publisher's connection_id) after a first inactive section
  (the BUNDLE's transport), all in one BUNDLE. Every join and leave of a publisher sends each
  recvonly connection a `re-offer` (a leaver's section with port 0) and expects a `re-answer`
  whose section for it has port 0 too. A recvonly answer has no candidates: they must come as
  `candidate` messages (trickle).
- `notify` `connection.created` / `connection.destroyed` to everyone (metadata: the joiner's
  `signaling_notify_metadata`; the joiner's own created carries `data`: who was there), one
  `push` and one message of an unknown type to each recvonly connection once it is up.
- `ping` every --ping-interval s (`stats: true` every other time); a client that does not `pong`
  within --pong-timeout s is dropped (close 4000 `PONG-TIMEOUT`, stdout `dropped <id> no-pong`).
- A client's `disconnect` is printed (`disconnect <id> <reason>`) and ends it.
- With --drop-after S the first recvonly client's WebSocket is closed (1011) S s after it is up
  (stdout `cut <id>`): a loss mid-room, which the client should recover from; with
  --refuse-after-cut every connect after it is refused (`CHANNEL-CLOSED`): a server that keeps
  refusing.
- With --break-media-after S the first recvonly client's PeerConnection is closed S s after it is
  up (stdout `broke <id>`; DTLS close_notify, then nothing), its WebSocket kept open: an ICE/DTLS
  failure mid-room, which the client should recover from by connecting again (with
  --refuse-after-cut every connect after it is refused).
- With --break-publisher-after S the first sendonly client's PeerConnection is closed S s after it
  is up (stdout `broke-publisher <id>`), its WebSocket kept open: the agent's publishing
  connection lost mid-room.
stdout, one line each: `connect <connection_id> <role> <client_id> <sora_client>`,
`redirect <location>`, `answer <id>`, `re-answer <id> <n>`, `candidates <id> <n> <typ of the last>`,
`pong <id> <stats entries>`, `up <id>` (its PeerConnection is connected), `gone <id>`.
stderr: every message in and out as `sora < {...}` / `sora > {...}` (--quiet: none), SDPs cut.
SIGTERM or SIGINT closes everything and exits 0.
"""

import argparse
import asyncio
import fractions
import json
import signal
import sys
import uuid

import av
import loopback
from aiortc import RTCBundlePolicy, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.contrib.media import MediaBlackhole
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from aiortc.sdp import candidate_from_sdp
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

CONNECT_KEYS = {"type", "role", "channel_id", "sdp", "sora_client", "environment", "audio", "video",
                "metadata", "signaling_notify_metadata", "client_id", "data_channel_signaling",
                "ignore_disconnect_websocket", "redirect", "bundle_id"}
ROLES = {"sendonly", "recvonly", "sendrecv"}


class Refused(Exception):
    pass


class OpusRelay:
    """Forwards a publisher's Opus packets unchanged, as an SFU does: a tap on aiortc's receiver
    (before it decodes) fans each payload and its RTP timestamp out to every subscribed track, whose
    sender packs it as it is (no second encode; aiortc sends av.Packets as they come)."""

    def __init__(self, receiver, payload_type: int):
        self.queues: list[asyncio.Queue] = []
        original = receiver._handle_rtp_packet

        async def tapped(packet, arrival_time_ms):
            if packet.payload_type == payload_type and packet.payload:
                for queue in self.queues:
                    if queue.qsize() < 500:
                        queue.put_nowait((packet.payload, packet.timestamp))
            await original(packet, arrival_time_ms=arrival_time_ms)

        receiver._handle_rtp_packet = tapped

    def subscribe(self) -> "RelayedOpusTrack":
        queue: asyncio.Queue = asyncio.Queue()
        self.queues.append(queue)
        return RelayedOpusTrack(queue)

    def end(self):
        for queue in self.queues:
            queue.put_nowait(None)


class RelayedOpusTrack(MediaStreamTrack):
    kind = "audio"

    def __init__(self, queue: asyncio.Queue):
        super().__init__()
        self.queue = queue
        self.first: int | None = None

    async def recv(self):
        item = await self.queue.get()
        if item is None:
            self.stop()
            raise MediaStreamError
        payload, timestamp = item
        if self.first is None:
            self.first = timestamp
        packet = av.Packet(payload)
        packet.pts = (timestamp - self.first) & 0xFFFFFFFF
        packet.time_base = fractions.Fraction(1, 48000)
        return packet


def out(line: str):
    print(line, flush=True)


class Client:
    """One signaling connection (and its PeerConnection)."""

    def __init__(self, standin, ws, connect: dict):
        self.standin = standin
        self.ws = ws
        self.connect = connect
        self.role = connect["role"]
        self.channel = connect["channel_id"]
        self.connection_id = uuid.uuid4().hex[:26].upper()
        self.client_id = connect.get("client_id") or self.connection_id
        self.notify_metadata = connect.get("signaling_notify_metadata")
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[], bundlePolicy=RTCBundlePolicy.MAX_BUNDLE))
        self.relay: OpusRelay | None = None  # a publisher's audio, forwarded
        self.up = asyncio.Event()
        self.gone = False
        self.pending_answer: asyncio.Future | None = None
        self.negotiation = asyncio.Lock()
        self.sections: dict[str, object] = {}  # recvonly: publisher connection_id -> transceiver
        self.dead_mids: set[str] = set()
        self.last_answer = ""
        self.pong = asyncio.Event()
        self.re_answers = 0
        self.candidates = 0
        self.media_broken = False

    async def send(self, message: dict):
        if self.gone:
            return
        self.standin.log(">", message)
        try:
            await self.ws.send(json.dumps(message))
        except ConnectionClosed:
            pass

    def entry(self) -> dict:
        item = {"role": self.role, "client_id": self.client_id, "connection_id": self.connection_id,
                "audio": True, "video": False}
        if self.notify_metadata is not None:
            item["metadata"] = self.notify_metadata
        return item

    # -- offers ---------------------------------------------------------------------------------

    def offer_sdp(self) -> str:
        """Our local offer with the sections of publishers who left put to port 0 (as Sora does)."""
        sdp = self.pc.localDescription.sdp
        if not self.dead_mids:
            return sdp
        sections = sdp.split("\r\nm=")
        for i in range(1, len(sections)):
            lines = sections[i].split("\r\n")
            mid = next((l[6:] for l in lines if l.startswith("a=mid:")), None)
            if mid in self.dead_mids:
                first = lines[0].split(" ")
                first[1] = "0"
                lines[0] = " ".join(first)
                lines = [l for l in lines if l not in ("a=sendonly", "a=sendrecv", "a=recvonly")] + ["a=inactive"]
                sections[i] = "\r\n".join(lines)
        return "\r\nm=".join(sections)

    def accept_answer_sdp(self, answer: str) -> str:
        """Checks the client rejected (port 0) every dead section; gives aiortc (which cannot take
        a rejected section back) the section of the last answer, inactive, in its place."""
        sections = answer.split("\r\nm=")
        previous = {}
        for section in self.last_answer.split("\r\nm=")[1:]:
            mid = next((l[6:] for l in section.split("\r\n") if l.startswith("a=mid:")), None)
            previous[mid] = section
        for i in range(1, len(sections)):
            lines = sections[i].split("\r\n")
            mid = next((l[6:] for l in lines if l.startswith("a=mid:")), None)
            port = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "?"
            if mid in self.dead_mids:
                if port != "0":
                    raise Refused(f"INVALID-ANSWER: mid {mid} left the channel but the answer has port {port}")
                if mid in previous:
                    kept = [l for l in previous[mid].split("\r\n") if l not in ("a=recvonly", "a=sendrecv", "a=sendonly")]
                    sections[i] = "\r\n".join([l for l in kept if l] + ["a=inactive"])
        self.last_answer = "\r\nm=".join(sections)
        return self.last_answer

    async def negotiate(self, kind: str):
        """Sends an offer (kind offer or re-offer) and waits for the answer."""
        async with self.negotiation:
            if self.gone:
                return
            await self.pc.setLocalDescription(await self.pc.createOffer())
            self.pending_answer = asyncio.get_running_loop().create_future()
            message = {"type": kind, "sdp": self.offer_sdp()}
            if kind == "offer":
                message.update({"client_id": self.client_id, "connection_id": self.connection_id,
                                "channel_id": self.channel, "session_id": self.standin.session_id,
                                "config": {"iceServers": self.standin.ice_servers,
                                           "iceTransportPolicy": self.standin.ice_transport_policy},
                                "mid": {"audio": "0"} if self.role != "recvonly" else {}})
            await self.send(message)
            try:
                sdp = await asyncio.wait_for(self.pending_answer, 20)
            except asyncio.TimeoutError:
                raise Refused(f"NO-ANSWER: no {'answer' if kind == 'offer' else 're-answer'} within 20 s")
            if self.role == "recvonly":
                if kind == "offer" and "a=candidate:" in sdp:
                    raise Refused("INVALID-ANSWER: a recvonly answer here must trickle its candidates")
                sdp = self.accept_answer_sdp(sdp)
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))

    async def add_publisher(self, publisher: "Client", renegotiate: bool):
        async with self.negotiation:
            if publisher.relay is None or publisher.connection_id in self.sections or self.gone:
                return
            transceiver = self.pc.addTransceiver(publisher.relay.subscribe(), direction="sendonly")
            transceiver.sender._stream_id = publisher.connection_id
            self.sections[publisher.connection_id] = transceiver
        if renegotiate:
            await self.negotiate("re-offer")

    async def remove_publisher(self, publisher: "Client"):
        transceiver = self.sections.pop(publisher.connection_id, None)
        if transceiver is None:
            return
        async with self.negotiation:
            transceiver.sender.replaceTrack(None)
            self.dead_mids.add(transceiver.mid)
        await self.negotiate("re-offer")

    # -- messages -------------------------------------------------------------------------------

    async def on_message(self, message: dict):
        kind = message.get("type")
        if kind in ("answer", "re-answer"):
            if not isinstance(message.get("sdp"), str) or self.pending_answer is None or self.pending_answer.done():
                raise Refused(f"UNEXPECTED-{kind.upper()}")
            if kind == "re-answer":
                self.re_answers += 1
                out(f"re-answer {self.connection_id} {self.re_answers}")
            else:
                out(f"answer {self.connection_id}")
            self.pending_answer.set_result(message["sdp"])
        elif kind == "candidate":
            candidate = message.get("candidate")
            if not isinstance(candidate, str) or not candidate.startswith("candidate:"):
                raise Refused("INVALID-CANDIDATE")
            parsed = candidate_from_sdp(candidate[len("candidate:"):])
            parsed.sdpMid = self.pc.getTransceivers()[0].mid
            await self.pc.addIceCandidate(parsed)
            self.candidates += 1
            out(f"candidates {self.connection_id} {self.candidates} {parsed.type}")
        elif kind == "pong":
            stats = message.get("stats")
            if stats is not None and not isinstance(stats, list):
                raise Refused("INVALID-PONG: stats must be a list")
            out(f"pong {self.connection_id} {len(stats) if stats is not None else '-'}")
            if stats:
                self.standin.log("<", {"stats": stats})
            self.pong.set()
        elif kind == "disconnect":
            out(f"disconnect {self.connection_id} {message.get('reason')}")
            raise ConnectionClosed(None, None)
        else:
            raise Refused(f"UNKNOWN-MESSAGE-TYPE: {kind}")

    async def pinger(self):
        n = 0
        while not self.gone:
            await asyncio.sleep(self.standin.ping_interval)
            n += 1
            self.pong.clear()
            await self.send({"type": "ping", "stats": n % 2 == 0})
            try:
                await asyncio.wait_for(self.pong.wait(), self.standin.pong_timeout)
            except asyncio.TimeoutError:
                out(f"dropped {self.connection_id} no-pong")
                await self.ws.close(4000, "PONG-TIMEOUT")
                return


class Standin:
    def __init__(self, args):
        self.channels = set(args.channel or [])
        self.access_token = args.access_token
        self.ping_interval = args.ping_interval
        self.pong_timeout = args.pong_timeout
        self.redirect = args.redirect
        self.drop_after = args.drop_after
        self.break_media_after = args.break_media_after
        self.break_publisher_after = args.break_publisher_after
        self.refuse_after_cut = args.refuse_after_cut
        self.refusing = False
        self.quiet = args.quiet
        credentials = {}
        if args.ice_credential:
            username, _, credential = args.ice_credential.partition(":")
            credentials = {"username": username, "credential": credential}
        self.ice_servers = [{"urls": [url], **credentials} for url in args.ice_server or []]
        self.ice_transport_policy = args.ice_transport_policy
        self.session_id = uuid.uuid4().hex[:26].upper()
        self.clients: list[Client] = []
        self.second_port = 0

    def log(self, direction: str, message: dict):
        if self.quiet:
            return
        shown = dict(message)
        if isinstance(shown.get("sdp"), str):
            shown["sdp"] = shown["sdp"][:60] + "..."
        print(f"sora {direction} {json.dumps(shown)}", file=sys.stderr, flush=True)

    def check(self, message: dict, node: int):
        if self.refusing:
            raise Refused("CHANNEL-CLOSED: this stand-in refuses every connect after the cut")
        if message.get("type") != "connect":
            raise Refused(f"INVALID-MESSAGE-TYPE: the first message must be connect, not {message.get('type')!r}")
        unknown = set(message) - CONNECT_KEYS
        if "multistream" in message:
            raise Refused("INVALID-MULTISTREAM: multistream is obsolete; omit it")
        if unknown:
            raise Refused(f"UNKNOWN-MEMBER: {', '.join(sorted(unknown))}")
        if message.get("role") not in ROLES:
            raise Refused(f"INVALID-ROLE: {message.get('role')!r}")
        channel = message.get("channel_id")
        if not isinstance(channel, str) or not channel:
            raise Refused("MISSING-CHANNEL-ID")
        if self.channels and channel not in self.channels:
            raise Refused(f"INVALID-CHANNEL-ID: no channel {channel}")
        sdp = message.get("sdp")
        if not isinstance(sdp, str) or not sdp.startswith("v=0"):
            raise Refused("INVALID-SDP: connect needs an offer in sdp")
        for key in ("sora_client", "environment"):
            if not isinstance(message.get(key), str) or not message[key]:
                raise Refused(f"MISSING-{key.upper().replace('_', '-')}")
        for key in ("audio", "video"):
            if key in message and not isinstance(message[key], (bool, dict)):
                raise Refused(f"INVALID-{key.upper()}")
        if message.get("data_channel_signaling") not in (None, False):
            raise Refused("UNSUPPORTED-DATA-CHANNEL-SIGNALING: this stand-in signals over the WebSocket only")
        if "redirect" in message and message["redirect"] is not True:
            raise Refused("INVALID-REDIRECT")
        if node == 1 and self.redirect and message["role"] == "recvonly" and message.get("redirect") is not True:
            raise Refused("MISSING-REDIRECT: a connect after a redirect says redirect: true")
        if self.access_token is not None and message.get("metadata") != {"access_token": self.access_token}:
            raise Refused("AUTH-WEBHOOK-REJECTED: invalid access_token")

    def peers(self, channel: str, role: str) -> list[Client]:
        return [c for c in self.clients if c.channel == channel and c.role == role and c.up.is_set() and not c.gone]

    async def notify_all(self, client: Client, event: str):
        for other in [c for c in self.clients if c.channel == client.channel and c.up.is_set() and not c.gone]:
            message = {"type": "notify", "event_type": event, **client.entry(),
                       "channel_connections": len(self.peers(client.channel, "sendonly")
                                                  + self.peers(client.channel, "recvonly"))}
            if other is client and event == "connection.created":
                message["data"] = [c.entry() for c in self.clients if c.channel == client.channel
                                   and c.up.is_set() and not c.gone and c is not client]
            await other.send(message)

    async def handle(self, ws, node: int):
        client = None
        tasks = []
        try:
            try:
                raw = await asyncio.wait_for(ws.recv(), 10)
                message = json.loads(raw)
                if not isinstance(message, dict):
                    raise Refused("INVALID-MESSAGE: not a JSON object")
            except (ValueError, asyncio.TimeoutError) as error:
                raise Refused(f"INVALID-MESSAGE: {error}")
            self.log("<", message)
            self.check(message, node)
            if node == 0 and self.redirect and message["role"] == "recvonly":
                self.redirect = False
                location = f"ws://127.0.0.1:{self.second_port}/signaling"
                out(f"redirect {location}")
                self.log(">", {"type": "redirect", "location": location})
                await ws.send(json.dumps({"type": "redirect", "location": location}))
                await ws.close(1000)
                return
            client = Client(self, ws, message)
            out(f"connect {client.connection_id} {client.role} {client.client_id} {message['sora_client']}")
            self.clients.append(client)
            await self.start(client, tasks)
            async for raw in ws:
                message = json.loads(raw)
                self.log("<", message)
                if not isinstance(message, dict):
                    raise Refused("INVALID-MESSAGE: not a JSON object")
                await client.on_message(message)
        except Refused as refusal:
            out(f"refused {refusal}")
            await ws.close(4000, str(refusal)[:120])
        except ConnectionClosed:
            pass
        finally:
            for task in tasks:
                task.cancel()
            if client is not None:
                await self.leave(client)

    async def start(self, client: Client, tasks: list):
        loop = asyncio.get_running_loop()

        @client.pc.on("connectionstatechange")
        async def on_state():
            if client.pc.connectionState == "connected" and not client.up.is_set():
                out(f"up {client.connection_id}")
                client.up.set()
                await self.notify_all(client, "connection.created")
                if client.role == "recvonly":
                    await client.send({"type": "push", "data": {"message": "hello from the stand-in"}})
                    await client.send({"type": "x-unknown-to-roomtap", "value": 1})
                else:
                    for subscriber in self.peers(client.channel, "recvonly"):
                        loop.create_task(self.safe(subscriber, subscriber.add_publisher(client, True)))
            elif client.pc.connectionState in ("failed", "closed") and not client.gone and not client.media_broken:
                await client.ws.close(4000, "PEER-CONNECTION-FAILED")

        @client.pc.on("track")
        def on_track(track):
            transceiver = next(t for t in client.pc.getTransceivers() if t.receiver.track is track)
            opus = next(c.payloadType for c in transceiver._codecs if c.mimeType.lower() == "audio/opus")
            client.relay = OpusRelay(transceiver.receiver, opus)
            sink = MediaBlackhole()  # what aiortc decodes is not used
            sink.addTrack(track)
            tasks.append(loop.create_task(sink.start()))

        if client.role == "recvonly":
            client.pc.addTransceiver("audio", direction="inactive")
            for publisher in self.peers(client.channel, "sendonly"):
                await client.add_publisher(publisher, False)
        else:
            client.pc.addTransceiver("audio", direction="recvonly")
        tasks.append(loop.create_task(self.safe(client, client.negotiate("offer"))))
        tasks.append(loop.create_task(client.pinger()))
        if client.role == "recvonly" and self.break_media_after is not None:
            seconds, self.break_media_after = self.break_media_after, None
            tasks.append(loop.create_task(self.break_media(client, seconds)))
        if client.role == "sendonly" and self.break_publisher_after is not None:
            seconds, self.break_publisher_after = self.break_publisher_after, None
            tasks.append(loop.create_task(self.break_publisher(client, seconds)))
        if client.role == "recvonly" and self.drop_after is not None:
            seconds, self.drop_after = self.drop_after, None
            tasks.append(loop.create_task(self.drop(client, seconds)))

    async def drop(self, client: Client, seconds: float):
        """--drop-after: the signaling of the first recvonly client is cut once (a lost WebSocket)."""
        await client.up.wait()
        await asyncio.sleep(seconds)
        out(f"cut {client.connection_id}")
        self.refusing = self.refuse_after_cut
        await client.ws.close(1011, "TEST-DROP")

    async def break_media(self, client: Client, seconds: float):
        """--break-media-after: the first recvonly client's PeerConnection is closed once (DTLS
        close_notify, then no ICE answers): a media path lost mid-room, its WebSocket left open."""
        await client.up.wait()
        await asyncio.sleep(seconds)
        out(f"broke {client.connection_id}")
        self.refusing = self.refuse_after_cut
        client.media_broken = True
        await client.pc.close()

    async def break_publisher(self, client: Client, seconds: float):
        """--break-publisher-after: the first sendonly client's PeerConnection is closed once."""
        await client.up.wait()
        await asyncio.sleep(seconds)
        out(f"broke-publisher {client.connection_id}")
        client.media_broken = True
        await client.pc.close()

    async def safe(self, client: Client, coroutine):
        try:
            await coroutine
        except Refused as refusal:
            out(f"refused {refusal}")
            await client.ws.close(4000, str(refusal)[:120])
        except ConnectionClosed:
            pass
        except Exception as error:  # noqa: BLE001 - a bug of the stand-in: said, and the client dropped
            out(f"error {client.connection_id} {type(error).__name__}: {error}")
            await client.ws.close(1011, "STANDIN-ERROR")

    async def leave(self, client: Client):
        if client.gone:
            return
        was_up = client.up.is_set()
        if was_up:
            await self.notify_all(client, "connection.destroyed")
        client.gone = True
        out(f"gone {client.connection_id}")
        if client in self.clients:
            self.clients.remove(client)
        if client.relay is not None:
            client.relay.end()
        if client.role != "recvonly" and was_up:
            for subscriber in self.peers(client.channel, "recvonly"):
                asyncio.get_running_loop().create_task(self.safe(subscriber, subscriber.remove_publisher(client)))
        if client.pending_answer is not None and not client.pending_answer.done():
            client.pending_answer.cancel()
        await client.pc.close()


def parse_arguments():
    parser = argparse.ArgumentParser(description="Sora stand-in: Sora's WebSocket signaling over aiortc")
    parser.add_argument("--channel", action="append", help="a channel that exists (default: any)")
    parser.add_argument("--access-token", help="require metadata {\"access_token\": T}")
    parser.add_argument("--ping-interval", type=float, default=5)
    parser.add_argument("--pong-timeout", type=float, default=4)
    parser.add_argument("--redirect", action="store_true", help="redirect the first recvonly connect")
    parser.add_argument("--ice-server", action="append", help="a URL for the offer's config.iceServers")
    parser.add_argument("--ice-credential", help="USER:PASS: the username and credential of every --ice-server")
    parser.add_argument("--ice-transport-policy", default="all", choices=["all", "relay"],
                        help="the offer's config.iceTransportPolicy")
    parser.add_argument("--drop-after", type=float, help="cut the first recvonly client's WebSocket S s after it is up")
    parser.add_argument("--break-media-after", type=float,
                        help="close the first recvonly client's PeerConnection S s after it is up (WebSocket kept)")
    parser.add_argument("--break-publisher-after", type=float,
                        help="close the first sendonly client's PeerConnection S s after it is up (WebSocket kept)")
    parser.add_argument("--refuse-after-cut", action="store_true", help="after --drop-after's cut (or --break-media-after's break), refuse every connect")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args()


async def main() -> int:
    args = parse_arguments()
    standin = Standin(args)
    first = await serve(lambda ws: standin.handle(ws, 0), "127.0.0.1", 0, max_size=1 << 20)
    second = await serve(lambda ws: standin.handle(ws, 1), "127.0.0.1", 0, max_size=1 << 20)
    standin.second_port = second.sockets[0].getsockname()[1] if hasattr(second, "sockets") else 0
    ports = [list(server.sockets)[0].getsockname()[1] for server in (first, second)]
    standin.second_port = ports[1]
    out(f"listening {ports[0]} {ports[1]}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for server in (first, second):
        server.close()
    for client in list(standin.clients):
        await client.pc.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
