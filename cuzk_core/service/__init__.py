"""``cuzk serve`` and its clients: the engine behind gRPC (needs ``pip install 'cuzk[serve]'``)."""
