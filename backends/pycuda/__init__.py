"""The PyCUDA backend: the shared GPU driver (cuzk_backend_gpu) over PyCUDA, kernels by nvcc."""
