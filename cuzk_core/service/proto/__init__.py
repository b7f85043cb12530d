r"""The daemon's protocol: cuzk.proto and the modules protoc generated from it (committed).

Regenerate from the repository root after editing cuzk.proto (grpcio-tools pinned in the test
extra, so the output matches; tests/test_service.py checks it does)::

    python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. --grpc_python_out=. \
        cuzk_core/service/proto/cuzk.proto
"""
