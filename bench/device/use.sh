# `use main` or `use ref`: PYTHONPATH and PATH (its `cuzk`) pointed at the tree that
# prepare.sh installed into /tmp/main-site or /tmp/ref-site. Sourced by prepare.sh and prove_ab.sh.
use() { # main | ref
    case $1 in
        main | ref) ;;
        *) echo "use: main or ref, not '$1'" >&2; return 2 ;;
    esac
    export PYTHONPATH=/tmp/$1-site:/tmp/site PATH=/tmp/$1-site/bin:${PATH#/tmp/*-site/bin:}
}
