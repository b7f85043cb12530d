# Prepare a bare GPU machine (no package registry) for this tree's GPU tests and benchmarks.
# Source it from the tree's root:   source bench/device/prepare.sh SHARED [REF_TARBALL]
#   SHARED       a copy of the workplace's shared/device folder (PyCUDA's sources and wheels,
#                py_ecc's test wheels), carried with the tree in an ignored folder
#   REF_TARBALL  optional: another tree to measure against (`git archive REF | gzip > FILE`)
# Installs, each into its own folder and not editable, so that two trees' entry points never
# meet on one sys.path (a tree on PYTHONPATH alone shadows cuzk_core but not the backends):
#   /tmp/site        py_ecc's wheels, then PyCUDA built from source in the background (~2 min;
#                    `wait_pycuda` waits for it); both skipped when already there
#   /tmp/main-site   this tree and plugins/cuzk-fastcpu (again at every call: the tree changes)
#   /tmp/ref-site    REF_TARBALL's tree the same way (once a machine)
# Then `use main` or `use ref` points PYTHONPATH and PATH (its `cuzk`) at one of them; run a
# ref's commands outside the tree's root, where `python -m` would import this tree's cuzk_core.
# Logs go to $PREPARE_LOG (default /tmp/prepare.log).
# The copy has no .git: export CUZK_COMMIT=<the commit copied> so bench results name it.
# PREPARE_WHEELS=DIR: wheels there go into /tmp/site too, e.g. gmpy2's, which the cupy and
# pycuda extras install for users and the machine lacks (without it the GPU MSMs' windows'
# combination runs on Python's ints, ~2x slower: `pip download gmpy2 --only-binary=:all:
# --no-deps --python-version 3.12 --platform manylinux2014_x86_64 -d DIR` here).
# PREPARE_PYCUDA=0: no PyCUDA build, for a call that times CuPy alone (the build's ~2 min of
# compiling beside the timings swung host-bound figures by up to 10%, round 50).
shared=${1:?usage: source bench/device/prepare.sh SHARED [REF_TARBALL]}
ref_tarball=${2:-}
prepare_log=${PREPARE_LOG:-/tmp/prepare.log}
tree=$(pwd)

_install_tree() { # SOURCE_DIR TARGET: the tree and its fast CPU plugin, not editable
    rm -rf "$2"
    python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
        --target "$2" "$1" "$1/plugins/cuzk-fastcpu" >> "$prepare_log" 2>&1
}

source "$tree/bench/device/use.sh"

wait_pycuda() { # PyCUDA's build, if this call started one; its last line either way
    # In a pipeline (`wait_pycuda | tail`) the shell is a subshell, whose `wait` cannot wait for
    # its parent's child (round 50: the conformance then ran without PyCUDA): poll instead.
    if [ -n "${pycuda_build:-}" ] && ! wait "$pycuda_build" 2> /dev/null; then
        while kill -0 "$pycuda_build" 2> /dev/null; do sleep 2; done
    fi
    python3 -c "import sys; sys.path.insert(0, '/tmp/site'); import pycuda; print('pycuda', pycuda.VERSION_TEXT)" 2>&1 | tail -1
}

mkdir -p /tmp/site
if [ ! -d /tmp/site/py_ecc ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site "$shared"/test-wheels/*.whl >> "$prepare_log" 2>&1
fi
if [ -n "${PREPARE_WHEELS:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site "$PREPARE_WHEELS"/*.whl >> "$prepare_log" 2>&1 ||
        echo "prepare: installing $PREPARE_WHEELS's wheels failed (see $prepare_log)" >&2
fi
pycuda_build=
if [ "${PREPARE_PYCUDA:-1}" != 0 ] && ! ls /tmp/site/pycuda/_driver*.so > /dev/null 2>&1; then
    bash "$shared/install_pycuda.sh" /tmp/site >> "$prepare_log" 2>&1 &
    pycuda_build=$!
fi
_install_tree "$tree" /tmp/main-site || echo "prepare: installing this tree failed (see $prepare_log)" >&2
if [ -n "$ref_tarball" ] && [ ! -d /tmp/ref-site/cuzk_core ]; then
    rm -rf /tmp/ref-tree && mkdir -p /tmp/ref-tree && tar xzf "$ref_tarball" -C /tmp/ref-tree
    _install_tree /tmp/ref-tree /tmp/ref-site || echo "prepare: installing $ref_tarball failed (see $prepare_log)" >&2
fi
use main
