"""The conformance suite: every hook of a backend held to the CPU reference, bit for bit.

:mod:`~cuzk_core.conformance.inputs` makes every input (random from a seed, and the edge cases)
and :mod:`~cuzk_core.conformance.oracles` computes what each hook must give by its definition;
cuzk's bench and tests draw from both too. :mod:`~cuzk_core.conformance.checks` holds the checks
and comparisons; ``cuzk backends --check NAME`` runs the checks and reports per hook.
:mod:`~cuzk_core.conformance.suite` holds the tests (each check, then larger inputs, every window,
whole proofs), which :mod:`~cuzk_core.conformance.pytest_plugin` (a ``pytest11`` entry point) runs
under ``pytest --cuzk-backend NAME`` in a backend author's repository and over every installed
backend in cuzk's.
"""
