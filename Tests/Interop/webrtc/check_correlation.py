#!/usr/bin/env python3
"""Compares a recorded WAV with its source: finds the lag at which the recording best matches
the source and prints `correlation C lag L samples (M ms)`; exit 0 when C >= --min (0.95).

    python3 Tests/Interop/webrtc/check_correlation.py SOURCE.wav RECORDED.wav [--min 0.95]

Both 16-bit PCM; the first channel of each; the recording at the source's rate. The correlation
is Pearson's over the source's whole length against the recording from the lag on (a recording
that misses part of the source scores low). numpy when importable, else plain Python (slower).
"""

import argparse
import math
import sys
import wave


def read(path):
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            sys.exit(f"{path}: not 16-bit PCM")
        frames = w.readframes(w.getnframes())
        channels = w.getnchannels()
        import array
        samples = array.array("h", frames)
        return list(samples[0::channels]), w.getframerate()


def pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    return sab / math.sqrt(saa * sbb) if saa > 0 and sbb > 0 else 0.0


def best_lag_numpy(source, recorded):
    import numpy as np
    s = np.asarray(source, dtype=np.float64)
    r = np.asarray(recorded, dtype=np.float64)
    size = 1 << (len(s) + len(r)).bit_length()
    spectrum = np.fft.rfft(r, size) * np.conj(np.fft.rfft(s, size))
    cross = np.fft.irfft(spectrum, size)[: len(r) - len(s) + 1]
    lag = int(np.argmax(cross))
    window = r[lag : lag + len(s)]
    return lag, float(np.corrcoef(s, window)[0, 1])


def best_lag_plain(source, recorded):
    """The lag on 1 ms envelopes (mean |x| of 48-sample blocks), then to the sample within ±1 ms
    on the source's loudest second; the correlation over the whole source at that lag."""
    block = 48

    def envelope(x):
        return [sum(abs(v) for v in x[i : i + block]) / block for i in range(0, len(x) - block + 1, block)]

    se, re_ = envelope(source), envelope(recorded)
    coarse = max((pearson(se, re_[lag : lag + len(se)]), lag) for lag in range(len(re_) - len(se) + 1))[1] * block
    second = min(48000, len(source))
    loud = max(range(0, len(source) - second + 1, 4800), key=lambda i: sum(abs(v) for v in source[i : i + second : 16]))
    window = source[loud : loud + second]
    lo, hi = max(0, coarse - block), min(len(recorded) - len(source), coarse + block)
    lag = max((pearson(window, recorded[lag + loud : lag + loud + second]), lag) for lag in range(lo, hi + 1))[1]
    return lag, pearson(source, recorded[lag : lag + len(source)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("recorded")
    parser.add_argument("--min", type=float, default=0.95)
    args = parser.parse_args()
    source, source_rate = read(args.source)
    recorded, recorded_rate = read(args.recorded)
    if source_rate != recorded_rate:
        sys.exit(f"rates differ: source {source_rate} Hz, recording {recorded_rate} Hz")
    if len(recorded) < len(source):
        print(f"correlation 0 (the recording has {len(recorded)} samples, the source {len(source)})")
        return 1
    try:
        lag, c = best_lag_numpy(source, recorded)
    except ImportError:
        lag, c = best_lag_plain(source, recorded)
    print(f"correlation {c:.4f} lag {lag} samples ({1000 * lag / source_rate:.1f} ms)")
    return 0 if c >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
