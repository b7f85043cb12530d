"""Builds the C kernels (``cuzk_fastcpu._native``) with the system compiler at install time."""

from glob import glob

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "cuzk_fastcpu._native",
            sources=["csrc/native.c"],
            depends=sorted(glob("csrc/*.h")),
            extra_compile_args=["-O3", "-std=gnu11", "-pthread"],
            extra_link_args=["-pthread"],
        )
    ]
)
