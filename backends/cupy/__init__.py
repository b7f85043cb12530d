"""The CuPy backend: every heavy hook on an NVIDIA GPU, kernels compiled by NVRTC."""
