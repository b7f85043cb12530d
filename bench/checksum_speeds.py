"""Single-thread speed of the digests a key cache could check its sections with, on 4 MiB chunks
of random bytes in memory (what one reader thread checks right after reading it): the cache's
word sums (numpy), zlib's crc32 and adler32, hashlib's sha256, sha1, md5 and blake2b, and a plain
copy of the same bytes for scale.

    python bench/checksum_speeds.py --json bench/results/DATE-keyload-checksum-speeds.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from cuzk_core.bench import environment
from cuzk_core.groth16.key_cache import READ_CHUNK, block_sums

TOTAL = 256 << 20


def speeds(runs: int) -> dict[str, float]:
    """GB/s of each digest (best of ``runs``)."""
    data = np.random.default_rng(1).integers(0, 2**63, TOTAL // 8, dtype=np.uint64).view(np.uint8)
    out = np.empty(READ_CHUNK, np.uint8)
    chunks = [data[o : o + READ_CHUNK] for o in range(0, TOTAL, READ_CHUNK)]
    digests: dict[str, Callable[[np.ndarray, int], object]] = {
        "cache word sums (numpy)": lambda c, i: block_sums(c, i * (READ_CHUNK >> 20)),
        "zlib.crc32": lambda c, i: zlib.crc32(c),
        "zlib.adler32": lambda c, i: zlib.adler32(c),
        "hashlib.sha256": lambda c, i: hashlib.sha256(c).digest(),
        "hashlib.sha1": lambda c, i: hashlib.sha1(c).digest(),
        "hashlib.md5": lambda c, i: hashlib.md5(c).digest(),
        "hashlib.blake2b": lambda c, i: hashlib.blake2b(c).digest(),
        "copy (np.copyto), for scale": lambda c, i: np.copyto(out, c),
    }
    result = {}
    for name, digest in digests.items():
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            for index, chunk in enumerate(chunks):
                digest(chunk, index)
            best = min(best, time.perf_counter() - start)
        result[name] = round(TOTAL / best / 1e9, 2)
        print(f"{name:30s} {result[name]:6.2f} GB/s")
    return result


def main() -> None:
    """Measure, print, and optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    measured = speeds(args.runs)
    if args.json:
        document = {
            "schema": "cuzk-checksum-speeds/1",
            **environment.capture(),
            "chunk_bytes": READ_CHUNK,
            "total_bytes": TOTAL,
            "gb_per_s_single_thread": measured,
            "zlib_runtime": zlib.ZLIB_RUNTIME_VERSION,
            "openssl": __import__("ssl").OPENSSL_VERSION,
        }
        args.json.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
