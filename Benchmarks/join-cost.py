"""What joining a room over WebRTC costs, against the same room rtp_forwarded (issue 24's report).

One Janus VideoRoom (Tests/Interop/webrtc/janus_loopback.sh) with N aiortc publishers sending the
sample room's speech, then three recorders of the same length, one after the other, each under
/usr/bin/time (user + system CPU seconds, peak RSS):

- idle:    `record --listen` on N ports that nothing sends to (the recorder's own floor);
- forward: `record --listen` on N ports, Janus `rtp_forward`ing each publisher's audio to one;
- join:    `record --join janus+http://...` (ICE, DTLS-SRTP, one subscription per publisher).

Per track: (forward - idle) / N and (join - idle) / N CPU seconds per room second; the WebRTC
stack's memory per track: (join RSS - forward RSS) / N; set-up time per publisher: room.json's
join report (`setUpMs`, from the subscription request to the first media). The publishers' own
CPU (Python) is not counted: they run in other processes.

    .venv/bin/python Benchmarks/join-cost.py [--publishers 4] [--seconds 20]
        [--roomtap .build/release/roomtap]

Run from the project root after `swift build -c release --product roomtap` (`make bench` does).
"""

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(ROOT, "Tests", "Interop", "webrtc")
sys.path.insert(0, PEERS)

from janus_http import JanusSession  # noqa: E402

ROOM = 1234


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def speech_wavs(work: str, count: int) -> list[str]:
    """The sample room's speakers as 48 kHz mono WAVs, reused round-robin for `count` publishers."""
    sources = ["alice", "bob", "carol"]
    paths = []
    for name in sources:
        path = os.path.join(work, f"{name}.wav")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i",
                        os.path.join(ROOT, "Samples", "room", f"{name}.opus"), "-ar", "48000", "-ac", "1",
                        path], check=True)
        paths.append(path)
    return [paths[i % len(paths)] for i in range(count)]


def timed(command: list[str], work: str, name: str) -> dict:
    """Runs `command` under /usr/bin/time: CPU seconds (user + system) and peak RSS in MiB."""
    measured = os.path.join(work, f"{name}.time")
    result = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", measured] + command,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{name}: roomtap exited {result.returncode}: {result.stderr.strip()}")
    user, system, rss_kib = open(measured).read().split()[-3:]
    return {"cpu": float(user) + float(system), "rssMiB": int(rss_kib) / 1024}


async def forward(janus_url: str, feeds: list[int], ports: list[int]) -> None:
    """Asks Janus to rtp_forward each publisher's audio to one of `ports`."""
    janus = JanusSession(janus_url, quiet=True)
    await janus.create()
    handle = await janus.attach("janus.plugin.videoroom")
    for feed, port in zip(feeds, ports):
        answer, _ = await janus.request(handle, {"request": "rtp_forward", "room": ROOM, "publisher_id": feed,
                                                 "host": "127.0.0.1", "audio_port": port})
        if answer.get("videoroom") != "rtp_forward":
            raise SystemExit(f"rtp_forward {feed}: {answer}")
    await janus.detach(handle)
    await janus.destroy()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--publishers", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--roomtap", default=os.path.join(ROOT, ".build", "release", "roomtap"))
    args = parser.parse_args()
    n, seconds = args.publishers, args.seconds
    work = tempfile.mkdtemp(prefix="roomtap-join-cost-")
    env = dict(os.environ, JANUS_DEBUG_LEVEL="2")
    janus = subprocess.Popen(["bash", os.path.join(PEERS, "janus_loopback.sh"), str(ROOM)], stdout=subprocess.PIPE,
                             text=True, env=env)
    publishers = []
    try:
        line = janus.stdout.readline().split()
        if len(line) < 2 or line[0] != "janus":
            raise SystemExit("Janus did not start (Tests/Interop/webrtc/janus_loopback.sh)")
        janus_url = line[1]
        python = os.path.join(ROOT, ".venv", "bin", "python")
        feeds = []
        for index, wav in enumerate(speech_wavs(work, n)):
            publisher = subprocess.Popen(
                [python, os.path.join(PEERS, "janus_publisher.py"), "--janus", janus_url, "--room", str(ROOM),
                 "--display", f"speaker{index + 1}", "--wav", wav, "--seconds", str(4 * seconds + 60), "--quiet"],
                stdout=subprocess.PIPE, text=True)
            publishers.append(publisher)
            words = publisher.stdout.readline().split()
            if len(words) != 2 or words[0] != "published":
                raise SystemExit(f"publisher {index + 1} did not publish")
            feeds.append(int(words[1]))

        def listen_run(name: str, ports: list[int]) -> list[str]:
            listens = [a for port in ports for a in ("--listen", f"127.0.0.1:{port}")]
            return [args.roomtap, "record"] + listens + ["--duration", str(seconds), "--out",
                                                         os.path.join(work, name), "--quiet"]

        idle = timed(listen_run("idle", [free_udp_port() for _ in range(n)]), work, "idle")
        ports = [free_udp_port() for _ in range(n)]
        recorder = subprocess.Popen(["/usr/bin/time", "-f", "%U %S %M", "-o", os.path.join(work, "forward.time")]
                                    + listen_run("forward", ports), stderr=subprocess.PIPE, text=True)
        asyncio.run(forward(janus_url, feeds, ports))
        if recorder.wait() != 0:
            raise SystemExit(f"forward: roomtap failed: {recorder.stderr.read().strip()}")
        user, system, rss_kib = open(os.path.join(work, "forward.time")).read().split()[-3:]
        forwarded = {"cpu": float(user) + float(system), "rssMiB": int(rss_kib) / 1024}
        joined = timed([args.roomtap, "record", "--join", f"janus+{janus_url}?room={ROOM}", "--ice-host", "127.0.0.1", "--duration",
                        str(seconds), "--out", os.path.join(work, "join"), "--quiet"], work, "join")
        room = json.load(open(os.path.join(work, "join", "room.json")))
        set_up = [ms for p in room.get("join", {}).get("publishers", []) for ms in p.get("setUpMs", [])]
        tracks_forward = len(json.load(open(os.path.join(work, "forward", "room.json")))["tracks"])
        per_track = lambda run: (run["cpu"] - idle["cpu"]) / n / seconds * 100  # noqa: E731
        print(f"{n} publishers, {seconds} s rooms (tracks: forward {tracks_forward}, "
              f"join {len(room['tracks'])})")
        for name, run in (("idle", idle), ("forward", forwarded), ("join", joined)):
            print(f"  {name:8s} CPU {run['cpu']:6.2f} s  peak RSS {run['rssMiB']:6.1f} MiB")
        print(f"  CPU per track: forward {per_track(forwarded):.2f} % of a core, join {per_track(joined):.2f} %"
              f" (join/forward {per_track(joined) / max(per_track(forwarded), 1e-9):.1f}x)")
        print(f"  WebRTC memory per track: {(joined['rssMiB'] - forwarded['rssMiB']) / n:.2f} MiB")
        if set_up:
            print(f"  set-up per publisher: min {min(set_up):.0f} ms, mean {sum(set_up) / len(set_up):.0f} ms,"
                  f" max {max(set_up):.0f} ms")
        return 0
    finally:
        for publisher in publishers:
            publisher.terminate()
        for publisher in publishers:
            try:
                publisher.wait(timeout=10)
            except subprocess.TimeoutExpired:
                publisher.kill()
        janus.terminate()
        janus.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
