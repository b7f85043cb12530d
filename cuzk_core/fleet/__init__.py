"""The fleet: the daemon's gRPC API and job store in front of Ray actors that prove.

One head process (:mod:`cuzk_core.fleet.head`) keeps the queue in the daemon's SQLite job store
and routes each job to a worker actor (:mod:`cuzk_core.fleet.worker`), one per GPU or per CPU
worker, each an :class:`~cuzk_core.engine.Engine` holding its keys resident. Routing
(:mod:`cuzk_core.fleet.router`) prefers a worker with the job's key hot, then the cheapest
eviction. Ray is needed only here: ``pip install 'cuzk[fleet]'``.
"""
