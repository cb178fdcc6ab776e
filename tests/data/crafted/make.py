#!/usr/bin/env python3
"""Writes the crafted-input corpus in this folder (checked in; rerun to regenerate).

Each file is something a hostile or broken source could hand Dictum. The tests
(`crates/dictum-engine/tests/crafted.rs`) run every file through the real reader or check and
require a clear error, at once, within 512 MB of address space. Issue 12 describes the cases.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def wav(rate, channels, data_bytes, payload, bits=16, fmt=1, block=None, byte_rate=None):
    block = channels * bits // 8 if block is None else block
    byte_rate = (rate * block) & 0xFFFFFFFF if byte_rate is None else byte_rate
    fmt_chunk = struct.pack("<HHIIHH", fmt, channels, rate, byte_rate, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt_chunk
    body += b"data" + struct.pack("<I", data_bytes) + payload
    return b"RIFF" + struct.pack("<I", min(len(body), 0xFFFFFFFF)) + body


def noise(n):
    # Quiet, deterministic "noise" (no speech).
    return bytes((i * 37 + (i >> 3)) % 7 for i in range(n))


# The case, scaled to 20 kB: 1 Hz, so 10 000 samples are 2.8 hours of audio
# (the 200 kB original took 141 s and 12.8 GB to answer "no speech").
put("wav-rate-1hz.wav", wav(1, 1, 20_000, noise(20_000)))
# A rate near the top of u32 (the resampler would plan a multi-billion-point FFT).
put("wav-rate-2ghz.wav", wav(2_000_000_000, 1, 2_000, noise(2_000)))
# Claims ~4 GB of samples, holds 100 bytes (a decoder trusting the header preallocates 16 GB).
put("wav-size-lie.wav", wav(16_000, 1, 0xFFFFFFBE, noise(100)))
# Zero channels.
put("wav-zero-channels.wav", wav(16_000, 0, 2_000, noise(2_000), block=0, byte_rate=0))
# 64-bit integer samples (not a format WAV readers support).
put("wav-64-bit.wav", wav(16_000, 1, 800, noise(800), bits=64))
# Header only, no data chunk.
put("wav-header-only.wav", wav(16_000, 1, 2_000, b"")[:36])


def ggml_header(words=1):
    magic = struct.pack("<I", 0x67676D6C)
    # n_vocab, audio ctx/state/head/layer, text ctx/state/head/layer, n_mels, ftype (tiny.en)
    hp = struct.pack("<11i", 51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1)
    mel = struct.pack("<ii", 0, 0)
    vocab = struct.pack("<i", words) + struct.pack("<i", 0) * words
    return magic + hp + mel + vocab


def tensor(dims, ttype=0, name=b"abcd", data=b""):
    rec = struct.pack("<iii", len(dims), len(name), ttype)
    rec += b"".join(struct.pack("<i", d) for d in dims) + name
    return rec + data


# 96 bytes that made the structure walk loop forever: the 4 dimensions multiply to
# 8 * (2^60 - 1), so the f32 data size (x 4 bytes) wraps to 2^64 - 32 and the old walk
# "skipped" 32 bytes backwards, onto the same tensor record, for ever.
dims = [2 * 2 * 2 * 3 * 3 * 5 * 5, 7 * 11 * 13 * 31, 41 * 61 * 151, 331 * 1321]
assert len(dims) == 4 and all(0 < d < 2**31 for d in dims)
product = 1
for d in dims:
    product *= d
assert product == 8 * (2**60 - 1) and (product * 4) % 2**64 == 2**64 - 32
loop = ggml_header() + tensor(dims)
assert len(loop) == 96, len(loop)
put("model-seek-loop.bin", loop)
# Dimensions whose product overflows 64 bits.
put("model-elements-overflow.bin", ggml_header() + tensor([2**31 - 1] * 4))
# Thousands of valid empty-named 1-element tensors: more than any whisper model has.
put("model-tensor-flood.bin", ggml_header() + tensor([1], name=b"t", data=b"\0\0\0\0") * 3000)
# A negative dimension.
put("model-negative-dim.bin", ggml_header() + tensor([-5, 3]))
# A vocabulary that claims 200 000 words and holds none.
put("model-vocab-lie.bin", ggml_header(words=0)[:-4] + struct.pack("<i", 200_000))
# A mel filter bank larger than the file.
put("model-mel-lie.bin", ggml_header()[:48] + struct.pack("<ii", 1024, 4096))

# Config values issue 12 found accepted (each must now be refused, naming its key).
put("config-max-utterance-4e9.toml", b"[dictation]\nmax_utterance_s = 4000000000\n")
put("config-keep-alive-inf.toml", b'[llm]\nkeep_alive = "inf"\n')
put("config-threads-huge.toml", b"[stt]\nthreads = 4000000000\n")
put("config-audio-ctx-huge.toml", b"[stt]\naudio_ctx_min = 4000000000\n")
put("config-timeout-huge.toml", b"[llm]\ntimeout_ms = 18446744073709551615\n")
put("config-nan-threshold.toml", b"[vad]\nthreshold = nan\n")

# A size lie that stays under the 4 h cap: 384 kHz, 8 channels of 32-bit float, ~4 GB
# declared (349 s), 64 bytes present. A reader sizing its buffer from the header asks for
# 4.3 GB at once.
put("wav-size-lie-within-cap.wav", wav(384_000, 8, 0xFFFFFFE0, noise(64), bits=32, fmt=3))

# Valid but hostile samples (the "ok-" prefix: must decode, to finite samples in [-1, 1]):
# 32-bit float with NaN, infinities and 1e38. One NaN used to panic inside the resampler's
# FFT, killing `dictum transcribe` and leaving its history row pending.
floats = [0.0] * 4000
floats[100], floats[200], floats[300], floats[400] = float("nan"), float("inf"), float("-inf"), 1e38
payload = b"".join(struct.pack("<f", v) for v in floats)
put("ok-wav-float-nan-inf.wav", wav(44_100, 1, len(payload), payload, bits=32, fmt=3))
