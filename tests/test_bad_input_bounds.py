"""Compressed files that inflate far past their size, and Perfetto packets too large to hold.

The bombs are made here, small (kilobytes compressed, tens of MB inflated), against a lowered
bound; the load must stop with a ProfileError naming the file, the size and the option that
raises the bound, and its memory (tracemalloc's peak: Python bytes and NumPy arrays) must stay
near the bound, not follow what the file inflates to.
"""

from __future__ import annotations

import bz2
import lzma
import os
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from perfetto_traces import BEGIN, END, Builder

import neuron_widgets as nw

MB = 1 << 20
BOUND = 4 * MB
_COMPRESSORS: dict[str, Callable[[], object]] = {
    "gz": lambda: zlib.compressobj(6, zlib.DEFLATED, 31),
    "bz2": bz2.BZ2Compressor,
    "xz": lzma.LZMACompressor,
}
_HEADS = {"chrome": b'{"traceEvents": [', "legacy": b'{"trace_event": [', "runtime": b'{"data_version": 2, "events": ['}


def _compressed(parts: list[bytes], fmt: str, filler: bytes, filler_mb: int) -> bytes:
    """`parts[0]`, `filler_mb` MB of `filler`, then the rest of `parts`, compressed as they stream."""
    c = _COMPRESSORS[fmt]()
    out = [c.compress(parts[0])]  # type: ignore[attr-defined]
    block = filler * (MB // len(filler))
    out += [c.compress(block) for _ in range(filler_mb)]  # type: ignore[attr-defined]
    out += [c.compress(p) for p in parts[1:]]  # type: ignore[attr-defined]
    out.append(c.flush())  # type: ignore[attr-defined]
    return b"".join(out)


def _peak(run: Callable[[], object]) -> tuple[int, BaseException | None]:
    tracemalloc.start()
    try:
        run()
        err = None
    except BaseException as exc:
        err = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, err


@pytest.mark.parametrize("fmt", sorted(_COMPRESSORS))
@pytest.mark.parametrize("kind", sorted(_HEADS))
def test_json_bomb_stops_at_the_bound(tmp_path: Path, kind: str, fmt: str) -> None:
    path = tmp_path / f"bomb.json.{fmt}"
    path.write_bytes(_compressed([_HEADS[kind], b"]}"], fmt, b" ", 48))
    assert path.stat().st_size < 200_000
    peak, err = _peak(lambda: nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=BOUND))
    assert isinstance(err, nw.ProfileError), err
    msg = str(err)
    assert msg.startswith(str(path)) and f"inflate to more than {BOUND:,} bytes" in msg
    assert "max_inflated_bytes=" in msg and "NEURON_WIDGETS_MAX_INFLATED_BYTES" in msg
    # What was read, one piece being joined, and the decoder's own state (xz's dictionary is 8 MB):
    # nothing that grows with the 48 MB the file inflates to.
    assert peak < 2 * BOUND + 10 * MB, f"{peak / MB:.1f} MB held for a bound of {BOUND / MB:.0f} MB"


def test_json_under_the_bound_loads(tmp_path: Path) -> None:
    events = b",".join(b'{"ph": "X", "name": "a", "ts": %d, "dur": 1, "pid": 1, "tid": 1}' % i for i in range(2000))
    path = tmp_path / "ok.json.gz"
    path.write_bytes(_compressed([_HEADS["chrome"], events + b"]}"], "gz", b" ", 2))
    assert len(nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=BOUND)) == 2000
    with pytest.raises(nw.ProfileError, match="inflate to more than"):
        nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=MB)


def test_default_bound_follows_the_compressed_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neuron_widgets.readers.sniff import inflate_limit, packet_limit

    monkeypatch.delenv("NEURON_WIDGETS_MAX_INFLATED_BYTES", raising=False)
    small, big = tmp_path / "small.gz", tmp_path / "big.gz"
    small.write_bytes(b"x" * 1000)
    with open(big, "wb") as f:
        f.truncate(20 * MB)
    assert inflate_limit(small) == 256 * MB
    assert inflate_limit(big) == 100 * 20 * MB
    assert packet_limit() == 256 * MB
    monkeypatch.setenv("NEURON_WIDGETS_MAX_INFLATED_BYTES", "3G")
    assert inflate_limit(big) == 3 * 10**9 and packet_limit() == 3 * 10**9
    monkeypatch.setenv("NEURON_WIDGETS_MAX_INFLATED_BYTES", "512MiB")
    assert inflate_limit(small) == 512 * MB
    monkeypatch.setenv("NEURON_WIDGETS_MAX_INFLATED_BYTES", "lots")
    with pytest.raises(nw.ProfileError, match="NEURON_WIDGETS_MAX_INFLATED_BYTES='lots' is not a size"):
        inflate_limit(small)


def test_environment_variable_bounds_a_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(_compressed([_HEADS["chrome"], b"]}"], "gz", b"\n", 8))
    monkeypatch.setenv("NEURON_WIDGETS_MAX_INFLATED_BYTES", str(BOUND))
    with pytest.raises(nw.ProfileError, match=r"bomb\.json\.gz: its [0-9,]+ bytes inflate to more than 4,194,304 bytes"):
        nw.load_profile(path, cache=False, prepare=False)
    # The keyword wins over the variable.
    assert len(nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=16 * MB)) == 0


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4G"])
def test_max_inflated_bytes_must_be_a_positive_int(tmp_path: Path, bad: object) -> None:
    (tmp_path / "t.json").write_text('[{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]')
    with pytest.raises(ValueError, match="max_inflated_bytes must be a positive number"):
        nw.load_profile(tmp_path / "t.json", max_inflated_bytes=bad)  # type: ignore[arg-type]


def test_bound_reaches_each_input_of_a_folder(tmp_path: Path) -> None:
    (tmp_path / "b.json.gz").write_bytes(_compressed([_HEADS["chrome"], b"]}"], "gz", b" ", 8))
    with pytest.raises(nw.ProfileError, match=r"b\.json\.gz: its .* inflate to more than"):
        nw.load_profile(tmp_path, cache=False, prepare=False, max_inflated_bytes=BOUND)
    # Beside an input that reads, the bomb is left out and named.
    (tmp_path / "a.json").write_text('[{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]')
    p = nw.load_profile(tmp_path, cache=False, prepare=False, max_inflated_bytes=BOUND)
    assert len(p) == 1
    assert any("b.json.gz: its" in line and "inflate to more than" in line for line in p.warnings.lines())


def _trace_with_big_packet(pad: int) -> tuple[bytes, bytes]:
    """A small trace, and the bytes of one slice whose annotation is `pad` bytes long (to go between)."""
    b = Builder()
    b.named(10, "t")
    b.event(1, 100, BEGIN, 10, name="a")
    b.event(1, 200, END, 10)
    head = b.bytes()
    big = Builder()
    big.event(1, 300, BEGIN, 10, name="big", args={"pad": "x" * pad})
    return head, big.bytes()


@pytest.mark.parametrize("gz", [False, True])
def test_perfetto_packet_past_the_bound_is_refused(tmp_path: Path, gz: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from neuron_widgets.readers.perfetto import stream as perfetto_stream

    monkeypatch.setattr(perfetto_stream, "CHUNK_BYTES", MB)  # the packets span many chunks
    head, big = _trace_with_big_packet(12 * MB)
    data = head + big * 3
    path = tmp_path / ("t.pftrace.gz" if gz else "t.pftrace")
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    path.write_bytes(c.compress(data) + c.flush() if gz else data)
    packet = len(big) - 5  # less the packet's tag and length
    del data, big
    (tmp_path / "small.pftrace").write_bytes(head)
    nw.load_profile(tmp_path / "small.pftrace", cache=False, prepare=False)  # imports and compiled kernels: not measured
    peak, err = _peak(lambda: nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=BOUND))
    assert isinstance(err, nw.ProfileError), err
    assert str(err).startswith(str(path)) and f"holds a packet of {packet:,} bytes at byte {len(head) + 5:,}" in str(err)
    assert "past the bound on one packet (4,194,304 bytes)" in str(err) and "max_inflated_bytes=20000000" in str(err)
    assert peak < BOUND, f"{peak / MB:.1f} MB held"  # a chunk or two, never the 12 MB packet


def test_perfetto_packets_under_the_bound_load_across_chunks(tmp_path: Path) -> None:
    from neuron_widgets.readers.perfetto import stream as perfetto_stream

    head, big = _trace_with_big_packet(300_000)
    end = Builder()
    end.event(1, 400, END, 10)
    path = tmp_path / "t.pftrace"
    path.write_bytes(head + big + end.bytes())
    warnings = nw.errors.LoadWarnings()
    scan = perfetto_stream.scan(path, warnings, chunk_bytes=4096)  # the big packet spans many chunks
    assert scan.events.ts.tolist() == [100, 200, 300, 400] and not warnings


def test_perfetto_cut_short_inside_a_packet_past_the_bound(tmp_path: Path) -> None:
    head, big = _trace_with_big_packet(8 * MB)
    path = tmp_path / "t.pftrace"
    path.write_bytes(head + big[: len(big) // 2])
    p = nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=MB)
    assert list(p.events["name"]) == ["a"]
    assert any(f"cut short at byte {len(head):,} of {len(head) + len(big) // 2:,}" in k for k in p.warnings)


def test_perfetto_bytes_that_cannot_be_framed_are_not_carried(tmp_path: Path) -> None:
    head, _ = _trace_with_big_packet(0)
    path = tmp_path / "t.pftrace.gz"
    # Wire type 3 (a group, which Perfetto never writes) cannot be skipped: nothing after it is a packet.
    path.write_bytes(_compressed([head + b"\x0b"], "gz", b"\x00", 48))
    peak, err = _peak(lambda: nw.load_profile(path, cache=False, prepare=False))
    assert err is None, err
    assert peak < 40 * MB, f"{peak / MB:.1f} MB held"


def test_bomb_in_a_subprocess_keeps_resident_memory_bounded(tmp_path: Path) -> None:
    """RSS (Arrow's and the decompressors' memory too) of a load of a 640 MB gzip bomb, bound 64 MB:
    the high-water mark of the child's own memory (VmHWM: ru_maxrss would carry the parent's across
    exec) less its resident memory once the package is imported."""
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(_compressed([_HEADS["chrome"], b"]}"], "gz", b" ", 640))
    code = ("import re, neuron_widgets as nw\n"
            "def kb(key):\n"
            "    return int(re.search(key + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
            "base = kb('VmRSS')\n"
            "try:\n"
            f"    nw.load_profile({str(path)!r}, cache=False, prepare=False, max_inflated_bytes={64 * MB})\n"
            "except nw.ProfileError as e:\n"
            "    print('refused', e)\n"
            "print((kb('VmHWM') - base) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NEURON_WIDGETS_PROGRESS": "0"}, check=True).stdout.split("\n")
    assert out[0].startswith("refused ") and "inflate to more than 67,108,864 bytes" in out[0]
    assert int(out[-2]) < 200, f"peak RSS {out[-2]} MB over the import for a bound of 64 MB"


def test_cli_says_the_bound_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from neuron_widgets.cli import main

    path = tmp_path / "bomb.json.gz"
    path.write_bytes(_compressed([_HEADS["chrome"], b"]}"], "gz", b" ", 8))
    monkeypatch.setenv("NEURON_WIDGETS_MAX_INFLATED_BYTES", "4MiB")
    assert main(["info", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"neuron-widgets: {path}: its ") and "NEURON_WIDGETS_MAX_INFLATED_BYTES=" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("trailer", ["honest", "small", "huge", "two members"])
def test_gzip_size_in_the_trailer_is_only_a_hint(tmp_path: Path, trailer: str) -> None:
    import gzip

    events = b",".join(b'{"ph": "X", "name": "a", "ts": %d, "dur": 1, "pid": 1, "tid": 1}' % i for i in range(3000))
    doc = _HEADS["chrome"] + events + b"]}"
    data = gzip.compress(doc)
    if trailer == "small":
        data = data[:-4] + (100).to_bytes(4, "little")
    elif trailer == "huge":
        data = data[:-4] + (2**32 - 1).to_bytes(4, "little")
    elif trailer == "two members":
        half = len(doc) // 2
        data = gzip.compress(doc[:half]) + gzip.compress(doc[half:])
    path = tmp_path / "t.json.gz"
    path.write_bytes(data)
    if trailer in ("small", "huge"):  # a trailer that lies is damaged data, and said so
        with pytest.raises(nw.ProfileError, match=r"t\.json\.gz: the compressed data is damaged"):
            nw.load_profile(path, cache=False, prepare=False)
        return
    assert len(nw.load_profile(path, cache=False, prepare=False)) == 3000
    with pytest.raises(nw.ProfileError, match="inflate to more than"):
        nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=len(doc) - 1)
