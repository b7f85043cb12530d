"""The ``pycuda`` entry point: the shared GPU hooks over the PyCUDA adapter."""

from __future__ import annotations

from cuzk_backend_gpu.plugin import GpuPlugin

from .adapter import PycudaAdapter

plugin = GpuPlugin(PycudaAdapter())
"""The registered plugin object (entry point ``pycuda = cuzk_backend_pycuda.plugin:plugin``)."""
