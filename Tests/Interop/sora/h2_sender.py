#!/usr/bin/env python3
"""Sends a Sora audio-streaming body to roomtap the way Sora does: one HTTP/2 request (h2c, prior
knowledge) per connection, `POST /speech` with the sora-* headers, each frame (20-byte header +
Opus packet) sent when the wall clock reaches its timestamp (microseconds since the Unix epoch),
so the request streams live. PyPI `h2` does the HTTP/2 framing.

    h2_sender.py HOST:PORT CONNECTION_ID BODY_FILE

Prints `status=NNN` and then the response body; exits 0 when a response arrived, 1 otherwise.
A response that comes before the body is sent (an error) stops the sending. On stderr,
`early_lines=N`: the response lines that had arrived before the body's end was sent (results
streamed while the request streams).
"""
import select
import socket
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events


def frames(body):
    offset = 0
    while offset + 20 <= len(body):
        timestamp, _sequence, length = struct.unpack_from(">QQI", body, offset)
        end = offset + 20 + length
        yield timestamp, body[offset:end]
        offset = end
    if offset < len(body):  # a malformed tail is sent as it is, at once
        yield 0, body[offset:]


def main():
    address, connection_id, path = sys.argv[1], sys.argv[2], sys.argv[3]
    host, port = address.rsplit(":", 1)
    body = open(path, "rb").read()
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, [
        (":method", "POST"), (":path", "/speech"), (":scheme", "http"), (":authority", address),
        ("sora-channel-id", "sora-test"), ("sora-session-id", "session-" + connection_id),
        ("sora-connection-id", connection_id), ("sora-audio-streaming-language-code", "ja-JP"),
        ("content-type", "application/octet-stream"),
    ])
    sock.sendall(conn.data_to_send())
    state = {"status": None, "body": b"", "ended": False}

    def pump(timeout):
        readable, _, _ = select.select([sock], [], [], max(0.0, timeout))
        if not readable:
            return
        data = sock.recv(65536)
        if not data:
            state["ended"] = True
            return
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                state["status"] = dict(event.headers).get(":status")
            elif isinstance(event, h2.events.DataReceived):
                state["body"] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                state["ended"] = True
        out = conn.data_to_send()
        if out:
            sock.sendall(out)

    for timestamp, frame in frames(body):
        while time.time() < timestamp / 1e6 and not state["ended"]:
            pump(timestamp / 1e6 - time.time())
        pump(0)
        if state["ended"]:
            break
        sent = 0
        while sent < len(frame) and not state["ended"]:
            room = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
            if room <= 0:
                pump(1.0)
                continue
            chunk = frame[sent:sent + room]
            conn.send_data(stream, chunk)
            sock.sendall(conn.data_to_send())
            sent += len(chunk)
    early = state["body"].count(b"\n")
    print(f"early_lines={early}", file=sys.stderr)
    if not state["ended"]:
        conn.end_stream(stream)
        sock.sendall(conn.data_to_send())
    deadline = time.time() + 60
    while not state["ended"] and time.time() < deadline:
        pump(deadline - time.time())
    print(f"status={state['status']}")
    print(state["body"].decode("utf-8", "replace"), end="")
    sys.stdout.flush()
    sock.close()
    return 0 if state["status"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
