# Shared by the shell tests of tools/ (sourced first): strict mode, a scratch folder $d removed on
# exit, fail MESSAGE (prints it, exits 1).
set -uo pipefail
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() {
  echo "FAILED: $*"
  exit 1
}
# expect_refusals TOOL ARGS...: each ARGS (one string, split on spaces) makes TOOL exit 2 with a
# message on stderr, the tools' one-line refusal of bad arguments.
expect_refusals() {
  local tool=$1 args msg rc
  shift
  for args in "$@"; do
    msg=$("$tool" $args 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "'$args': exit $rc, expected 2"
    [ -n "$msg" ] || fail "'$args': no message"
  done
}
