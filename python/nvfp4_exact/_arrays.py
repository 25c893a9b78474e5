"""Arrays in and out of the compiled module: numpy on the CPU, torch tensors on any device.

The compiled module reads and writes host memory: numpy arrays through the buffer protocol, torch
CPU tensors through DLPack (no copy either way). A tensor on another device (CUDA) is copied to the
host in `to_host` and results go back to its device in `from_host`; these two functions are the only
place where that happens, so a device-pointer GEMM in the library (zero-copy, on the caller's current
stream) replaces them and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np


def is_torch(a: Any) -> bool:
    return type(a).__module__.split(".", 1)[0] == "torch"


@dataclass(frozen=True)
class Origin:
    """Where an input came from, so outputs can be given back in kind."""

    device: Optional[Any] = None  # a torch.device, or None for numpy

    @property
    def is_torch(self) -> bool:
        return self.device is not None


def _numpy_view(a: np.ndarray) -> np.ndarray:
    # ml_dtypes' bfloat16 / float8 arrays: the same bytes as uint16 / uint8 patterns.
    name = a.dtype.name
    if name == "bfloat16":
        return a.view(np.uint16)
    if name.startswith("float8"):
        return a.view(np.uint8)
    return a


def to_host(a: Any, name: str) -> tuple[Any, Origin]:
    """A C-contiguous host array holding `a`'s values (no copy where none is needed)."""
    if is_torch(a):
        import torch

        t = a.detach()
        if t.dtype == getattr(torch, "float8_e4m3fn", None):
            t = t.view(torch.uint8)  # block scales: UE4M3 bytes (DLPack has no float8 code everywhere)
        origin = Origin(t.device)
        if t.device.type != "cpu":
            t = t.cpu()  # the host copy; see the module docstring
        return t.contiguous(), origin
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a)
        except Exception as e:  # noqa: BLE001 - re-raised with the argument's name
            raise ValueError(f"{name}: not an array numpy can read ({e})") from None
    return np.ascontiguousarray(_numpy_view(a)), Origin()


def from_host(a: np.ndarray, origin: Origin, bf16: bool = False) -> Any:
    """A result (numpy, host) in the caller's kind: numpy, or a torch tensor on the input's device.
    bf16 results are uint16 bit patterns in numpy and torch.bfloat16 tensors in torch."""
    if not origin.is_torch:
        return a
    import torch

    t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if bf16 else torch.from_numpy(a)
    if origin.device.type != "cpu":
        t = t.to(origin.device)  # back to the caller's device; see the module docstring
    return t


def scalar_f32(v: Any, name: str) -> float:
    """One float32 value (a Python number, a one-element array or tensor), as a Python float that
    holds it exactly."""
    if is_torch(v):
        if v.numel() != 1:
            raise ValueError(f"{name} must hold one value, got {v.numel()}")
        return float(np.float32(v.detach().float().cpu().item()))
    a = np.asarray(v)
    if a.size != 1:
        raise ValueError(f"{name} must hold one value, got {a.size}")
    return float(np.float32(a.reshape(-1)[0]))

