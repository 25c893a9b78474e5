"""nvfp4_exact: NVFP4 linear layers with the same bits on every machine.

NVFP4 is E2M1 values with a UE4M3 scale per 16 elements and an fp32 global scale. This package is
the nvfp4-exact C++/CUDA library: ComfyUI's quantization recipes bit for bit, dequantization, and the
GEMM of an NVFP4 linear layer with the bits a GB10 (SM121) computes, on the CPU (the oracle) or on any
GPU the library has an exact kernel for.

Arrays: numpy arrays on the CPU, torch tensors on the CPU or a GPU (results come back in the same
kind, on the same device). bf16 values are ``torch.bfloat16`` tensors or ``uint16`` numpy arrays of
bit patterns; packed codes and block scales are ``uint8`` (torch ``float8_e4m3fn`` scales are read as
their bytes).

CUDA tensors are read and written in place through DLPack, on the caller's current stream
(``torch.cuda.current_stream()``), by ``linear`` and ``matmul`` (backends sm90, sm120p-native,
sm120p-emulated, sm120-native, sm120-emulated; ``auto`` is sm90 on Hopper and sm120p-native on
SM120/SM121; a CUDA weight is prepacked on its GPU),
``quantize`` (recipe comfy-cuda), ``dequantize`` (comfy-cuda, swizzled scales) and ``global_scale``.
What still goes through the host is listed in each function's docstring; ``host_copies`` counts every
copy of a CUDA tensor to the host and back (``to_host``, ``from_host``) and every one-value read of a
CUDA scalar (``scalars``).

Errors raise ``TypeError`` (an argument of the wrong kind: an object that is no array, an array
where an NVFP4Tensor belongs, a bool where an option takes a value, a str, bytes, bool or complex
number where a scale belongs), ``ValueError`` (bad input, a malformed file included), ``OSError`` (a
file that cannot be read or written), ``NotImplementedError`` (unsupported on this machine or build)
or ``RuntimeError`` (CUDA), with a one-line message.

``python -m nvfp4_exact`` is the ``nvfp4`` command line; ``nvfp4_exact.comfy.install()`` makes this
library a comfy-kitchen backend.
"""

from __future__ import annotations

import json
import math
import operator
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import weakref

import numpy as np

try:
    from . import _core
except ImportError as _e:  # the source tree's python/nvfp4_exact, which has no compiled module
    raise ImportError(f"nvfp4_exact: the compiled module _core is not next to {__file__} ({_e}); "
                      "this is the source tree's copy: run from outside python/, after `pip install .` "
                      "or with PYTHONPATH=<build>/python") from None
from ._arrays import (check_scalar_kind, cuda_stream, from_host, host_copies, is_cuda, is_torch, on_device,
                      scalar_f32, to_host)

__version__: str = _core.__version__

__all__ = [
    "NVFP4Tensor",
    "available_backends",
    "clear_prepared",
    "dequantize",
    "explain",
    "global_scale",
    "host_copies",
    "linear",
    "matmul",
    "quantize",
    "resolve_backend",
    "validate",
]

RECIPES = ("comfy-cuda", "comfy-eager-cuda", "comfy-eager-cpu")
NIBBLE_ORDERS = ("hi_first", "lo_first")
SCALE_LAYOUTS = ("swizzled128x4", "linear")
# The library's other names for them: a tensor keeps the canonical one, so that comparisons
# (matmul's nibble check, the host prepack's hi_first) see one name per order.
_NIBBLE_NAMES = {"hi_first": "hi_first", "comfy": "hi_first", "lo_first": "lo_first", "ptx": "lo_first",
                 "cutlass": "lo_first"}
_LAYOUT_NAMES = {"swizzled128x4": "swizzled128x4", "swizzled": "swizzled128x4", "128x4": "swizzled128x4",
                 "linear": "linear"}


def _str(v: Any, name: str) -> str:
    # The compiled module's own type errors list every overload over several lines.
    if not isinstance(v, str):
        raise TypeError(f"{name} must be a string, got {type(v).__name__}")
    return v


def _int(v: Any, name: str) -> int:
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(v).__name__}") from None
    # The compiled module takes int64: beyond it, its own TypeError lists every overload over lines.
    if not -2**63 <= i < 2**63:
        raise ValueError(f"{name} {i} is out of range (a 64-bit integer)")
    return i


def _nvfp4(v: Any, name: str) -> None:
    # Another object (an array, None) would fail later on a missing attribute, an AttributeError.
    if not isinstance(v, NVFP4Tensor):
        raise TypeError(f"{name} must be an NVFP4Tensor (see quantize), got {type(v).__name__}")


def _canonical(names: dict, v: Any, what: str, name: str) -> str:
    c = names.get(_str(v, name))
    if c is None:
        raise ValueError(f"unknown {what} '{v}' (expected {' or '.join(sorted(set(names.values())))})")
    return c


def _shape_of(a: Any) -> tuple:
    return tuple(int(d) for d in (a.shape if hasattr(a, "shape") else np.shape(a)))


@dataclass(frozen=True)
class NVFP4Tensor:
    """An NVFP4 matrix of logical shape ``shape`` = (rows, cols).

    data:         uint8 [rows16][cols16 / 2], two E2M1 codes a byte in ``nibbles`` order
                  (``hi_first``: ComfyUI / comfy-kitchen; ``lo_first``: PTX, cuBLAS, CUTLASS)
    scales:       uint8 UE4M3 block scales, ``swizzled128x4`` ([roundup(rows16,128)][roundup(cols16/16,4)],
                  cuBLAS / comfy-kitchen) or ``linear`` ([rows16][cols16/16])
    global_scale: the fp32 decode scale: value = e2m1 * ue4m3 * global_scale; a number, or a
                  one-element tensor (a float32 one on the data's GPU stays there: the device paths
                  read it on the GPU, see quantize, dequantize and matmul)

    rows16 and cols16 are rows and cols rounded up to 16. A ComfyUI checkpoint layer is
    ``NVFP4Tensor(weight, weight_scale, float(weight_scale_2), (N, K))``. The arrays' shapes are
    checked against ``shape`` (scales may also be flat: the layout's bytes in one dimension); the
    aliases ``comfy`` (hi_first), ``ptx``/``cutlass`` (lo_first), ``swizzled``/``128x4`` are kept
    as the canonical names. ValueError otherwise.
    """

    data: Any
    scales: Any
    global_scale: float
    shape: tuple
    nibbles: str = "hi_first"
    scale_layout: str = "swizzled128x4"

    def __post_init__(self):
        object.__setattr__(self, "nibbles", _canonical(_NIBBLE_NAMES, self.nibbles, "nibble order", "nibbles"))
        layout = _canonical(_LAYOUT_NAMES, self.scale_layout, "scale layout", "scale_layout")
        object.__setattr__(self, "scale_layout", layout)
        if self.global_scale is not None:  # None is said where it is read ("missing")
            check_scalar_kind(self.global_scale, "global_scale")
        try:
            rows, cols = (operator.index(v) for v in self.shape)
        except (TypeError, ValueError):
            raise ValueError(f"shape must be (rows, cols), two integers, got {self.shape!r}") from None
        object.__setattr__(self, "shape", (rows, cols))
        # Only byte counts reach the library: a transposed or mislabelled matrix of the same size
        # would decode as garbage, so the shapes are checked here.
        r16, c16 = _up(rows, 16), _up(cols, 16)
        want = (r16, c16 // 2)
        if _shape_of(self.data) != want:
            raise ValueError(f"data is {list(_shape_of(self.data))}, an NVFP4 matrix of shape ({rows}, {cols}) "
                             f"has [{want[0]}][{want[1]}] bytes")
        sf = (_up(r16, 128), _up(c16 // 16, 4)) if layout == "swizzled128x4" else (r16, c16 // 16)
        got = _shape_of(self.scales)
        if got != sf and got != (sf[0] * sf[1],):
            raise ValueError(f"scales are {list(got)}, {layout} scales of an NVFP4 matrix of shape ({rows}, {cols}) "
                             f"are [{sf[0]}][{sf[1]}] (or {sf[0] * sf[1]} flat)")


def global_scale(x: Any, mode: str = "dynamic") -> float:
    """ComfyUI's global decode scale of a bf16 array.

    ``dynamic``: f32(bf16(amax / 2688)), what ComfyUI uses for activations and weights;
    ``f32``: amax / 2688 in fp32. NaN elements are skipped. A CUDA tensor is reduced on its GPU
    (on the current stream, which this waits for: the value comes back to the host) when the library
    has kernels for that GPU, else on the host.
    """
    _str(mode, "mode")
    if is_cuda(x) and _has_gpu_kernels(x.device):
        return _core.global_scale_device(on_device(x, x.device, "x"), mode, cuda_stream(x.device))
    xh, _ = to_host(x, "x")
    return _core.global_scale(xh, mode)


def _has_gpu_kernels(device: Any) -> bool:
    """Whether `device` (a CUDA torch.device) can run the library's kernels. The others (an A100, an
    RTX 4090, any GPU in a build without CUDA) fail with "no kernel image" or NotImplementedError:
    their tensors go through the host, as linear's and matmul's do when no backend runs there."""
    import torch

    return _core.kernels_cover(*torch.cuda.get_device_capability(device))


def _up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


def _swizzled(layout: str) -> bool:
    return layout in ("swizzled128x4", "swizzled", "128x4")


def quantize(
    x: Any,
    global_scale: Union[str, float, Any] = "dynamic",
    *,
    recipe: str = "comfy-cuda",
    nibbles: str = "hi_first",
    scale_layout: str = "swizzled128x4",
    pad: bool = False,
    device: str = "cpu",
) -> NVFP4Tensor:
    """Quantizes a bf16 matrix [rows][cols] exactly as ComfyUI does.

    recipe:       ``comfy-cuda`` (comfy-kitchen's CUDA kernel, what ComfyUI runs on NVIDIA GPUs),
                  ``comfy-eager-cuda`` (its PyTorch code on a CUDA tensor), ``comfy-eager-cpu``
                  (its PyTorch code on a CPU tensor)
    global_scale: ``dynamic`` (ComfyUI's f32(bf16(amax/2688))), ``f32`` (amax/2688), a number (>= 0,
                  not -0), or a one-element tensor (a float32 one on x's GPU is read there: see below)
    pad:          zero-pad rows and columns to multiples of 16 (else they must be multiples of 16)
    device:       ``cpu`` (exact emulation, any recipe) or ``gpu`` (the CUDA kernel, comfy-cuda only)

    Returns an NVFP4Tensor whose arrays are numpy, or torch tensors on x's device.
    Same bytes as ``nvfp4 quantize`` with the same options.

    A CUDA tensor with the comfy-cuda recipe is quantized on its GPU (the CUDA kernel, whatever
    ``device`` says: its bits are the CPU emulation's) into tensors torch allocates there, on the
    current stream; a ``dynamic``/``f32`` global scale waits for that stream (the scale is a Python
    float). A global scale given as a one-element float32 tensor on x's GPU (ComfyUI's per-tensor
    scale) is read there by the kernel, nothing waits, and the result keeps that tensor as its
    global_scale; its value is not checked (that would wait): outside [0, inf) the codes are the
    kernel's arithmetic on it, as ComfyUI's own kernel computes them. The eager recipes are CPU emulations: their CUDA input is copied to the host and back, as
    is any CUDA input on a GPU the library has no kernels for (the CPU emulation's bits are the same).
    """
    for v, name in ((recipe, "recipe"), (nibbles, "nibbles"), (scale_layout, "scale_layout"), (device, "device")):
        _str(v, name)
    pad = bool(pad)
    if is_cuda(x) and recipe in ("comfy-cuda", "cuda") and _has_gpu_kernels(x.device):
        return _quantize_device(x, global_scale, nibbles, scale_layout, pad)
    xh, origin = to_host(x, "x")
    if isinstance(global_scale, str):
        s = _core.global_scale(xh, global_scale)
    else:
        s = _quantizing_scale(global_scale, "global_scale")
    data, scales = _core.quantize(xh, s, recipe, nibbles, scale_layout, pad, device)
    return NVFP4Tensor(from_host(data, origin), from_host(scales, origin), s, (int(xh.shape[0]), int(xh.shape[1])),
                       nibbles, scale_layout)


def _quantize_device(x: Any, global_scale: Any, nibbles: str, scale_layout: str, pad: bool) -> NVFP4Tensor:
    import torch

    dev = x.device
    xd = on_device(x, dev, "x")
    if xd.dim() != 2:
        raise ValueError(f"x must be 2-D, got {xd.dim()}-D")
    stream = cuda_stream(dev)
    s_dev = None if isinstance(global_scale, str) else _device_scalar(global_scale, dev)
    if s_dev is not None:
        s = global_scale  # read by the kernel; kept as given
    elif isinstance(global_scale, str):
        s = _core.global_scale_device(xd, global_scale, stream)
    else:
        s = _quantizing_scale(global_scale, "global_scale")
    rows, cols = int(xd.shape[0]), int(xd.shape[1])
    r16, c16 = _up(rows, 16), _up(cols, 16)
    sshape = (_up(r16, 128), _up(c16 // 16, 4)) if _swizzled(scale_layout) else (r16, c16 // 16)
    data = torch.empty((r16, c16 // 2), dtype=torch.uint8, device=dev)
    scales = torch.empty(sshape, dtype=torch.uint8, device=dev)
    _core.quantize_device(xd, 0.0 if s_dev is not None else s, nibbles, scale_layout, pad, data, scales, stream,
                          global_scale_dev=s_dev)
    return NVFP4Tensor(data, scales, s, (rows, cols), nibbles, scale_layout)


def _quantizing_scale(v: Any, name: str, reaches: str = "the block scales") -> float:
    """A global scale given as a number, as scalar_f32 reads it; -0 is refused, as
    ``nvfp4 quantize --global-scale`` and a checkpoint's weight_scale_2 refuse it: it compares equal
    to 0, which the library takes (docs/numerics.md §7.3: finite and >= 0), but its sign reaches
    every block scale (0xFE where 0 writes 0x7E) of a quantization and, through alpha, the sign of
    linear's outputs."""
    s = scalar_f32(v, name)
    if s == 0 and math.copysign(1.0, s) < 0:
        raise ValueError(f"{name} must be >= 0 and not -0 (its sign would reach {reaches}), got {s}")
    return s


def _weight_global_scale(v: Any) -> float:
    """linear's weight_scale_2, refused at -0 in the words of the checkpoint reader."""
    return _quantizing_scale(v, "weight_scale_2", "alpha and the sign of every output")


def _device_scalar(v: Any, device: Any) -> Any:
    """v as a 0-d float32 tensor when it is a one-element float32 tensor on CUDA device `device` (a
    global scale the kernels can read where it is: ComfyUI keeps its scales so), else None."""
    if is_cuda(v) and v.device == device and v.numel() == 1 and str(v.dtype) == "torch.float32":
        return v.detach().reshape(())
    return None


def dequantize(q: NVFP4Tensor, recipe: str = "comfy-cuda") -> Any:
    """NVFP4 -> bf16 [rows][cols] with a ComfyUI recipe.

    ``comfy-cuda``: bf16(fmul_ftz(fmul_ftz(s, sf), v)) (comfy-kitchen's CUDA kernel);
    ``comfy-eager``: bf16(v * bf16(bf16(s) * sf)) (its PyTorch code).

    CUDA tensors with the comfy-cuda recipe and swizzled scales are dequantized on their GPU, on the
    current stream (rows or columns not multiples of 16: the [rows][cols] result is a copy made on
    the GPU); comfy-eager, linear scales or a GPU the library has no kernels for go through the host.
    A global scale that is a one-element float32 tensor on that GPU is read there by the kernel
    (nothing waits); one elsewhere is read to the host.
    """
    _nvfp4(q, "q")
    _str(recipe, "recipe")
    if (is_cuda(q.data) and recipe in ("comfy-cuda", "cuda") and _swizzled(q.scale_layout)
            and _has_gpu_kernels(q.data.device)):
        import torch

        dev = q.data.device
        s_dev = _device_scalar(q.global_scale, dev)
        s = 0.0 if s_dev is not None else scalar_f32(q.global_scale, "global_scale")
        rows, cols = (int(v) for v in q.shape)
        out = torch.empty((_up(rows, 16), _up(cols, 16)), dtype=torch.bfloat16, device=dev)
        _core.dequantize_device(on_device(q.data, dev, "data"), on_device(q.scales, dev, "scales"), rows, cols,
                                s, q.nibbles, out, cuda_stream(dev), global_scale_dev=s_dev)
        return out if tuple(out.shape) == (rows, cols) else out[:rows, :cols].contiguous()
    s = scalar_f32(q.global_scale, "global_scale")
    data, origin = to_host(q.data, "data")
    scales, _ = to_host(q.scales, "scales")
    rows, cols = (int(v) for v in q.shape)
    out = _core.dequantize(data, scales, rows, cols, s, q.nibbles, q.scale_layout, recipe)
    return from_host(np.ascontiguousarray(out[:rows, :cols]), origin, bf16=True)


def available_backends() -> list:
    """The GEMM backends of this machine, fastest first; the CPU oracle is always last."""
    return _core.available_backends()


def resolve_backend(backend: str = "auto", contract: str = "sequential") -> str:
    """The backend a name runs on here. ``auto``: the fastest exact GPU kernel of this machine that runs
    ``contract`` (sm90 runs the sequential contract only; the other kernels every one), else
    ``cpu-oracle``. Raises ValueError for an unknown name."""
    return _core.resolve_backend(_str(backend, "backend"), _str(contract, "contract"))


def _resolve_on(device: Any, backend: str, contract: str) -> str:
    # The library resolves "auto" for the calling thread's current GPU; a tensor on another GPU
    # (an H100 beside an RTX 50, say) must get the kernel of its own GPU, so resolve with it current.
    import torch

    with torch.cuda.device(device):
        return resolve_backend(backend, contract)


def _result(out: np.ndarray, raw: Optional[np.ndarray], lead: tuple, origin, return_raw: bool) -> Any:
    n = out.shape[1]
    out_t = from_host(out.reshape(*lead, n), origin, bf16=True)
    if not return_raw:
        return out_t
    return out_t, from_host(raw.reshape(*lead, n), origin)


def matmul(
    a: NVFP4Tensor,
    w: NVFP4Tensor,
    *,
    alpha: Optional[float] = None,
    bias: Any = None,
    backend: str = "auto",
    contract: str = "sequential",
    return_raw: bool = False,
) -> Any:
    """D = A · W^T for two NVFP4 matrices A [M][K] and W [N][K] with swizzled scales and the same
    nibble order: bf16 [M][N] = bf16(f32(alpha * acc) + bias), acc the block-scaled fp32 products
    under the reduction ``contract`` (see ``linear``). alpha defaults to f32(a.global_scale * w.global_scale).
    With return_raw, also the fp32 accumulators acc (no alpha, no bias). N is w.shape[0].

    A CUDA ``a.data`` whose backend resolves to sm90 (``auto`` on Hopper; the sequential contract
    only), sm120p-native (``auto`` on SM120/SM121), sm120p-emulated, sm120-native or sm120-emulated
    (any contract: split-K partials and their ordered merge on the device) runs on its GPU on the
    current stream: A, its scales, the bias and the outputs (allocated by torch) stay on the device (a hi_first A, or K not a
    multiple of 64, is repacked there into the kernels' lo_first rows; sm90 reads it through its
    activation pre-pass), nothing waits. W is prepacked for the kernel once per (W tensor, its version,
    scales, N, nibbles, backend), like ``linear``'s weight: on its GPU when W is a CUDA tensor (nothing
    through the host), on the host when it is a CPU array. Without alpha, two global scales given as
    one-element float32 tensors on A's GPU (comfy-kitchen's) stay there: alpha = f32(s_a * s_w) is
    formed on the GPU and nothing waits; their values are not checked (that would wait), so a
    non-finite alpha is applied as ComfyUI's own GEMM applies it, where a host alpha is refused. Any
    other global scale or alpha given as a CUDA tensor is read to the host (4 bytes each, waiting for
    the stream; see ``host_copies``). Other
    backends (gpu-model, cpu-oracle), and a GPU the library has no kernels for, take CUDA inputs
    through the host. Under ``torch.inference_mode()`` see ``linear`` on the prepared weight."""
    _str(backend, "backend")
    _str(contract, "contract")
    _nvfp4(a, "a")
    _nvfp4(w, "w")
    return_raw = bool(return_raw)
    if a.nibbles != w.nibbles:
        raise ValueError(f"a has {a.nibbles} nibbles, w has {w.nibbles}: convert one first")
    for name, t in (("a", a), ("w", w)):
        if t.scale_layout not in ("swizzled128x4", "swizzled", "128x4"):
            raise ValueError(f"{name} must have swizzled128x4 scales, got {t.scale_layout}")
    if int(a.shape[1]) != int(w.shape[1]):
        raise ValueError(f"K mismatch: a is {tuple(a.shape)}, w is {tuple(w.shape)}")
    if is_cuda(a.data):
        name = _resolve_on(a.data.device, backend, contract)
        if name in _DEVICE_BACKENDS and _has_gpu_kernels(a.data.device):
            return _matmul_device(a, w, alpha, bias, name, return_raw, contract)
    ad, origin = to_host(a.data, "a.data")
    asf, _ = to_host(a.scales, "a.scales")
    wd, _ = to_host(w.data, "w.data")
    wsf, _ = to_host(w.scales, "w.scales")
    b = None if bias is None else to_host(bias, "bias")[0]
    al = _host_alpha(a, w, alpha)
    out, raw = _core.gemm(ad, asf, wd, wsf, int(a.shape[0]), int(w.shape[0]), int(a.shape[1]), al, b, a.nibbles,
                          backend, contract, return_raw)
    return _result(out, raw, (int(a.shape[0]),), origin, return_raw)


def linear(
    x: Any,
    weight: Any,
    weight_scale: Any,
    weight_scale_2: Any,
    bias: Any = None,
    input_scale: Any = None,
    backend: str = "auto",
    contract: str = "sequential",
    *,
    out_features: Optional[int] = None,
    return_raw: bool = False,
) -> Any:
    """ComfyUI's NVFP4 linear layer, y = x · W^T + bias, with a GB10's bits.

    x:              bf16 activation [..., K]
    weight:         uint8 [roundup(N,16)][roundup(K,16)/2], hi_first codes (the checkpoint's ``weight``)
    weight_scale:   UE4M3 [roundup(N,128)][roundup(K/16,4)] swizzled (``weight_scale``; uint8 or float8_e4m3fn)
    weight_scale_2: the weight's fp32 global scale (``weight_scale_2``; finite and >= 0, not -0)
    out_features:   N; default: the bias length when there is a bias, else the weight's rows. A
                    checkpoint stores N padded to 16, so a layer with N % 16 != 0 and no bias needs it.
                    It must satisfy rows - 16 < N <= rows and equal the bias length (ValueError otherwise).
    bias:           optional bf16 [N]
    input_scale:    the activation's static fp32 global scale (a number or a one-element tensor; not
                    -0); None = ComfyUI's dynamic f32(bf16(amax(x)/2688))
    backend:        ``auto`` (the fastest exact backend here), ``cpu-oracle``, or a GPU kernel name
                    (see ``available_backends()``)
    contract:       the K reduction: ``sequential`` (what the GB10's own MMA loop does) or
                    ``split_k:S[:grain=G][:cublas|cutlass][:fp32|bf16_partials|bf16_serial]`` (what
                    cuBLASLt may plan for a shape, e.g. FC2; every backend but sm90)

    x is quantized with the comfy-cuda recipe; alpha = f32(s_x * weight_scale_2), which two finite
    scales can overflow: refused (ValueError) unless finite wherever the host has both scales (a
    static input_scale given as a number, and the host path's dynamic s_x), as matmul refuses it.
    Returns bf16 [..., N] (uint16 patterns in numpy, torch.bfloat16 in torch); with return_raw,
    (bf16, fp32 accumulators without alpha).

    A CUDA x whose backend resolves to sm90 (``auto`` on Hopper; the sequential contract only),
    sm120p-native (``auto`` on SM120/SM121), sm120p-emulated, sm120-native or sm120-emulated (any
    contract; a static input_scale: sm90 only) runs on x's GPU on the current stream, zero-copy: x, bias and the
    outputs (allocated by torch) stay on the device, s_x is formed on the GPU, nothing waits. The
    weight is prepacked for the kernel once per (weight tensor, its version, weight_scale,
    weight_scale_2, N, backend) and kept while the weight tensor lives: a CUDA weight is prepacked on
    its GPU by the library's prepack kernel (that first call waits for the stream once; nothing goes
    through the host), a CPU weight on the host and uploaded. An input_scale given as a one-element
    float32 tensor on x's GPU (ComfyUI's) stays there on sm90: the pre-pass reads it, quantizes x with
    it and forms alpha = f32(s_in * weight_scale_2) on the GPU, nothing waits; its value is not checked
    (that would wait): a finite one >= 0 gives the cpu-oracle's bits for that value (0 quantizes with
    0, where the device path refuses 0 as a number), another the comfy-cuda arithmetic on it. Any
    other input_scale given as a CUDA tensor (another dtype or GPU, or an SM120 backend, which takes
    x through the host with a static scale) and weight_scale_2 (when the weight is prepacked) are
    read to the host (4 bytes, waiting for the stream; see ``host_copies``). Other backends
    (gpu-model, cpu-oracle), and a GPU the library has no kernels for, take CUDA inputs through the
    host.
    Tensors made under ``torch.inference_mode()`` (ComfyUI loads and runs models so) have no version
    counter: their prepared weight is keyed without it, so an in-place update of such a weight
    (or of its weight_scale / weight_scale_2 tensors) is not seen: call ``clear_prepared(weight)``
    after it (which also frees the prepared weight's GPU memory sooner), or pass a new tensor.

    An empty batch (x of shape [..., 0, ..., K]) gives an empty [..., N] result (and raw) without
    running anything; a host x is checked with the weight (K, dtypes, bytes, scales) as any other is.
    """
    _str(backend, "backend")
    _str(contract, "contract")
    return_raw = bool(return_raw)
    out_features = None if out_features is None else _int(out_features, "out_features")
    ws, wss = _shape_of(weight), _shape_of(weight_scale)
    if len(ws) == 2:  # the library sees weight_scale's bytes only (see NVFP4Tensor)
        cp = _up(ws[1] // 8, 4)  # a row of K16/2 code bytes has K16/16 scales
        if len(wss) > 2 or (len(wss) == 2 and wss[1] != cp):
            raise ValueError(f"weight_scale is {list(wss)}, the swizzled scales of a weight of {ws[1]} bytes per row "
                             f"are [roundup(N,128)][{cp}] (or flat)")
    if is_cuda(x):
        if 0 in _shape_of(x)[:-1]:
            return _empty_linear(x, weight, bias, out_features, return_raw)
        name = _resolve_on(x.device, backend, contract)
        if name in _DEVICE_BACKENDS and (input_scale is None or name == "sm90") and _has_gpu_kernels(x.device):
            return _linear_device(x, weight, weight_scale, weight_scale_2, bias, input_scale, name, out_features,
                                  return_raw, contract)
    xh, origin = to_host(x, "x")
    if len(xh.shape) < 1:
        raise ValueError("x must have at least one dimension (K)")
    lead = tuple(int(d) for d in xh.shape[:-1])
    # Not reshape(-1, K): numpy cannot infer -1 for an empty x, and the library names a K of 0.
    x2 = xh.reshape(math.prod(lead), int(xh.shape[-1]))
    wh, _ = to_host(weight, "weight")
    wsh, _ = to_host(weight_scale, "weight_scale")
    s_w = _weight_global_scale(weight_scale_2)
    b = None if bias is None else to_host(bias, "bias")[0]
    s_in = None if input_scale is None else _quantizing_scale(input_scale, "input_scale")
    if s_in is not None:  # as on the device path; _core.linear checks a dynamic s_x's alpha
        _alpha_of(s_in, s_w, "input_scale", "weight_scale_2")
    out, raw = _core.linear(x2, wh, wsh, s_w, b, s_in, backend, contract, return_raw, out_features)
    return _result(out, raw, lead, origin, return_raw)


def _empty_linear(x, weight, bias, out_features, return_raw):
    # A CUDA x: the device entry points take no empty matrix, and the host path would copy the
    # weight to the host for nothing; the result's shape alone is checked and made, in x's kind.
    ws = _shape_of(weight)
    if len(ws) != 2:
        raise ValueError(f"weight must be 2-D, got {len(ws)}-D")
    bias_len = None if bias is None else int(np.prod(_shape_of(bias)))
    shape = (*_shape_of(x)[:-1], int(_core.out_features(ws[0], bias_len, out_features)))
    if is_torch(x):
        import torch

        out = torch.empty(shape, dtype=torch.bfloat16, device=x.device)
        raw = torch.empty(shape, dtype=torch.float32, device=x.device)
    else:
        out, raw = np.empty(shape, np.uint16), np.empty(shape, np.float32)
    return (out, raw) if return_raw else out


# Backends with a device-pointer path in the library (nvfp4::linear_gpu_device).
_DEVICE_BACKENDS = ("sm90", "sm120p-native", "sm120p-emulated", "sm120-native", "sm120-emulated")

# Prepacked weights: id(weight tensor) -> (key, _core.PreparedWeight, the weakref.finalize that drops
# the entry when its weight tensor is collected). A key that differs (an in-place update bumps the
# tensor's _version, a new weight_scale or weight_scale_2 tensor, another N or backend) prepares
# again. An inference tensor has no _version (reading it raises): its key has none, so its in-place
# updates go unseen until clear_prepared drops its entry. An entry keeps its tensor's one finalizer
# while it lives, and clear_prepared detaches it: re-preparing after a clear would otherwise stack
# a finalizer per clear on a long-lived tensor.
_prepared: dict = {}


def clear_prepared(weight: Any = None) -> int:
    """Drops prepacked weights from the cache ``linear`` and ``matmul`` keep on the device path:
    ``weight``'s (the tensor given to ``linear`` as its weight, or ``matmul``'s ``w.data``), or every
    one when None. Returns how many were dropped (0 for a weight that has none, a numpy array
    included: only torch tensors are cached). The next call prepares the weight again from its
    current bytes; needed after an in-place update of a tensor made under
    ``torch.inference_mode()``, which has no version counter to tell the change by, and a way to
    free the prepacked copies' GPU memory (freeing one waits for its GPU to be idle, so work still
    queued on it is safe). TypeError for anything else than None, a torch tensor or a numpy array."""
    if weight is None:
        dropped = list(_prepared.values())
        _prepared.clear()
    elif isinstance(weight, np.ndarray) or _is_tensor(weight):
        hit = _prepared.pop(id(weight), None)
        dropped = [] if hit is None else [hit]
    else:
        raise TypeError(f"weight must be a torch tensor, a numpy array or None, got {type(weight).__name__}")
    for entry in dropped:
        entry[2].detach()
    return len(dropped)


def _is_tensor(a: Any) -> bool:
    # No torch imported means a is no tensor; ComfyUI's subclasses live outside torch's modules.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)


def _identity(t: Any, scale: Optional[str] = None) -> tuple:
    """A cache key's part for t; `scale` names a global scale, keyed by its value (read as it is
    everywhere, so a str is refused here too, not parsed)."""
    if is_torch(t):
        if t.is_inference():
            return ("torch", id(t), t.data_ptr())
        return ("torch", id(t), t.data_ptr(), t._version)
    return ("value", scalar_f32(t, scale)) if scale is not None else ("array", id(t))


def _prepared_weight(weight, weight_scale, weight_scale_2, k, bias_len, out_features, backend, device,
                     nibbles="hi_first"):
    cacheable = is_torch(weight)  # numpy arrays have no version to tell a changed weight by
    key = (_identity(weight), _identity(weight_scale), _identity(weight_scale_2, "weight_scale_2"), k, bias_len,
           out_features, backend, device.index, nibbles)
    if cacheable:
        hit = _prepared.get(id(weight))
        if hit is not None and hit[0] == key:
            return hit[1]
    s_w = _weight_global_scale(weight_scale_2)
    if is_cuda(weight) and weight.device == device:
        # Prepacked on the GPU from the weight's own memory (the library's prepack kernel).
        p = _core.prepare_weight_device(on_device(weight, device, "weight"), on_device(weight_scale, device, "weight_scale"),
                                        s_w, k, bias_len, out_features, backend, nibbles, cuda_stream(device))
    else:
        if nibbles != "hi_first":
            raise ValueError(f"a host weight is prepacked from hi_first codes; got {nibbles}")
        wh, _ = to_host(weight, "weight")  # a CPU weight, or one on another GPU
        wsh, _ = to_host(weight_scale, "weight_scale")
        p = _core.prepare_weight(wh, wsh, s_w, k, bias_len, out_features, backend,
                                 device.index if device.index is not None else -1)
    if cacheable:
        hit = _prepared.get(id(weight))
        done = hit[2] if hit is not None else weakref.finalize(weight, _prepared.pop, id(weight), None)
        _prepared[id(weight)] = (key, p, done)
    return p


def _linear_device(x, weight, weight_scale, weight_scale_2, bias, input_scale, backend, out_features, return_raw,
                   contract="sequential"):
    import torch

    dev = x.device
    if x.dim() < 1:
        raise ValueError("x must have at least one dimension (K)")
    lead = tuple(int(d) for d in x.shape[:-1])
    k = int(x.shape[-1])
    bias_len = None if bias is None else int(bias.numel() if is_torch(bias) else np.asarray(bias).size)
    p = _prepared_weight(weight, weight_scale, weight_scale_2, k, bias_len, out_features, backend, dev)
    x2 = on_device(x.reshape(-1, k), dev, "x")
    b = None if bias is None else on_device(bias, dev, "bias").reshape(-1)
    # A static input scale that is a float32 CUDA scalar on x's GPU (ComfyUI's) is read there by the
    # sm90 pre-pass; any other form is read here (a CUDA one waits for the stream).
    s_dev = None if input_scale is None else _device_scalar(input_scale, dev)
    s_in = None if input_scale is None or s_dev is not None else _quantizing_scale(input_scale, "input_scale")
    if s_in is not None:  # the pre-pass would form it on the GPU and apply it unchecked
        _alpha_of(s_in, p.s_w, "input_scale", "weight_scale_2")
    m, n = int(x2.shape[0]), int(p.n)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=dev)
    raw = torch.empty((m, n), dtype=torch.float32, device=dev) if return_raw else None
    _core.linear_device(p, x2, b, s_in, out, raw, cuda_stream(dev), contract, input_scale_dev=s_dev)
    out = out.reshape(*lead, n)
    return (out, raw.reshape(*lead, n)) if return_raw else out


def _host_alpha(a: NVFP4Tensor, w: NVFP4Tensor, alpha: Any) -> float:
    """matmul's alpha on the host: the given one, or f32(a.global_scale * w.global_scale), each
    scale read once. Refused unless finite, as matmul_gpu_device refuses it: the oracle would apply
    it, every output NaN or Inf."""
    if alpha is not None:
        al = scalar_f32(alpha, "alpha")
        if not math.isfinite(al):
            raise ValueError(f"alpha must be finite, got {al}")
        return al
    s_a, s_w = scalar_f32(a.global_scale, "a.global_scale"), scalar_f32(w.global_scale, "w.global_scale")
    return _alpha_of(s_a, s_w, "a.global_scale", "w.global_scale")


def _alpha_of(s_1: float, s_2: float, name_1: str, name_2: str) -> float:
    """f32(s_1 * s_2), the alpha of two host scales, refused unless finite: two finite scales can
    overflow it, and the GEMM would apply it, every output NaN or Inf. The library forms and words
    it (nvfp4::finite_alpha), as the CLI and the checkpoint reader do."""
    return _core.finite_alpha(s_1, s_2, name_1, name_2)


def _matmul_device(a, w, alpha, bias, backend, return_raw, contract="sequential"):
    import torch

    dev = a.data.device
    m, k, n = int(a.shape[0]), int(a.shape[1]), int(w.shape[0])
    if not is_cuda(w.data) and w.nibbles != "hi_first":
        w = NVFP4Tensor(*_lo_to_hi(w))
    p = _prepared_weight(w.data, w.scales, w.global_scale, k, None, n, backend, dev, w.nibbles)
    ad = on_device(a.data, dev, "a.data")
    asf = on_device(a.scales, dev, "a.scales")
    b = None if bias is None else on_device(bias, dev, "bias").reshape(-1)
    # Both global scales on this GPU as float32 tensors (comfy-kitchen's): alpha is formed there.
    sa = sw = None
    if alpha is None:
        sa, sw = _device_scalar(a.global_scale, dev), _device_scalar(w.global_scale, dev)
        if sa is None or sw is None:
            sa = sw = None
    al = 1.0 if sa is not None else _host_alpha(a, w, alpha)  # 1.0: not read
    out = torch.empty((m, n), dtype=torch.bfloat16, device=dev)
    raw = torch.empty((m, n), dtype=torch.float32, device=dev) if return_raw else None
    _core.matmul_device(p, ad, asf, m, k, a.nibbles, al, b, out, raw, cuda_stream(dev), contract, scale_a=sa, scale_w=sw)
    return (out, raw) if return_raw else out


def _lo_to_hi(w: NVFP4Tensor) -> tuple:
    """A host lo_first weight's fields with hi_first codes (the host prepack reads hi_first)."""
    d, _ = to_host(w.data, "w.data")
    d = np.asarray(d)
    d = ((d << 4) | (d >> 4)).astype(np.uint8)
    return d, w.scales, w.global_scale, w.shape, "hi_first", w.scale_layout


# ---------------------------------------------------------------------------------------------
# validate / explain: the CLI's options as keywords, the CLI's JSON as a dict.

# The CLI's options without a value; True/False is for these alone.
_FLAGS = ("quiet", "plant_raw")
_INTEGERS = {"rows": "an integer", "seed": "an integer", "sample": "an integer", "splits": "a list of integers",
             "grains": "a list of integers"}


def _argv(command: str, options: dict) -> list:
    argv = ["nvfp4", command]
    for key, value in options.items():
        # A bool elsewhere would be a flag without its value (rows=True ate the next option) or
        # silently the default (rows=False).
        if isinstance(value, bool) and key not in _FLAGS:
            raise TypeError(f"{key} must be {_INTEGERS.get(key, 'a string')}, got {value}")
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            argv += [flag, ",".join(str(v) for v in value)]
        else:
            argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return argv


def validate(
    *,
    linear: Union[str, Sequence[str], None] = None,
    shapes: Union[str, Sequence[str], None] = None,
    rows: Optional[int] = None,
    seed: Optional[int] = None,
    candidate: Union[str, Sequence[str], None] = None,
    reference: Optional[str] = None,
    sensitivity: Optional[str] = None,
    sample: Optional[int] = None,
    inputs: Union[str, os.PathLike, None] = None,
    out: Union[str, os.PathLike, None] = None,
    progress: bool = False,
) -> dict:
    """``nvfp4 validate``: candidate backends against a reference GEMM on the MiniMax H3 linears
    (or ``shapes``), returning the summary report (the CLI's summary.json) as a dict; ``status``
    starts with PASS or FAIL. Options are the CLI's (None = its default). Per-linear reports are
    written to ``out`` (default: a temporary directory, removed afterwards)."""
    opts = dict(linear=linear, shapes=shapes, rows=rows, seed=seed, candidate=candidate, reference=reference,
                sensitivity=sensitivity, sample=sample, inputs=inputs, quiet=not progress)
    if out is not None:
        return json.loads(_core.validate(_argv("validate", {**opts, "out": out})))
    with tempfile.TemporaryDirectory(prefix="nvfp4-validate-") as d:
        return json.loads(_core.validate(_argv("validate", {**opts, "out": d})))


def _as_numpy(a: Any) -> np.ndarray:
    h, _ = to_host(a, "reference")
    if is_torch(h):
        import torch

        return h.view(torch.int16).numpy().view(np.uint16) if h.dtype == torch.bfloat16 else h.numpy()
    return h


def explain(
    linear: str,
    *,
    reference: Any = None,
    plant: Optional[str] = None,
    dtype: Optional[str] = None,
    rows: Optional[int] = None,
    seed: Optional[int] = None,
    inputs: Union[str, os.PathLike, None] = None,
    plant_epilogue: Optional[str] = None,
    plant_raw: bool = False,
    save_reference: Union[str, os.PathLike, None] = None,
    splits: Optional[Sequence[int]] = None,
    grains: Optional[Sequence[int]] = None,
    sample: Optional[int] = None,
) -> dict:
    """``nvfp4 explain``: which reduction contract reproduces a reference output bit for bit.

    reference: a file (as for the CLI) or an array, bf16 [M][N] (layer output) or float32 (raw
    accumulators), of the output's shape exactly (ValueError otherwise: a transposed or flat dump
    would be read as [M][N]); or plant a contract instead (a self-test). Returns the CLI's ``--json``
    report: ``exact`` lists the contracts that reproduce it, ``verdict`` says it in words."""
    opts = dict(linear=linear, rows=rows, seed=seed, inputs=inputs, dtype=dtype, plant=plant,
                plant_epilogue=plant_epilogue, plant_raw=plant_raw, save_reference=save_reference,
                splits=splits, grains=grains, sample=sample)
    if reference is None or isinstance(reference, (str, os.PathLike)):
        return json.loads(_core.explain(_argv("explain", {**opts, "reference": reference})))
    ref = _as_numpy(reference)
    # The dtype is decided here, as the CLI decides a file's: the file this array is saved to would
    # be refused in the .npy reader's words (unsupported '<f8', use u1 or i4), which explain does
    # not take either. uint16 and float32 (native order, see to_host) are saved as the u2 and f4 the
    # CLI takes. The shape is the CLI's to check: M and N come from the linear and its inputs.
    if ref.dtype not in (np.uint16, np.float32):
        raise TypeError(f"reference must be bf16 (uint16 bit patterns) or float32, got {ref.dtype}")
    with tempfile.TemporaryDirectory(prefix="nvfp4-explain-") as d:
        path = os.path.join(d, "reference.npy")
        np.save(path, ref)
        try:
            return json.loads(_core.explain(_argv("explain", {**opts, "reference": path})))
        except ValueError as e:  # the library names the file, which is ours, not the caller's
            raise ValueError(str(e).replace(f"'{path}'", "reference")) from None
