"""Arrays in and out of the compiled module: numpy on the CPU, torch tensors on any device.

The compiled module's host entry points read and write host memory: numpy arrays through the buffer
protocol, torch CPU tensors through DLPack (no copy either way). Its *_device entry points take torch
CUDA tensors through DLPack (no copy) with the caller's current stream (`cuda_stream`); the package
uses them where the library has a device path (see nvfp4_exact.linear, quantize, dequantize). Where
it has none, `to_host` copies a CUDA tensor to the host and `from_host` brings results back to its
device: these two functions are the only place where that happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np


#: How many times a device (CUDA) tensor was copied to the host (``to_host``) and a result copied back
#: to a device (``from_host``) since the counters were last reset: the package's host round trips,
#: counted where they happen. Exposed as ``nvfp4_exact.host_copies``; tests reset it and assert zero.
#: ``scalars`` counts one-value reads of a CUDA tensor (a global scale handed over as a tensor:
#: 4 bytes, waiting for the stream) separately.
host_copies = {"to_host": 0, "from_host": 0, "scalars": 0}


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
    """A C-contiguous, native-order host array holding `a`'s values (no copy where none is needed)."""
    if is_torch(a):
        import torch

        t = a.detach()
        if t.dtype == getattr(torch, "float8_e4m3fn", None):
            t = t.view(torch.uint8)  # block scales: UE4M3 bytes (DLPack has no float8 code everywhere)
        origin = Origin(t.device)
        if t.device.type != "cpu":
            host_copies["to_host"] += 1
            t = t.cpu()  # the host copy; see the module docstring
        return t.contiguous(), origin
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a)
        except Exception as e:  # noqa: BLE001 - re-raised with the argument's name
            raise ValueError(f"{name}: not an array numpy can read ({e})") from None
    a = _numpy_view(a)
    # The compiled module reads native-order numbers only, and says otherwise in a multi-line TypeError.
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{name} must be a numeric array, got dtype {a.dtype}")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    # Not np.ascontiguousarray, which makes a 0-d array 1-d: the checks downstream must see its shape.
    return np.asarray(a, order="C"), Origin()


def from_host(a: np.ndarray, origin: Origin, bf16: bool = False) -> Any:
    """A result (numpy, host) in the caller's kind: numpy, or a torch tensor on the input's device.
    bf16 results are uint16 bit patterns in numpy and torch.bfloat16 tensors in torch."""
    if not origin.is_torch:
        return a
    import torch

    t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if bf16 else torch.from_numpy(a)
    if origin.device.type != "cpu":
        host_copies["from_host"] += 1
        t = t.to(origin.device)  # back to the caller's device; see the module docstring
    return t


def check_scalar_kind(v: Any, name: str) -> None:
    """Refuses, without reading its value (a CUDA tensor's would wait), a scale that is no real
    number: float() would parse a str or bytes ("0.5" taken as 0.5), read a bool as 0 or 1 and cut
    a complex number to its real part with a warning."""
    if is_torch(v):
        if v.dtype.is_complex or str(v.dtype) == "torch.bool":
            raise TypeError(f"{name} must be a real number, got a tensor of {v.dtype}")
        return
    if isinstance(v, (list, tuple)):
        v = np.asarray(v)
    if isinstance(v, (np.ndarray, np.generic)):
        if v.dtype.kind == "O" and v.size == 1:
            return check_scalar_kind(v.reshape(-1)[0], name)
        if v.dtype.kind not in "iufO":  # O of another size: the caller's size check says so
            what = f"an array of {v.dtype}" if isinstance(v, np.ndarray) else type(v).__name__
            raise TypeError(f"{name} must be a real number, got {what}")
    elif isinstance(v, (str, bytes, bool, complex)):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}")


def scalar_f32(v: Any, name: str) -> float:
    """One float32 value (a Python number, a one-element array or tensor), as a Python float that
    holds it exactly."""
    if v is None:  # numpy would read it as NaN, which the library then calls a bad scale
        raise ValueError(f"{name} is missing (None)")
    check_scalar_kind(v, name)
    if is_torch(v):
        if v.numel() != 1:
            raise ValueError(f"{name} must hold one value, got {v.numel()}")
        if v.device.type != "cpu":
            host_copies["scalars"] += 1
        return float(np.float32(v.detach().float().cpu().item()))
    a = np.asarray(v)
    if a.size != 1:
        raise ValueError(f"{name} must hold one value, got {a.size}")
    try:
        with np.errstate(over="ignore"):  # beyond float32 it is Inf, which the library refuses in one line
            return float(np.float32(a.reshape(-1)[0]))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}") from None


def is_cuda(a: Any) -> bool:
    """A torch tensor on a CUDA device."""
    return is_torch(a) and a.device.type == "cuda"


def cuda_stream(device: Any) -> int:
    """The caller's current CUDA stream on `device`, as the integer the compiled module takes."""
    import torch

    return int(torch.cuda.current_stream(device).cuda_stream)


def on_device(t: Any, device: Any, name: str) -> Any:
    """A C-contiguous tensor on `device` whose data starts on a 16-byte boundary (the kernels load 16
    bytes at a time): `t` itself when it already is one, else a copy made on the GPU (a CPU tensor is
    uploaded). float8 block scales are viewed as their bytes."""
    import torch

    if not is_torch(t):
        t = to_host(t, name)[0]
        # torch.from_numpy warns on a read-only array; the upload below copies it anyway.
        t = torch.from_numpy(t if t.flags.writeable else t.copy())
    t = t.detach()
    if t.dtype == getattr(torch, "float8_e4m3fn", None):
        t = t.view(torch.uint8)
    if t.device != device:
        t = t.to(device)
    t = t.contiguous()
    if t.data_ptr() % 16 != 0:  # a view at an odd offset: a fresh allocation, on the device
        t = t.clone()
    return t
