"""``cuzk bench``: time one phase alone, A/B two profiles, compare saved results, isolate changes.

:mod:`.definitions` says what is timed (MSM, NTT, synthesis, whole proofs) on seeded inputs
from :mod:`cuzk_core.conformance.inputs`, checked against :mod:`cuzk_core.conformance.oracles`;
:mod:`.runner` checks, warms up and alternates profiles, timing with a :mod:`.clock` (the
backend's device clock when it implements the optional measurement hooks of
:mod:`cuzk_core.hookspecs`);
:mod:`.stats` turns runs into medians, spreads and paired ratios; :mod:`.environment` records
the machine beside every figure; :mod:`.results` is the JSON schema that :mod:`.compare` and
:mod:`.isolate` read; :mod:`.report` prints tables. :mod:`.memlog` samples memory,
:mod:`.observe` wraps ``cuzk prove --trace/--memlog`` and :mod:`.trace` draws waterfalls. Text
arguments are parsed in :mod:`.arguments`; errors live in :mod:`.errors`.
"""
