"""cuzk: a Groth16 prover for BLS12-381 in which every heavy step is a pluggy plugin."""

import pluggy

__version__ = "0.1.0"

PROJECT_NAME = "cuzk"
"""The pluggy project name and the entry-point group that backends and plugins register under."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Decorator for hook implementations: ``@hookimpl def cuzk_msm_g1(ctx, ...)``."""
