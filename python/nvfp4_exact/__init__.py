"""nvfp4_exact: NVFP4 linear layers with the same bits on every machine.

NVFP4 is E2M1 values with a UE4M3 scale per 16 elements and an fp32 global scale. This package is
the nvfp4-exact C++/CUDA library: ComfyUI's quantization recipes bit for bit, dequantization, and the
GEMM of an NVFP4 linear layer with the bits a GB10 (SM121) computes, on the CPU (the oracle) or on any
GPU the library has an exact kernel for.

Arrays: numpy arrays on the CPU, torch tensors on the CPU or a GPU (results come back in the same
kind, on the same device). bf16 values are ``torch.bfloat16`` tensors or ``uint16`` numpy arrays of
bit patterns; packed codes and block scales are ``uint8`` (torch ``float8_e4m3fn`` scales are read as
their bytes).

Errors raise ``ValueError`` (bad input), ``OSError`` (files), ``NotImplementedError`` (unsupported on
this machine or build) or ``RuntimeError`` (CUDA), with the library's one-line message.

``python -m nvfp4_exact`` is the ``nvfp4`` command line; ``nvfp4_exact.comfy.install()`` makes this
library a comfy-kitchen backend.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _core
from ._arrays import from_host, is_torch, scalar_f32, to_host

__version__: str = _core.__version__

__all__ = [
    "NVFP4Tensor",
    "available_backends",
    "dequantize",
    "explain",
    "global_scale",
    "linear",
    "matmul",
    "quantize",
    "resolve_backend",
    "validate",
]

RECIPES = ("comfy-cuda", "comfy-eager-cuda", "comfy-eager-cpu")
NIBBLE_ORDERS = ("hi_first", "lo_first")
SCALE_LAYOUTS = ("swizzled128x4", "linear")


@dataclass(frozen=True)
class NVFP4Tensor:
    """An NVFP4 matrix of logical shape ``shape`` = (rows, cols).

    data:         uint8 [rows16][cols16 / 2], two E2M1 codes a byte in ``nibbles`` order
                  (``hi_first``: ComfyUI / comfy-kitchen; ``lo_first``: PTX, cuBLAS, CUTLASS)
    scales:       uint8 UE4M3 block scales, ``swizzled128x4`` ([roundup(rows16,128)][roundup(cols16/16,4)],
                  cuBLAS / comfy-kitchen) or ``linear`` ([rows16][cols16/16])
    global_scale: the fp32 decode scale: value = e2m1 * ue4m3 * global_scale

    rows16 and cols16 are rows and cols rounded up to 16. A ComfyUI checkpoint layer is
    ``NVFP4Tensor(weight, weight_scale, float(weight_scale_2), (N, K))``.
    """

    data: Any
    scales: Any
    global_scale: float
    shape: tuple
    nibbles: str = "hi_first"
    scale_layout: str = "swizzled128x4"


def global_scale(x: Any, mode: str = "dynamic") -> float:
    """ComfyUI's global decode scale of a bf16 array.

    ``dynamic``: f32(bf16(amax / 2688)), what ComfyUI uses for activations and weights;
    ``f32``: amax / 2688 in fp32. NaN elements are skipped.
    """
    xh, _ = to_host(x, "x")
    return _core.global_scale(xh, mode)


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
    global_scale: ``dynamic`` (ComfyUI's f32(bf16(amax/2688))), ``f32`` (amax/2688) or a number
    pad:          zero-pad rows and columns to multiples of 16 (else they must be multiples of 16)
    device:       ``cpu`` (exact emulation, any recipe) or ``gpu`` (the CUDA kernel, comfy-cuda only)

    Returns an NVFP4Tensor whose arrays are numpy, or torch tensors on x's device.
    Same bytes as ``nvfp4 quantize`` with the same options.
    """
    xh, origin = to_host(x, "x")
    s = _core.global_scale(xh, global_scale) if isinstance(global_scale, str) else scalar_f32(global_scale, "global_scale")
    data, scales = _core.quantize(xh, s, recipe, nibbles, scale_layout, pad, device)
    return NVFP4Tensor(from_host(data, origin), from_host(scales, origin), s, (int(xh.shape[0]), int(xh.shape[1])),
                       nibbles, scale_layout)


def dequantize(q: NVFP4Tensor, recipe: str = "comfy-cuda") -> Any:
    """NVFP4 -> bf16 [rows][cols] with a ComfyUI recipe.

    ``comfy-cuda``: bf16(fmul_ftz(fmul_ftz(s, sf), v)) (comfy-kitchen's CUDA kernel);
    ``comfy-eager``: bf16(v * bf16(bf16(s) * sf)) (its PyTorch code).
    """
    data, origin = to_host(q.data, "data")
    scales, _ = to_host(q.scales, "scales")
    rows, cols = (int(v) for v in q.shape)
    out = _core.dequantize(data, scales, rows, cols, q.global_scale, q.nibbles, q.scale_layout, recipe)
    return from_host(np.ascontiguousarray(out[:rows, :cols]), origin, bf16=True)


def available_backends() -> list:
    """The GEMM backends of this machine, fastest first; the CPU oracle is always last."""
    return _core.available_backends()


def resolve_backend(backend: str = "auto", contract: str = "sequential") -> str:
    """The backend a name runs on here. ``auto``: the fastest exact GPU kernel of this machine for the
    sequential contract, else ``cpu-oracle``. Raises ValueError for an unknown name."""
    return _core.resolve_backend(backend, contract)


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
    With return_raw, also the fp32 accumulators acc (no alpha, no bias)."""
    if a.nibbles != w.nibbles:
        raise ValueError(f"a has {a.nibbles} nibbles, w has {w.nibbles}: convert one first")
    for name, t in (("a", a), ("w", w)):
        if t.scale_layout not in ("swizzled128x4", "swizzled", "128x4"):
            raise ValueError(f"{name} must have swizzled128x4 scales, got {t.scale_layout}")
    if int(a.shape[1]) != int(w.shape[1]):
        raise ValueError(f"K mismatch: a is {tuple(a.shape)}, w is {tuple(w.shape)}")
    ad, origin = to_host(a.data, "a.data")
    asf, _ = to_host(a.scales, "a.scales")
    wd, _ = to_host(w.data, "w.data")
    wsf, _ = to_host(w.scales, "w.scales")
    b = None if bias is None else to_host(bias, "bias")[0]
    al = float(np.float32(a.global_scale) * np.float32(w.global_scale)) if alpha is None else scalar_f32(alpha, "alpha")
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
    return_raw: bool = False,
) -> Any:
    """ComfyUI's NVFP4 linear layer, y = x · W^T + bias, with a GB10's bits.

    x:              bf16 activation [..., K]
    weight:         uint8 [N][roundup(K,16)/2], hi_first codes (the checkpoint's ``weight``)
    weight_scale:   UE4M3 [roundup(N,128)][roundup(K/16,4)] swizzled (``weight_scale``; uint8 or float8_e4m3fn)
    weight_scale_2: the weight's fp32 global scale (``weight_scale_2``)
    bias:           optional bf16 [N]
    input_scale:    the activation's static fp32 global scale; None = ComfyUI's dynamic
                    f32(bf16(amax(x)/2688))
    backend:        ``auto`` (the fastest exact backend here), ``cpu-oracle``, or a GPU kernel name
                    (see ``available_backends()``)
    contract:       the K reduction: ``sequential`` (what the GB10 does) or
                    ``split_k:S[:grain=G][:cublas|cutlass][:fp32|bf16_partials|bf16_serial]`` (cpu-oracle only)

    x is quantized with the comfy-cuda recipe; alpha = f32(s_x * weight_scale_2).
    Returns bf16 [..., N] (uint16 patterns in numpy, torch.bfloat16 in torch); with return_raw,
    (bf16, fp32 accumulators without alpha).
    """
    xh, origin = to_host(x, "x")
    if len(xh.shape) < 1:
        raise ValueError("x must have at least one dimension (K)")
    lead = tuple(int(d) for d in xh.shape[:-1])
    x2 = xh.reshape(-1, int(xh.shape[-1]))
    wh, _ = to_host(weight, "weight")
    wsh, _ = to_host(weight_scale, "weight_scale")
    s_w = scalar_f32(weight_scale_2, "weight_scale_2")
    b = None if bias is None else to_host(bias, "bias")[0]
    s_in = None if input_scale is None else scalar_f32(input_scale, "input_scale")
    out, raw = _core.linear(x2, wh, wsh, s_w, b, s_in, backend, contract, return_raw)
    return _result(out, raw, lead, origin, return_raw)


# ---------------------------------------------------------------------------------------------
# validate / explain: the CLI's options as keywords, the CLI's JSON as a dict.

def _argv(command: str, options: dict) -> list:
    argv = ["nvfp4", command]
    for key, value in options.items():
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
    accumulators); or plant a contract instead (a self-test). Returns the CLI's ``--json`` report:
    ``exact`` lists the contracts that reproduce it, ``verdict`` says it in words."""
    opts = dict(linear=linear, rows=rows, seed=seed, inputs=inputs, dtype=dtype, plant=plant,
                plant_epilogue=plant_epilogue, plant_raw=plant_raw, save_reference=save_reference,
                splits=splits, grains=grains, sample=sample)
    if reference is None or isinstance(reference, (str, os.PathLike)):
        return json.loads(_core.explain(_argv("explain", {**opts, "reference": reference})))
    with tempfile.TemporaryDirectory(prefix="nvfp4-explain-") as d:
        path = os.path.join(d, "reference.npy")
        np.save(path, _as_numpy(reference))
        return json.loads(_core.explain(_argv("explain", {**opts, "reference": path})))
