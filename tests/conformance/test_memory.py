"""Allocation, pinning and upload hooks under every pinning strategy and key-storage policy."""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import random_points, random_scalars

from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs

PINNING = ["none", "register", "pool"]
STORAGE = ["device", "host", "stream", "mmap"]


@pytest.mark.parametrize("pinning", PINNING)
def test_alloc_pin_unpin(backend_name, make_backend, pinning):
    backend = make_backend(**{"memory.pinning": pinning, "memory.pool_mib": 4})
    buffer = backend.alloc_host((1000, 4), "uint64", "witness")
    assert buffer.shape == (1000, 4) and buffer.dtype == np.uint64
    assert not buffer.any()
    buffer[:] = 7
    other = np.arange(4096, dtype=np.uint64)
    handle = backend.pin([buffer, other], "params")
    assert handle is not None
    backend.unpin(handle)
    backend.release(buffer)
    assert (buffer == 7).all()


@pytest.mark.parametrize("storage", STORAGE)
@pytest.mark.parametrize("pinning", PINNING)
def test_upload_then_msm(backend_name, make_backend, reference, rng, storage, pinning):
    changes = {"memory.key_storage": storage, "memory.pinning": pinning, "memory.pool_mib": 1}
    backend = make_backend(**changes)
    for group, batch in (("g1", G1Affines), ("g2", G2Affines)):
        points = batch.from_points(random_points(group, rng, 100))
        scalars = ints_to_limbs(random_scalars(rng, 100)).reshape(-1, 4)
        pinned = backend.pin([points.coords, scalars], "params")
        handle = backend.upload(points, group)
        call = backend.msm_g1 if group == "g1" else backend.msm_g2
        want = (reference.msm_g1 if group == "g1" else reference.msm_g2)(points, scalars, "x")
        assert call(handle, scalars, "x").equals(want)
        assert call(handle, scalars, "x", 9).equals(want)
        backend.release(handle)
        backend.unpin(pinned)
