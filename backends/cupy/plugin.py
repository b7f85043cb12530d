"""The ``cupy`` entry point: the shared GPU hooks over the CuPy adapter."""

from __future__ import annotations

from cuzk_backend_gpu.plugin import GpuPlugin

from .adapter import CupyAdapter

plugin = GpuPlugin(CupyAdapter())
"""The registered plugin object (entry point ``cupy = cuzk_backend_cupy.plugin:plugin``)."""
