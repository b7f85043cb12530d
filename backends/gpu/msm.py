"""Pippenger MSM on the GPU for G1 and G2: the host side of msm/pippenger.cuh.

Scalars go up as canonical words; their digits are counting-sorted by (window, bucket) (see
msm_sort); bucket sums come from a balanced first pass (equal runs of sorted entries per thread,
msm_sum_affine_*) and segmented passes over its partials (msm_sum_xyzz_*, msm_group_sums_*),
window sums from msm/reduce.cuh's chunked running sums, planes by bit and binary trees; the
prefix sums between steps are util/scan.cu's. After the sort has told the host how many entries
there are, every later step is launched without waiting on the device: buffers are sized by
bounds, not counts. The last few hundred doublings that combine the windows run here, in GMP's
integers when gmpy2 is installed (the GPU extras bring it; about twice as fast as Python's ints
at 381 bits): that is faster than one GPU thread doing them in sequence, and as host work a step
at a time (:func:`host_sum`) it can run beside the next MSM's device work. With ``split_01`` the
scalars equal to 1 skip Pippenger and are summed by the same bucket-sum passes as one group (the
batch addition of supraseal-c2's split MSM); zeros contribute no digits at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from cuzk_core.curve.g1 import G1_INFINITY, g1_add, g1_double
from cuzk_core.curve.g2 import G2_INFINITY, g2_add, g2_double
from cuzk_core.field.constants import FQ_MODULUS
from cuzk_core.field.tower import fq2_mul, fq2_sqr
from cuzk_core.host_work import Steps
from cuzk_core.layout import limbs_to_ints
from cuzk_core.timing import Timer

from . import scan
from .driver import NULL, DeviceArray, Gpu
from .msm_sort import (
    SortKey,
    SortShare,
    SortSlot,
    bucket_count,
    bucket_sets,
    counting_sort,
    window_count,
)
from .msm_sort import kernel as _kernel
from .msm_sort import u32 as _u32

try:
    from gmpy2 import mpz as _host_int
except ImportError:  # Python's ints, about half as fast for the windows' combination
    _host_int = int

MAX_ENTRIES = 1 << 31
"""Digit entries per pass are 32-bit offsets (with a sign bit in the entry): chunk above this."""
RANGE_WAVES = 1
"""Full waves of resident threads the first bucket-summing pass is cut into: its threads all do
the same work, so one wave of exactly the resident count leaves no tail."""
CHUNK_THREADS = 1 << 15
"""Threads the chunked running sums aim for (chunk length follows, up to MAX_CHUNK)."""
MAX_CHUNK = 64
"""The most buckets a thread of the chunked running sums adds: more buckets than CHUNK_THREADS
such chunks hold get more threads, so that the compute-bound sums fill the device (H200, 20-bit
windows at 2^24 points, 13·2^19 buckets: chunks of 256, half a wave in G1, took 11.4 ms, of 64
8.8; G2 34.0 → 27.8; round 21)."""
MIN_RANGE = 8
"""Fewest entries a thread of the first bucket-summing pass adds (small MSMs)."""
REDUCE_SEGMENT = 8
"""Segment length of the bucket sums' later, latency-bound passes (more passes, each with
shorter chains), and the most points a group may have left for the last pass's thread."""
BATCH_MIN_RUN = 16
"""Fewest entries a lane's run of the batch-affine first pass is cut to: a smaller pass gets
fewer lanes than the profile's msm.batch_lanes_g1/g2, as shorter runs end in more partials than
their shared inversion saves (H200, G2 2^21 points: 57.9 ms XYZZ, 49.7 at 64 lanes (runs of 16),
53.3 at 128 (8); bench/NOTES.md, round 20)."""
BATCH_MIN_LANES = {"g1": 96, "g2": 32}
"""Fewest lanes a thread's inversion is shared by for a group's batch-affine pass to be taken,
else the XYZZ pass sums the buckets: where the inversion (~85 Fq products) is still under ~1/6
of what the lanes' affine additions save over XYZZ ones, 6 products each in G1, ~18 in G2.
H200, runs of 16: G1 wins at 165 lanes (2^23 points, 68.5 → 65.0 ms), ties at 82 (2^22), loses
at 67 and 41; G2 wins at 62 (2^21, 58.2 → 51.4–54.5) and ties at 31 and 25 (2^20, and over a
20-bit table), where the XYZZ pass needs no lanes' scratch (bench/NOTES.md, round 20)."""


def batch_lanes_for(group: Group, entries: int, threads: int, most_lanes: int) -> int:
    """Lanes a thread of ``group``'s batch-affine pass over ``entries`` bucket entries carries
    when it runs ``threads`` threads: ``most_lanes`` (the profile's knob) or fewer, so runs keep
    BATCH_MIN_RUN entries; 0 (the XYZZ pass) below the group's BATCH_MIN_LANES."""
    lanes = min(most_lanes, entries // (max(1, threads) * BATCH_MIN_RUN))
    return lanes if lanes >= max(1, BATCH_MIN_LANES[group.name]) else 0


class Group(NamedTuple):
    """What differs between G1 and G2 on the host side."""

    name: str
    fq_per_coord: int
    infinity: Any
    add: Callable[[Any, Any], Any]
    double: Callable[[Any], Any]
    mul: Callable[[Any, Any], Any]
    sqr: Callable[[Any], Any]
    is_zero: Callable[[Any], bool]

    @property
    def affine_words(self) -> int:
        """32-bit words per affine point."""
        return 2 * 12 * self.fq_per_coord

    @property
    def xyzz_words(self) -> int:
        """32-bit words per XYZZ point."""
        return 4 * 12 * self.fq_per_coord


_Q = FQ_MODULUS
G1 = Group(
    "g1",
    1,
    G1_INFINITY,
    g1_add,
    g1_double,
    lambda a, b: a * b % _Q,
    lambda a: a * a % _Q,
    lambda a: a == 0,
)
G2 = Group(
    "g2",
    2,
    G2_INFINITY,
    g2_add,
    g2_double,
    fq2_mul,
    fq2_sqr,
    lambda a: a == (0, 0),
)
GROUPS = {"g1": G1, "g2": G2}


HOST_WORK_MIN_ENTRIES = 1 << 20
"""Bucket entries from which an MSM runs the thread's queued host work beside its bucket sums:
~0.5 ms of device work on the H200, so a step (0.3–0.7 ms) mostly fits."""

# The fewest points in one of an upload's pieces (``msm.upload_pieces``). Pieces merge their
# buckets (MergedPasses), yet smaller passes lose: under 3·2^22 points they take 16-bit
# windows, and by the lanes rule (BATCH_MIN_LANES) the XYZZ pass. G1 2^24 from page-locked
# memory on an H100: 143 ms in one piece, 150–151 in pieces of 2^22 or 2^21 (bench/NOTES.md,
# round 44).
MIN_UPLOAD_PIECE = 1 << 22


def auto_window_bits(group: Group, n: int, signed: bool) -> int:
    """Window bits by size, from the H200 sweeps (bench/NOTES.md): below 2^14 points the bucket
    reduction's fixed latency dominates and small windows win; then 15 bits below 2^19 points,
    16 below the group's WIDE_WINDOW_POINTS and WIDE_WINDOW_BITS from there. With the scatter
    in L2-sized launches, 16 bits beat 15 at 2^19 (9.8 against 11.3 ms) and 2^20 (13.2 against
    14.9 ms). Widths between lose: with signed digits 17 bits still take 16 windows, and 18
    and 19 bits leave a top window of 4 and 9 bits whose few buckets get most of its digits
    (G1 2^24 with the batch pass: 16 bits 115.9 ms, 18 124.5, 19 125.0; round 21). Unsigned
    digits use the same widths."""
    if n < 1 << 14:
        return max(6, n.bit_length() - 4)
    if n < 1 << 19:
        return 15
    return 16 if n < WIDE_WINDOW_POINTS[group.name] else WIDE_WINDOW_BITS


WIDE_WINDOW_BITS = 20
"""The window width of the largest passes: 13 windows' entries instead of 16 (the top one 16
bits wide), for 13·2^19 buckets to reduce instead of 2^19 (H200, 2^24 points, round 21: G1
119.5 → 114.5 ms, the buckets 103.5 → 88.9 and the reduction 1.7 → 8.9; G2 297.4 → 277.6)."""
WIDE_WINDOW_POINTS = {"g1": 3 << 22, "g2": 5 << 21}
"""Points a pass needs for WIDE_WINDOW_BITS, by group: at 2^23 16 bits still win by ~3 ms in
both, at 2^24 20 bits by ~5 in G1 and ~20 in G2 (round 21); the gain grows with the points, as
the reduction it adds does not, and G2's buckets gain more from fewer entries."""


def _segmented_sum(
    gpu: Gpu,
    group: Group,
    handed_over: list[DeviceArray],
    count: int,
    group_offsets: DeviceArray,
    groups: int,
    max_count: int,
) -> DeviceArray:
    """Σ per group of the XYZZ points in ``handed_over`` (its one array, taken out so that
    the first pass frees them: at most ``count`` points, groups as CSR offsets, at most
    ``max_count`` each); one XYZZ point per group, infinity when empty. While a group may hold
    more than REDUCE_SEGMENT points, passes of segments that long leave a partial each; then a
    thread a group adds what is left. Sized by bounds, so nothing waits."""
    points = handed_over.pop()
    while max_count > REDUCE_SEGMENT:
        # Σ_g ⌈c_g / s⌉ < count / s + groups.
        bound = count // REDUCE_SEGMENT + groups
        seg_offsets = gpu.empty((groups + 1,), np.uint32)
        gpu.clear(seg_offsets[:1])
        counts = _kernel(gpu, "msm_segment_counts")
        args = (group_offsets, _u32(groups), _u32(REDUCE_SEGMENT), seg_offsets[1:])
        gpu.launch(counts, groups, args)
        scan.inclusive_sum(gpu, seg_offsets[1:], seg_offsets[1:])
        partials = gpu.empty((bound, group.xyzz_words), np.uint32)
        args = (points, group_offsets, seg_offsets, _u32(groups), _u32(REDUCE_SEGMENT), partials)
        gpu.launch(_kernel(gpu, f"msm_sum_xyzz_{group.name}"), bound, args, block=128)
        points, count, group_offsets = partials, bound, seg_offsets
        max_count = -(-max_count // REDUCE_SEGMENT)
    out = gpu.empty((groups, group.xyzz_words), np.uint32)
    args = (points, group_offsets, _u32(groups), out)
    gpu.launch(_kernel(gpu, f"msm_group_sums_{group.name}"), groups, args, block=128)
    return out


def _pair_sums(gpu: Gpu, group: Group, points: DeviceArray, groups: int, size: int) -> DeviceArray:
    """Σ of each group's ``size`` consecutive XYZZ ``points`` by a binary tree of passes (one
    addition's latency each): one point per group."""
    pair_sums = _kernel(gpu, f"msm_pair_sums_{group.name}")
    while size > 1:
        half = -(-size // 2)
        out = gpu.empty((groups * half, group.xyzz_words), np.uint32)
        gpu.launch(pair_sums, groups * half, (points, _u32(groups), _u32(size), out), block=128)
        points, size = out, half
    return points


def _range_threads(gpu: Gpu, group: Group) -> int:
    """Threads the first bucket-summing pass is cut into: RANGE_WAVES full waves."""
    return RANGE_WAVES * gpu.resident_threads(_kernel(gpu, f"msm_sum_affine_{group.name}"), 128)


def _batch_threads(gpu: Gpu, group: Group, batch_lanes: int) -> int:
    """Threads of the batch-affine pass (one wave of 128-thread blocks); 0 with no lanes."""
    if not batch_lanes:
        return 0
    return gpu.resident_threads(_kernel(gpu, f"msm_sum_batch_affine_{group.name}"), 128)


def _bucket_sums(
    gpu: Gpu,
    group: Group,
    bases: DeviceArray,
    entries: DeviceArray,
    offsets: DeviceArray,
    groups: int,
    total: int,
    max_count: int,
    overlap_host_work: bool = False,
    batch_lanes: int = 0,
) -> DeviceArray:
    """Σ per group of the affine ``bases`` that ``entries`` (index | sign bit) pick, groups as
    CSR ``offsets`` over ``total`` entries; one XYZZ point per group (infinity when empty).

    The first pass gives each of one wave of resident threads an equal run of entries
    (msm_sum_affine_*, or with ``batch_lanes`` msm_sum_batch_affine_*: up to that many runs a
    thread, one inversion a step for all; see :func:`batch_lanes_for`). A group
    left with at most REDUCE_SEGMENT partials has them added by the thread of its first range
    boundary (msm_range_carries_*); with more, they go through _segmented_sum.
    With ``overlap_host_work`` (an MSM's buckets, not a small batch) the calling thread's
    queued host work runs while that pass computes.
    """
    if total == 0:
        return gpu.zeros((groups, group.xyzz_words), np.uint32)
    threads = _batch_threads(gpu, group, batch_lanes)
    lanes = batch_lanes_for(group, total, threads, batch_lanes)
    if lanes:  # a thread's lanes·range_len entries give one partial a group, as a range does
        kernel = _kernel(gpu, f"msm_sum_batch_affine_{group.name}")
        range_len = -(-total // (threads * lanes))
        slot_range = lanes * range_len
    else:
        kernel = _kernel(gpu, f"msm_sum_affine_{group.name}")
        range_len = slot_range = max(MIN_RANGE, -(-total // _range_threads(gpu, group)))
    slots = gpu.empty((groups + 1,), np.uint32)
    gpu.clear(slots[:1])
    counts = _kernel(gpu, "msm_range_slot_counts")
    gpu.launch(counts, groups, (offsets, _u32(groups), _u32(slot_range), slots[1:]))
    scan.inclusive_sum(gpu, slots[1:], slots[1:])
    # A range adds a slot for each group boundary inside it: at most ranges + groups in all.
    ranges = -(-total // slot_range)
    bound = ranges + groups
    partials = gpu.empty((bound, group.xyzz_words), np.uint32)
    args = (bases, entries, offsets, slots, _u32(groups), _u32(range_len))
    if lanes:  # each lane's running sum and group, the step's prefix product, the lane's head
        scratch = (
            gpu.empty((threads * lanes, group.affine_words), np.uint32),
            gpu.empty((threads * lanes,), np.uint32),
            gpu.empty((threads * lanes, group.affine_words // 2), np.uint32),
            gpu.empty((threads * lanes, group.affine_words), np.uint32),
            gpu.empty((threads * lanes,), np.uint32),
        )
        gpu.launch(kernel, threads, (*args, _u32(lanes), *scratch, partials), block=128)
        del scratch
    else:
        gpu.launch(kernel, -(-total // range_len), (*args, partials), block=128)
    if overlap_host_work:  # the MSM's longest kernel: the proof's Python runs meanwhile
        gpu.overlap_host_work()
    # A group of k entries overlaps at most ⌈k / L⌉ + 1 ranges of L = slot_range entries.
    most = -(-max_count // slot_range) + 1
    if most > REDUCE_SEGMENT:  # the only reference handed over: freed after the first pass
        handed_over = [partials]
        del partials
        return _segmented_sum(gpu, group, handed_over, bound, slots, groups, most)
    out = gpu.empty((groups, group.xyzz_words), np.uint32)
    args = (partials, slots, _u32(groups), out)
    gpu.launch(_kernel(gpu, f"msm_first_partials_{group.name}"), groups, args)
    args = (partials, offsets, slots, _u32(groups), _u32(slot_range), _u32(ranges), out)
    gpu.launch(_kernel(gpu, f"msm_range_carries_{group.name}"), ranges - 1, args, block=128)
    return out


def _window_sums(
    gpu: Gpu, group: Group, buckets: DeviceArray, windows: int, per_window: int
) -> DeviceArray:
    """Σ_b b·bucket_b for every window, canonical XYZZ on the device (windows rows), by
    msm/reduce.cuh's steps."""
    m = 1 << max(0, math.ceil(math.log2(max(1, windows * per_window / CHUNK_THREADS))))
    m = min(m, MAX_CHUNK, 1 << max(0, (per_window - 1).bit_length()))
    chunks = -(-per_window // m)
    sums = gpu.empty((2 * windows * chunks, group.xyzz_words), np.uint32)
    gpu.launch(
        _kernel(gpu, f"msm_chunk_sums_{group.name}"),
        windows * chunks,
        (buckets, _u32(windows), _u32(per_window), _u32(m), _u32(chunks), sums),
        block=128,
    )
    bits = (chunks - 1).bit_length()
    planes = 1 + bits
    per_plane = 1 if bits < 2 else 1 << (bits - 2)
    partials = gpu.empty((windows * planes * per_plane, group.xyzz_words), np.uint32)
    gpu.launch(
        _kernel(gpu, f"msm_plane_sums_{group.name}"),
        windows * planes * per_plane,
        (sums, _u32(windows), _u32(chunks), _u32(bits), partials),
        block=128,
    )
    del sums
    plane_totals = _pair_sums(gpu, group, partials, windows * planes, per_plane)
    terms = gpu.empty((windows * planes, group.xyzz_words), np.uint32)
    args = (plane_totals, _u32(windows), _u32(bits), _u32(m.bit_length() - 1), terms)
    gpu.launch(_kernel(gpu, f"msm_window_terms_{group.name}"), windows * planes, args, block=32)
    return _canonical(gpu, group, _pair_sums(gpu, group, terms, windows, planes), windows)


def _canonical(gpu: Gpu, group: Group, points: DeviceArray, count: int) -> DeviceArray:
    """The first ``count`` XYZZ ``points`` out of Montgomery form, as the host reads them."""
    out = gpu.empty((count, group.xyzz_words), np.uint32)
    gpu.launch(_kernel(gpu, f"msm_canonical_{group.name}"), count, (points, _u32(count), out))
    return out


def _xyzz_to_jacobian(group: Group, words: np.ndarray) -> Any:
    """A canonical XYZZ point (words) as a Jacobian point of cuzk_core's curve code."""
    ints = limbs_to_ints(np.ascontiguousarray(words).view(np.uint64).reshape(-1, 6))
    if group.fq_per_coord == 2:
        ints = [tuple(ints[i : i + 2]) for i in range(0, 8, 2)]
    x, y, zz, zzz = ints
    if group.is_zero(zz):
        return group.infinity
    mul, sqr = group.mul, group.sqr
    # x = X/ZZ, y = Y/ZZZ; with Z = ZZ·ZZZ: X_J = X·ZZ·ZZZ², Y_J = Y·ZZ³·ZZZ².
    zzz2 = sqr(zzz)
    return (mul(mul(x, zz), zzz2), mul(mul(y, mul(sqr(zz), zz)), zzz2), mul(zz, zzz))


def _coords_as(point: Any, kind: Callable[[Any], Any]) -> Any:
    """A point's coordinates (ints, or Fq2 pairs of them) converted by ``kind``."""
    return tuple(_coords_as(c, kind) if isinstance(c, tuple) else kind(c) for c in point)


COMBINE_STEP_WINDOWS = 4
"""Windows of the combination a step of :func:`host_sum` takes: ~64 doublings, ~0.3 ms in G1
and ~0.6 in G2 with gmpy2 (host work beside a device stops only between steps)."""


def _combine_windows(group: Group, window_points: np.ndarray, c: int, timer: Timer) -> Steps[Any]:
    """Σ_w 2^(c·w)·S_w by Horner's rule over canonical XYZZ window sums, computed in
    ``_host_int`` (the curve formulas take any integer type) and returned in Python ints;
    COMBINE_STEP_WINDOWS windows a step, each in an ``msm_combine`` span."""
    acc = group.infinity
    rows = window_points[::-1]
    for first in range(0, len(rows), COMBINE_STEP_WINDOWS):
        if first:
            yield
        with timer.span("msm_combine", windows=min(COMBINE_STEP_WINDOWS, len(rows) - first)):
            for words in rows[first : first + COMBINE_STEP_WINDOWS]:
                for _ in range(c):
                    acc = group.double(acc)
                acc = group.add(acc, _coords_as(_xyzz_to_jacobian(group, words), _host_int))
    return _coords_as(acc, int)


def _sort_bytes(n: int, windows: int, groups: int) -> int:
    """Device bytes a counting sort of n scalars' ``windows`` digits into ``groups`` takes: a
    word a digit (freed before the sums), then an entry a digit; 3 words a group."""
    return 8 * n * windows + 12 * groups


def merged_set_bytes(group: Group, c: int, signed: bool) -> int:
    """Device bytes of :class:`MergedPasses`' set of buckets for c-bit windows."""
    return 4 * group.xyzz_words * window_count(c, signed) * bucket_count(c, signed)


def _bucket_workspace(
    group: Group,
    n: int,
    c: int,
    signed: bool,
    threads: int,
    table_windows: int = 0,
    batch_lanes: int = 0,
    batch_threads: int = 0,
) -> int:
    """Device bytes one Pippenger pass over n scalars needs beyond bases and scalars, when the
    first bucket-summing pass runs ``threads`` threads (a set of buckets for each
    ``table_windows`` windows with a table), or the batch-affine pass ``batch_threads`` threads
    of up to ``batch_lanes`` lanes."""
    windows, per_window = window_count(c, signed), bucket_count(c, signed)
    groups = bucket_sets(windows, table_windows) * per_window
    entries = n * windows
    xyzz = 4 * group.xyzz_words
    partial_bound = min(entries // MIN_RANGE, threads) + groups
    batch = 0
    lanes = batch_lanes_for(group, entries, batch_threads, batch_lanes)
    if lanes:  # its lanes' scratch: a sum, a head, two groups and a prefix a lane
        partial_bound = batch_threads + groups
        batch = batch_threads * lanes * (8 + 10 * group.affine_words)
    xyzz_bytes = xyzz * (partial_bound + 2 * groups)
    return _sort_bytes(n, windows, groups) + xyzz_bytes + batch + (64 << 20)


def _pass_buckets(
    gpu: Gpu,
    group: Group,
    bases: DeviceArray,
    scalars: DeviceArray,
    skip: DeviceArray | None,
    c: int,
    signed: bool,
    timer: Timer,
    wait: Callable[[], None],
    table_windows: int,
    batch_lanes: int,
    slot: SortSlot | None,
    share: SortShare | None,
) -> DeviceArray | None:
    """The bucket sums of a Pippenger pass over Σ scalarᵢ·baseᵢ on the device (XYZZ,
    window-major), None if all digits are zero. ``bases`` are device affine Montgomery words,
    ``scalars`` (n, 8) uint32; ``wait`` returns once they are uploaded (called after the sort,
    which needs only scalars). With ``table_windows`` not 0, ``bases`` is a window table of
    that many windows (:func:`build_window_table`, c bits): each run of ``table_windows``
    windows shares a set of buckets (one set when the table holds every window).
    ``batch_lanes``: see :func:`batch_lanes_for`. With a ``slot``, the sort kept there for
    these scalars is taken instead of sorting, else this pass's sort is kept there. A
    ``share``'s queued sorts ahead start once this pass's sort has ended."""
    windows, per_window = window_count(c, signed), bucket_count(c, signed)
    sets = bucket_sets(windows, table_windows)
    found = None if slot is None else slot.share.find(slot.owner, slot.key)
    with gpu.step(timer, "msm_sort", windows=windows, kept=found is not None):
        sorted_ = (
            found
            if found is not None
            else counting_sort(gpu, scalars, skip, c, signed, table_windows)
        )
        if slot is not None and found is None and sorted_ is not None:
            slot.share.keep(slot.owner, slot.key, sorted_)
    if share is not None:  # beside this pass's bucket sums (bench/NOTES.md, round 36)
        share.start_queued()
    if sorted_ is None:
        wait()  # nothing reads the bases, but their upload must end before they are freed
        return None
    offsets, entries, total, max_count = sorted_
    del sorted_  # the sums' step frees entries and offsets once their first pass has read them
    wait()
    with gpu.step(timer, "msm_buckets", entries=total, max_bucket=max_count):
        overlap = total >= HOST_WORK_MIN_ENTRIES
        groups = sets * per_window
        return _bucket_sums(
            gpu, group, bases, entries, offsets, groups, total, max_count, overlap, batch_lanes
        )


def _reduced(
    gpu: Gpu,
    group: Group,
    buckets: DeviceArray | None,
    c: int,
    signed: bool,
    table_windows: int,
    timer: Timer,
) -> DeviceArray | None:
    """The window sums of a pass's ``buckets`` (:func:`_pass_buckets`) as canonical XYZZ words
    on the device: a row a window, or a row a set of a table's windows (one, the whole sum,
    when the table holds every window); None for no buckets."""
    if buckets is None:
        return None
    sets = bucket_sets(window_count(c, signed), table_windows)
    with gpu.step(timer, "msm_reduce"):
        return _window_sums(gpu, group, buckets, sets, bucket_count(c, signed))


class MergedPasses:
    """A chunked MSM's passes merged on the device: each pass's buckets added into one set as
    it ends (msm_add_into_*, one XYZZ addition a bucket), reduced once after the last, so the
    MSM pays one bucket reduction and one windows' combination instead of one a chunk (each
    about two additions a bucket plus fixed latency, bench/NOTES.md, round 44). Its 0/1
    split's sums are downloaded after the reduction is queued."""

    def __init__(self, gpu: Gpu, group: Group, c: int, signed: bool) -> None:
        self.gpu, self.group, self.c, self.signed = gpu, group, c, signed
        self.buckets: DeviceArray | None = None
        self.ones: list[DeviceArray] = []

    def add(self, buckets: DeviceArray | None, ones: DeviceArray | None, timer: Timer) -> None:
        """Merge a pass's ``buckets`` (None: all its digits were zero) and keep its ``ones``."""
        if ones is not None:
            self.ones.append(ones)
        if buckets is None:
            return
        if self.buckets is None:
            self.buckets = buckets
            return
        with self.gpu.step(timer, "msm_merge"):
            count = buckets.shape[0]
            kernel = _kernel(self.gpu, f"msm_add_into_{self.group.name}")
            self.gpu.launch(kernel, count, (self.buckets, buckets, _u32(count)), block=128)

    def sums(self, timer: Timer) -> list[PassSums]:
        """The merged passes as the host reads them: a row for each 0/1 split's sum, then the
        window sums (absent when every digit was zero)."""
        window_sums = _reduced(self.gpu, self.group, self.buckets, self.c, self.signed, 0, timer)
        passes = [PassSums(row.get()[0], None, self.c, 0) for row in self.ones]
        if window_sums is not None:
            passes.append(PassSums(None, window_sums.get(), self.c, 0))
        return passes


MAX_TABLE_WINDOWS = 16
"""The most windows a table may hold (msm/window_table.cuh's MSM_MAX_TABLE_WINDOWS): 16 bits
and up."""


def table_windows(c: int) -> int:
    """Windows a table of c-bit windows holds: enough for signed digits (and so unsigned)."""
    return window_count(c, signed=True)


def build_window_table(
    gpu: Gpu,
    group: Group,
    table: DeviceArray,
    n: int,
    c: int,
    windows: int | None = None,
    stream: Any = None,
) -> None:
    """Fill rows w·n + i of ``table`` with 2^(c·w)·(row i) for windows 1 ≤ w < ``windows``
    (None: every window, :func:`table_windows`), its first n rows holding the bases (affine
    Montgomery words), on ``stream``."""
    windows = table_windows(c) if windows is None else windows
    if not 2 <= windows <= MAX_TABLE_WINDOWS:
        raise ValueError(
            f"a window table of {c} bits holds 2 to {MAX_TABLE_WINDOWS} windows, not {windows}"
        )
    kernel = _kernel(gpu, f"msm_window_table_{group.name}")
    gpu.launch(kernel, n, (table, _u32(n), _u32(c), _u32(windows)), block=64, stream=stream)


def batch_sum(
    gpu: Gpu, group: Group, bases: DeviceArray, indices: DeviceArray
) -> DeviceArray | None:
    """Σ bases[indices] (the scalars equal to 1) as one canonical XYZZ row on the device, None
    when there are none. Nothing waits for it: it is read with the pass's window sums."""
    count = indices.shape[0]
    if count == 0:
        return None
    offsets = gpu.to_device(np.array([0, count], dtype=np.uint32))
    total = _bucket_sums(gpu, group, bases, indices, offsets, 1, count, count)
    return _canonical(gpu, group, total, 1)


def split_ones(
    gpu: Gpu, scalars: DeviceArray, skip: DeviceArray | None
) -> tuple[DeviceArray, DeviceArray]:
    """The indices of the scalars equal to 1 (and not skipped), and the skip mask adding them."""
    n = scalars.shape[0]
    ones = gpu.empty((n,), np.uint32)
    skip_out = gpu.empty((n,), np.uint8)
    args = (scalars, skip if skip is not None else NULL, _u32(n), ones, skip_out)
    gpu.launch(_kernel(gpu, "msm_mark_ones"), n, args)
    return scan.flatnonzero(gpu, ones), skip_out


def stream_chunk_limit(group: Group, key_budget: int | None) -> int | None:
    """The most bases per streamed chunk when ``key_budget`` device bytes hold two chunks (the
    one being summed and the next one uploading), at least one; None without a budget."""
    if key_budget is None:
        return None
    return max(1, key_budget // (2 * 4 * group.affine_words))


def plan_chunk(
    group: Group,
    n: int,
    c: int,
    signed: bool,
    streamed: bool,
    key_budget: int | None,
    free: int,
    threads: int,
    upload_pieces: int = 1,
    batch_lanes: int = 0,
    batch_threads: int = 0,
) -> tuple[int, int]:
    """Scalars per Pippenger pass and the device bytes one pass needs: all n unless entries,
    ``free`` device bytes or (streamed bases) the key's device budget or ``upload_pieces`` say
    otherwise. Streamed bases count twice: the next chunk uploads while this one is summed, so
    n in ``upload_pieces`` pieces (each at least MIN_UPLOAD_PIECE) hides all uploads but the
    first piece's."""
    chunk = max(1, min(n, MAX_ENTRIES // window_count(c, signed)))
    if streamed:
        chunk = min(chunk, stream_chunk_limit(group, key_budget) or chunk)
        pieces = max(1, min(upload_pieces, n // MIN_UPLOAD_PIECE))
        chunk = min(chunk, -(-n // pieces))
    base_bytes = 2 * 4 * group.affine_words if streamed else 0

    def need(k: int) -> int:
        workspace = _bucket_workspace(
            group, k, c, signed, threads, False, batch_lanes, batch_threads
        )
        merged = merged_set_bytes(group, c, signed) if k < n else 0  # beside a pass's own set
        return workspace + merged + k * (32 + base_bytes)

    while chunk > 1 and need(chunk) > free:
        chunk = -(-chunk // 2)
    return chunk, need(chunk)


def _plan_passes(
    gpu: Gpu,
    group: Group,
    n: int,
    window_bits: int | None,
    signed: bool,
    streamed: bool,
    key_budget: int | None,
    upload_pieces: int,
    batch_lanes: int,
    reserved: int = 0,
) -> tuple[int, int]:
    """Window bits and scalars per pass (:func:`_pass_plan`) on this device, its free memory
    less ``reserved`` bytes (sorts ahead that may allocate beside); refused up front when even
    one point cannot fit."""
    free = max(0, gpu.free_bytes() - reserved)
    c, chunk, need = _pass_plan(
        gpu, group, n, window_bits, signed, streamed, key_budget, upload_pieces, batch_lanes, free
    )
    gpu.ensure_fits(need, f"an MSM in {group.name.upper()} ({n} points)")
    return c, chunk


def _pass_plan(
    gpu: Gpu,
    group: Group,
    n: int,
    window_bits: int | None,
    signed: bool,
    streamed: bool,
    key_budget: int | None,
    upload_pieces: int,
    batch_lanes: int,
    free: int,
) -> tuple[int, int, int]:
    """Window bits, scalars per pass and a pass's device bytes (:func:`plan_chunk`) in
    ``free`` bytes: ``window_bits``, or by size, where wide windows are kept only for passes
    of WIDE_WINDOW_POINTS that fit as such (their buckets are many)."""
    threads, batch_threads = _range_threads(gpu, group), _batch_threads(gpu, group, batch_lanes)

    def planned(c: int) -> tuple[int, int]:
        return plan_chunk(
            group,
            n,
            c,
            signed,
            streamed,
            key_budget,
            free,
            threads,
            upload_pieces,
            batch_lanes,
            batch_threads,
        )

    c = window_bits or auto_window_bits(group, n, signed)
    chunk, need = planned(c)
    wide_from = WIDE_WINDOW_POINTS[group.name]
    if window_bits is None and c == WIDE_WINDOW_BITS and chunk < wide_from:
        c = auto_window_bits(group, wide_from - 1, signed)  # the width below the wide one
        chunk, need = planned(c)
    return c, chunk, need


class BaseChunk(NamedTuple):
    """Bases ``start…stop`` on the device: affine Montgomery words, the infinity mask (or
    None), and ``wait``, which returns once the words are uploaded (their upload may still be
    in flight when the chunk is handed out)."""

    coords: DeviceArray
    skip: DeviceArray | None
    wait: Callable[[], None]


class WindowTable(NamedTuple):
    """Resident bases' window table: ``rows`` w·n + i hold 2^(c·w)·base i for c = ``bits`` and
    w below ``windows`` (see :func:`build_window_table`); its first n rows are the bases the
    slicer hands out."""

    rows: DeviceArray
    bits: int
    windows: int


BaseSlicer = Callable[[int, int], BaseChunk]
"""``(start, stop) -> BaseChunk``: a view of resident bases, or the start of an upload."""


def for_each_chunk(
    bases: BaseSlicer, n: int, chunk: int, compute: Callable[[BaseChunk, int, int], None]
) -> None:
    """``compute(bases(start, stop), start, stop)`` for consecutive chunks of ``n`` bases, the
    next chunk asked for (its upload started) before this one is computed, so that streamed
    uploads overlap the previous chunk's sums (double buffering). No chunk outlives its
    compute here, so at most two chunks' device memory is held at once."""
    bounds = [(start, min(n, start + chunk)) for start in range(0, n, chunk)]
    upcoming = bases(*bounds[0]) if bounds else None
    for index, (start, stop) in enumerate(bounds):
        current, upcoming = upcoming, None
        if index + 1 < len(bounds):
            upcoming = bases(*bounds[index + 1])
        compute(current, start, stop)
        del current


class PassSums(NamedTuple):
    """What a pass leaves for the host, downloaded: the 0/1 split's batch sum (one canonical
    XYZZ row, or None), its window sums (canonical XYZZ rows, a row a window, or with a table a
    row a set of ``table_windows`` windows: one, the whole sum, when the table holds every
    window; None when every digit was zero), their window bits and the table's windows (0:
    none)."""

    ones: np.ndarray | None
    windows: np.ndarray | None
    c: int
    table_windows: int


def device_sums(
    gpu: Gpu,
    group: Group,
    bases: BaseSlicer,
    streamed: bool,
    scalars: DeviceArray,
    window_bits: int | None,
    signed: bool,
    split_01: bool,
    timer: Timer,
    key_budget: int | None = None,
    table: WindowTable | None = None,
    upload_pieces: int = 1,
    batch_lanes: int = 0,
    share: SortShare | None = None,
    owner: object = None,
) -> list[PassSums]:
    """The device's part of Σ scalarᵢ·baseᵢ as :class:`PassSums`, downloaded: one for a single
    pass, or for a chunked MSM its passes merged (:class:`MergedPasses`); ``scalars`` are (n, 8)
    uint32 on the device.

    ``bases`` gives device chunks of the bases; ``streamed`` says each chunk is an upload, so
    two chunks' memory counts when the passes are sized, ``key_budget`` (device bytes, or
    None) caps the two, and the upload comes in ``upload_pieces`` pieces or more (see
    :func:`plan_chunk`). Nothing reads a chunk's bases before its ``wait`` is called. Resident
    bases with a window ``table`` take one pass over it with its window bits (``window_bits``
    is then not used), when that pass fits; else the plain passes over ``bases``. With
    ``batch_lanes`` not 0, passes large enough (:func:`batch_lanes_for`) sum their buckets in
    affine coordinates with up to that many lanes a thread. With a ``share``, the passes take
    a sort it keeps or sorted ahead for ``owner`` (the scalars' handle, None for other
    scalars) and, with auto width where the groups' size rules differ, a kept sort's width
    (G1's widths tie there: bench/NOTES.md, round 35); else they leave their sort there. Its
    queued sorts ahead start once the first pass's own sort has ended.
    """
    n = scalars.shape[0]
    if n == 0:
        return []
    if share is not None:
        share.begin(owner)
        if owner is not None and window_bits is None:
            widths = {auto_window_bits(g, n, signed) for g in GROUPS.values()}
            window_bits = share.width(owner, n, widths)

    def one_pass(
        bases_chunk: BaseChunk,
        start: int,
        stop: int,
        c: int,
        tab: WindowTable | None,
        merged: MergedPasses | None = None,
    ) -> None:
        slot = None
        if share is not None and owner is not None and bases_chunk.skip is None:
            key = SortKey(start, stop, c, signed, 0 if tab is None else tab.windows, split_01)
            slot = SortSlot(share, owner, key)
        piece = scalars[start:stop]
        args = (c, signed, split_01, timer, tab, batch_lanes, slot, share, merged)
        sums = _msm_pass(gpu, group, bases_chunk, piece, *args)
        if sums is not None:
            passes.append(sums)

    passes: list[PassSums] = []
    reserved = 0 if share is None else share.reserved(owner)
    if table is not None:
        whole = bases(0, n)
        held = 0  # a sort the table's pass will take is already allocated: not asked twice
        if share is not None and owner is not None and whole.skip is None:
            held = share.held(owner, SortKey(0, n, table.bits, signed, table.windows, split_01))
        if _table_fits(gpu, group, table, n, signed, batch_lanes, reserved - held):
            one_pass(whole, 0, n, table.bits, table)
            return passes
    c, chunk = _plan_passes(
        gpu,
        group,
        n,
        window_bits,
        signed,
        streamed,
        key_budget,
        upload_pieces,
        batch_lanes,
        reserved,
    )

    merged = MergedPasses(gpu, group, c, signed) if chunk < n else None

    def compute(bases_chunk: BaseChunk, start: int, stop: int) -> None:
        one_pass(bases_chunk, start, stop, c, None, merged)

    for_each_chunk(bases, n, chunk, compute)
    return passes if merged is None else merged.sums(timer)


AHEAD_FREE_SHARE = 4
"""Sorts ahead are queued only while all of them need at most 1/AHEAD_FREE_SHARE of the
device's free memory; passes planned while they are named leave their bytes out."""


def sort_ahead_key(
    gpu: Gpu,
    group: Group,
    n: int,
    window_bits: int | None,
    signed: bool,
    split_01: bool,
    batch_lanes: int,
    reserved: int = 0,
    table: WindowTable | None = None,
) -> tuple[SortKey, int] | None:
    """The sort key of an MSM over n resident bases (no infinity) that :func:`device_sums`
    would plan as one pass now (with a window ``table``, its pass: the table's bits and
    windows), and the sort's device bytes, when they fit beside the passes before it with the
    ``reserved`` bytes of the sorts ahead already named (AHEAD_FREE_SHARE); else None (also
    when the table's pass does not fit now). A later plan that differs just finds no sort
    ahead."""
    free = gpu.free_bytes()
    if table is not None:
        if not _table_fits(gpu, group, table, n, signed, batch_lanes, reserved):
            return None
        c, table_windows = table.bits, table.windows
    else:
        c, chunk, _ = _pass_plan(
            gpu,
            group,
            n,
            window_bits,
            signed,
            streamed=False,
            key_budget=None,
            upload_pieces=1,
            batch_lanes=batch_lanes,
            free=free,
        )
        if chunk < n:
            return None
        table_windows = 0
    windows = window_count(c, signed)
    groups = bucket_sets(windows, table_windows) * bucket_count(c, signed)
    sort_bytes = _sort_bytes(n, windows, groups)
    if (reserved + sort_bytes) * AHEAD_FREE_SHARE > free:
        return None
    return SortKey(0, n, c, signed, table_windows, split_01), sort_bytes


def host_sum(group: Group, passes: list[PassSums], timer: Timer) -> Steps[Any]:
    """The host's part of an MSM: the passes' sums as one Jacobian point, a step at a time
    (the windows' combination, see COMBINE_STEP_WINDOWS)."""
    total = group.infinity
    for sums in passes:
        if sums.ones is not None:
            total = group.add(total, _xyzz_to_jacobian(group, sums.ones))
        if sums.windows is None:
            continue
        if len(sums.windows) == 1:
            total = group.add(total, _xyzz_to_jacobian(group, sums.windows[0]))
        else:  # a row a window, or a set of a table's windows
            shift = sums.c * max(1, sums.table_windows)
            total = group.add(
                total, (yield from _combine_windows(group, sums.windows, shift, timer))
            )
    return total


def _table_fits(
    gpu: Gpu,
    group: Group,
    table: WindowTable,
    n: int,
    signed: bool,
    batch_lanes: int,
    reserved: int = 0,
) -> bool:
    """Whether one pass over all n scalars with ``table`` fits: its entries and table rows in
    31 bits, its workspace on the device beside ``reserved`` bytes."""
    if max(n * window_count(table.bits, signed), n * table.windows) > MAX_ENTRIES:
        return False
    threads, batch_threads = _range_threads(gpu, group), _batch_threads(gpu, group, batch_lanes)
    workspace = _bucket_workspace(
        group, n, table.bits, signed, threads, table.windows, batch_lanes, batch_threads
    )
    need = workspace + 32 * n
    return need + reserved <= gpu.free_bytes()


def _msm_pass(
    gpu: Gpu,
    group: Group,
    bases_chunk: BaseChunk,
    scalars: DeviceArray,
    c: int,
    signed: bool,
    split_01: bool,
    timer: Timer,
    table: WindowTable | None = None,
    batch_lanes: int = 0,
    slot: SortSlot | None = None,
    share: SortShare | None = None,
    merged: MergedPasses | None = None,
) -> PassSums | None:
    """One pass (a chunk of the bases, or all of them with their window table, whose bits
    ``c`` then is) on the device, its sort found or left in ``slot``, starting ``share``'s
    queued sorts after its own; its sums downloaded, or with ``merged`` its buckets and 0/1
    split's sum left there (None returned)."""
    coords, skip, wait = bases_chunk
    n = scalars.shape[0]
    windows = 0 if table is None else table.windows
    ones = None
    if split_01:
        with timer.span("prep_msm", n=n):
            one_indices, skip = split_ones(gpu, scalars, skip)
        wait()
        with gpu.step(timer, "batch_add", n=one_indices.shape[0]):
            ones = batch_sum(gpu, group, coords, one_indices)
        span = timer.span("tail_msm", window_bits=c, table=windows)
    else:
        span = timer.span("pippenger", window_bits=c, n=n, table=windows)
    rows = coords if table is None else table.rows
    args = (c, signed, timer, wait, windows, batch_lanes, slot, share)
    with span:
        buckets = _pass_buckets(gpu, group, rows, scalars, skip, *args)
        if merged is None:
            reduced = _reduced(gpu, group, buckets, c, signed, windows, timer)
            sums = None if reduced is None else reduced.get()
    if merged is not None:
        merged.add(buckets, ones, timer)
        return None
    return PassSums(None if ones is None else ones.get()[0], sums, c, windows)
