"""The conformance suite: each installed backend (or ``--cuzk-backend NAME``) held to the reference.

``test_hooks`` runs each check of :data:`~cuzk_core.conformance.checks.CHECKS` (what ``cuzk
backends --check`` runs); the other modules go further where checks stay small: larger inputs,
every MSM window, whole proofs under several profiles. A backend that computes on the host gets
inputs up to :data:`~cuzk_core.conformance.checks.HOST_INPUT`, an accelerator up to
:data:`~cuzk_core.conformance.checks.DEVICE_INPUT`.
"""
