"""The CuPy backend: the shared GPU driver (cuzk_backend_gpu) over CuPy, kernels built by NVRTC."""
