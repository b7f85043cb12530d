"""The conformance kit: every hook of a backend held to the CPU reference, bit for bit.

:mod:`~cuzk_core.conformance.checks` holds the checks; ``cuzk backends --check NAME`` runs them
and reports per hook, and :mod:`~cuzk_core.conformance.pytest_plugin` (a ``pytest11`` entry point)
runs them as tests under ``pytest --cuzk-backend NAME`` in a backend author's own repository.
"""
