"""Shared helpers: bf16 test data and the two ways to run the nvfp4 command line."""

import os
import subprocess
import sys

import numpy as np
import pytest


def bf16_bits(x) -> np.ndarray:
    """float32 values -> bf16 bit patterns (uint16), round to nearest even."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def random_bf16(shape, seed=0, scale=1.0, spread=4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # Per-column magnitudes 2^-spread..2^spread, like activations with outlier channels.
    mag = np.exp2(rng.integers(-spread, spread + 1, size=shape[-1])).astype(np.float32)
    return bf16_bits(rng.standard_normal(shape).astype(np.float32) * mag * np.float32(scale))


# Split-K contracts for the device-path test (test_device_matmul.py) and the operands it runs them
# on: under the second this data gives other bits than sequentially (test_api.py checks that on the
# CPU), under the first it happens not to.
SPLIT_K_CONTRACTS = ["split_k:3:grain=128:cublas:fp32", "split_k:2:grain=64:cutlass:bf16_serial"]


def split_k_operands():
    import nvfp4_exact as nx

    return (nx.quantize(random_bf16((45, 1000), seed=81), pad=True),
            nx.quantize(random_bf16((72, 1000), seed=82, scale=0.05), pad=True))


def cli_commands():
    """Every way to run the CLI here: `python -m nvfp4_exact`, and the nvfp4 executable when the
    build says where it is (ctest sets NVFP4_CLI)."""
    cmds = [("python -m nvfp4_exact", [sys.executable, "-m", "nvfp4_exact"])]
    exe = os.environ.get("NVFP4_CLI")
    if exe and os.path.exists(exe):
        cmds.append(("nvfp4", [exe]))
    return cmds


@pytest.fixture(params=cli_commands(), ids=lambda c: c[0])
def cli(request):
    base = request.param[1]

    def run(*args):
        return subprocess.run([*base, *map(str, args)], capture_output=True, text=True)

    return run
