"""WAV files in and out of aiortc: a track that plays a WAV at real time, a recorder of a track.

Both use 16-bit PCM WAVs (any rate, mono or stereo in; mono 48 kHz out) through the standard
library's `wave`, and pyav's AudioFrame (which aiortc brings).
"""

import array
import asyncio
import fractions
import time
import wave

import av
from aiortc.mediastreams import AudioStreamTrack, MediaStreamError

FRAME_SECONDS = 0.020


class WavAudioTrack(AudioStreamTrack):
    """Plays a 16-bit WAV as 20 ms frames paced at real time (wall clock).

    The WAV's first sample is heard at `start_at` (seconds since the epoch) when given, else at
    the first frame asked for (when media starts flowing); before that, and after the file's end,
    the track sends silence. `finished` is set once the last sample of the file has been sent.
    """

    def __init__(self, path: str, start_at: float | None = None):
        super().__init__()
        try:
            with wave.open(path, "rb") as w:
                if w.getsampwidth() != 2:
                    raise ValueError(f"{path}: {8 * w.getsampwidth()}-bit samples; give a 16-bit PCM WAV")
                self.rate = w.getframerate()
                self.channels = w.getnchannels()
                if self.channels not in (1, 2):
                    raise ValueError(f"{path}: {self.channels} channels; give a mono or stereo WAV")
                self.pcm = w.readframes(w.getnframes())
        except (wave.Error, EOFError, OSError) as error:
            raise ValueError(f"{path}: not a readable 16-bit PCM WAV ({str(error) or 'the file ends early'})") from None
        self.bytes_per_frame = 2 * self.channels
        self.samples_per_frame = int(self.rate * FRAME_SECONDS)
        self.total_samples = len(self.pcm) // self.bytes_per_frame
        self.start_at = start_at
        self.first_due: float | None = None
        self.index = 0
        self.finished = asyncio.Event()

    async def recv(self):
        if self.readyState != "live":
            raise MediaStreamError
        now = time.time()
        if self.first_due is None:
            self.first_due = now
            if self.start_at is None:
                self.start_at = now
        due = self.first_due + self.index * FRAME_SECONDS
        if due > now:
            await asyncio.sleep(due - now)
        offset = round((due - self.start_at) * self.rate)
        chunk = bytearray(self.samples_per_frame * self.bytes_per_frame)
        begin, end = max(offset, 0), min(offset + self.samples_per_frame, self.total_samples)
        if begin < end:
            at = (begin - offset) * self.bytes_per_frame
            chunk[at : at + (end - begin) * self.bytes_per_frame] = self.pcm[
                begin * self.bytes_per_frame : end * self.bytes_per_frame
            ]
        if offset + self.samples_per_frame >= self.total_samples:
            self.finished.set()
        frame = av.AudioFrame(format="s16", layout="mono" if self.channels == 1 else "stereo",
                              samples=self.samples_per_frame)
        frame.planes[0].update(bytes(chunk))
        frame.sample_rate = self.rate
        frame.pts = self.index * self.samples_per_frame
        frame.time_base = fractions.Fraction(1, self.rate)
        self.index += 1
        return frame


class WavRecorder:
    """Writes what a received audio track decodes to a mono 48 kHz 16-bit WAV (the first channel);
    `samples` counts what was written. Sample 0 is wall-clock time `origin` when given (silence is
    written from then until the first frame arrives, so recordings of several tracks share one
    timeline), else the first frame. Stops at the track's end or at `stop()`, which closes the
    file (idempotent).
    """

    def __init__(self, track, path: str, origin: float | None = None):
        self.track = track
        self.path = path
        self.origin = origin
        self.samples = 0
        self.first_frame_at: float | None = None
        self.wav = wave.open(path, "wb")
        self.wav.setnchannels(1)
        self.wav.setsampwidth(2)
        self.wav.setframerate(48000)
        self.resampler = av.AudioResampler(format="s16", layout="stereo", rate=48000)
        self.task = asyncio.ensure_future(self._run())

    async def _run(self):
        try:
            while True:
                frame = await self.track.recv()
                if self.first_frame_at is None:
                    self.first_frame_at = time.time()
                    if self.origin is not None and self.first_frame_at > self.origin:
                        pad = round((self.first_frame_at - self.origin) * 48000)
                        self.wav.writeframes(bytes(2 * pad))
                        self.samples += pad
                for out in self.resampler.resample(frame):
                    interleaved = memoryview(bytes(out.planes[0])[: out.samples * 4]).cast("h")
                    self.wav.writeframes(array.array("h", interleaved[0::2]).tobytes())
                    self.samples += out.samples
        except (MediaStreamError, asyncio.CancelledError):
            pass

    async def stop(self):
        if not self.task.done():
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass
        if self.wav is not None:
            self.wav.close()
            self.wav = None
