# tap.sh: what the tests written in sh share, read with
#   . "${KEVO_SRCDIR:-.}/tests/tap.sh"
# $srcdir and $builddir, exported as KEVO_SRCDIR and KEVO_BUILDDIR for the
# programs a test runs; say and check, which print one TAP line each and
# set $status to 1 at a failure; mpi_flags, which sets $flags to what
# mpirun needs on this machine.
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
KEVO_SRCDIR=$srcdir
KEVO_BUILDDIR=$builddir
export KEVO_SRCDIR KEVO_BUILDDIR
n=0
status=0
say() { # ok|fail TEXT
  n=$((n + 1))
  if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; status=1; fi
}
check() { # TEXT COMMAND...
  text=$1
  shift
  if "$@"; then say ok "$text"; else say fail "$text"; fi
}
mpi_flags() { # Open MPI: more ranks than cores, as root in a container,
  # shared memory without cross-process mappings.
  flags=""
  if "$MPIRUN" --version 2>/dev/null | grep -q "Open MPI"; then
    flags="--oversubscribe"
    [ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
    OMPI_MCA_btl_vader_single_copy_mechanism=none
    OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_rmaps_base_oversubscribe
  fi
}
