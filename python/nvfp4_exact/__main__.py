"""``python -m nvfp4_exact``: the ``nvfp4`` command line (same commands, options and exit codes)."""

from __future__ import annotations

import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs ``nvfp4 ARGV...`` in this process and returns its exit code: 0 success, 1 bits differ,
    2 bad arguments or input, 3 unsupported here, 4 I/O or CUDA failure."""
    from . import _core

    args = list(sys.argv[1:] if argv is None else argv)
    # The C++ side writes to the process's stdout/stderr: flush Python's buffers first so the
    # output keeps its order.
    sys.stdout.flush()
    sys.stderr.flush()
    return _core.cli(["nvfp4", *args])


if __name__ == "__main__":
    raise SystemExit(main())
