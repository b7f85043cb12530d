r"""The daemon's protocol: cuzk.proto and the modules protoc generated from it (committed).

Regenerate from the repository root after editing cuzk.proto (grpcio-tools pinned in the test
extra, so the output matches; tests/test_service.py checks it does). The pin is 1.84.0: the
generated code refuses a grpcio older than the grpcio-tools that made it, and the H200 image
has grpcio 1.84.0, so the ``serve`` extra asks for grpcio >= 1.84.0 (the same test checks the
two agree)::

    python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. --grpc_python_out=. \
        cuzk_core/service/proto/cuzk.proto
"""
