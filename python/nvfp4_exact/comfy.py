"""nvfp4_exact as a comfy-kitchen backend: ComfyUI's NVFP4 layers with a GB10's bits on any machine.

    import nvfp4_exact.comfy
    nvfp4_exact.comfy.install()          # ahead of comfy-kitchen's own backends

registers the backend ``nvfp4_exact`` in comfy-kitchen's registry (written against comfy-kitchen
0.2.40) with its three NVFP4 functions, same signatures and layouts as comfy-kitchen's:

  quantize_nvfp4(x, per_tensor_scale, epsilon=0.0, pad_16x=False, hi_first=True)
      -> (uint8 [R16][C16/2], float8_e4m3fn swizzled block scales); the comfy-cuda recipe
  dequantize_nvfp4(qx, per_tensor_scale, block_scales, output_type=torch.bfloat16, hi_first=True)
      -> bf16; the comfy-cuda recipe
  scaled_mm_nvfp4(a, b, tensor_scale_a, tensor_scale_b, block_scale_a, block_scale_b, bias=None,
                  out_dtype=None, alpha=None)
      -> bf16 (M, N) = bf16(f32(alpha * a·b^T) + bias), sequential K (the GB10's contract)

Each is offered for bf16 data on CPU and CUDA tensors (other dtypes, a nonzero epsilon, fp32 bias
fall through to comfy-kitchen's other backends). The GEMM runs on the fastest exact backend of the
machine (``nvfp4_exact.resolve_backend()``), else the CPU oracle.

On CUDA tensors all three run on the GPU, on the current stream. ``scaled_mm_nvfp4`` goes through
``nvfp4_exact.matmul``'s device path where the backend has one (sm90 on Hopper, sm120p-native on
SM120/SM121, the emulated SM120 kernels): packed a, its block scales and the output stay on the device, the weight b is
prepacked once on its GPU (kept while the b tensor lives). The global scales, which comfy-kitchen
passes as one-element float32 CUDA tensors, stay there: the kernels of ``quantize_nvfp4`` and
``dequantize_nvfp4`` read their scale and ``scaled_mm_nvfp4``'s alpha = f32(s_a * s_b) is formed on the GPU, so no call waits for the
stream (the first call on a weight prepacks it and waits once). An explicit alpha, or a scale of
another dtype or on another GPU than the data, is read to the host (4 bytes, waiting for the
stream; in scaled_mm_nvfp4 both scales are then read). Other backends (gpu-model,
cpu-oracle) take the operands through the host.

comfy-kitchen's ``TensorCoreNVFP4Layout.supports_fast_matmul()`` (what callers such as ComfyUI ask
before taking the quantized-matmul path) is True only on SM >= 10.0; while this backend is installed
it is True on every device, since the backend computes that path's bits anywhere.
"""

from __future__ import annotations

import sys

from . import NVFP4Tensor, dequantize, matmul, quantize, resolve_backend
from ._arrays import is_cuda, scalar_f32

NAME = "nvfp4_exact"

_state = {"installed": False, "backend": "auto"}
#: How many calls each function served since install(): a way to see the backend is in the path.
calls = {"quantize_nvfp4": 0, "dequantize_nvfp4": 0, "scaled_mm_nvfp4": 0}


def _comfy_kitchen():
    try:
        import comfy_kitchen  # noqa: F401
        from comfy_kitchen import constraints, registry
        from comfy_kitchen.tensor import nvfp4
    except ImportError as e:
        raise ImportError(f"nvfp4_exact.comfy needs comfy-kitchen (pip install comfy-kitchen): {e}") from None
    # comfy_kitchen/__init__.py re-exports the BackendRegistry instance under the submodule's name,
    # so `comfy_kitchen.registry` is already the registry object.
    reg = registry if hasattr(registry, "register") else registry.registry
    return reg, constraints, nvfp4.TensorCoreNVFP4Layout


# ---------------------------------------------------------------------------------------------
# The backend's functions (comfy-kitchen calls them with keywords).

def _scale(v, name: str):
    """A global scale as the library takes it: comfy-kitchen's one-element CUDA tensor as it is (the
    device paths read it on the GPU, so nothing waits for the stream; the host paths read it), any
    other value as one float32."""
    if is_cuda(v) and v.numel() == 1:
        return v
    return scalar_f32(v, name)


def quantize_nvfp4(x, per_tensor_scale, epsilon: float = 0.0, pad_16x: bool = False, hi_first: bool = True):
    import torch

    if epsilon != 0.0:
        raise ValueError(f"nvfp4_exact implements epsilon = 0 only, got {epsilon}")
    calls["quantize_nvfp4"] += 1
    q = quantize(x, _scale(per_tensor_scale, "per_tensor_scale"), recipe="comfy-cuda",
                 nibbles="hi_first" if hi_first else "lo_first", pad=bool(pad_16x))
    return q.data, q.scales.view(torch.float8_e4m3fn)


def dequantize_nvfp4(qx, per_tensor_scale, block_scales, output_type=None, hi_first: bool = True):
    import torch

    if output_type not in (None, torch.bfloat16):
        raise ValueError(f"nvfp4_exact dequantizes to bfloat16 only, got {output_type}")
    calls["dequantize_nvfp4"] += 1
    rows, cols = int(qx.shape[0]), int(qx.shape[1]) * 2
    q = NVFP4Tensor(qx, block_scales, _scale(per_tensor_scale, "per_tensor_scale"), (rows, cols),
                    "hi_first" if hi_first else "lo_first")
    return dequantize(q, recipe="comfy-cuda")


def scaled_mm_nvfp4(a, b, tensor_scale_a, tensor_scale_b, block_scale_a, block_scale_b, bias=None,
                    out_dtype=None, alpha=None):
    import torch

    if out_dtype not in (None, torch.bfloat16):
        raise ValueError(f"nvfp4_exact computes bfloat16 outputs only, got {out_dtype}")
    calls["scaled_mm_nvfp4"] += 1
    m, n, k = int(a.shape[0]), int(b.shape[0]), int(a.shape[1]) * 2
    s_a = _scale(tensor_scale_a, "tensor_scale_a")
    s_b = _scale(tensor_scale_b, "tensor_scale_b")
    # comfy-kitchen 0.2.40 hands this op the padded operands only: a is [roundup(M,16)][K16/2], b is
    # [roundup(N,16)][K16/2], the op's registered fake returns (a.shape[0], b.shape[0]), and its
    # TensorCoreNVFP4Layout slices the result to the QuantizedTensors' orig_shape afterwards
    # (tensor/nvfp4.py, _handle_nvfp4_linear / _handle_nvfp4_mm). The layer's N reaches the op only
    # as the bias length; the padded weight rows are zero, so their columns are computed and sliced
    # off by comfy-kitchen, and the bias is zero-extended to match. Columns < N are the layer's bits
    # either way (each output column depends on its own weight row only).
    if bias is not None and bias.numel() < n:
        bias = torch.nn.functional.pad(bias.reshape(-1), (0, n - bias.numel()))
    return matmul(NVFP4Tensor(a, block_scale_a, s_a, (m, k)), NVFP4Tensor(b, block_scale_b, s_b, (n, k)),
                  alpha=None if alpha is None else scalar_f32(alpha, "alpha"), bias=bias,
                  backend=_state["backend"])


# ---------------------------------------------------------------------------------------------
# Registration

def _epsilon_zero(constraints):
    def rule(kwargs):
        eps = kwargs.get("epsilon", 0.0)
        if eps == 0.0:
            return constraints.ValidationResult.ok()
        return constraints.ValidationResult.fail("epsilon", "nvfp4_exact implements epsilon = 0 only")
    return rule


def _capabilities(constraints) -> dict:
    import torch

    P, F, dims = constraints.ParamConstraint, constraints.FunctionConstraints, constraints.ExactDims
    devices = frozenset({"cpu", "cuda"})
    bf16, f32, u8 = frozenset({torch.bfloat16}), frozenset({torch.float32}), frozenset({torch.uint8})
    e4m3 = frozenset({torch.float8_e4m3fn})
    return {
        "quantize_nvfp4": F(params={"x": P(dtypes=bf16, shape_rules=(dims(2),)), "per_tensor_scale": P(dtypes=f32)},
                            default_devices=devices, call_rules=(_epsilon_zero(constraints),)),
        "dequantize_nvfp4": F(params={"qx": P(dtypes=u8, shape_rules=(dims(2),)), "per_tensor_scale": P(dtypes=f32),
                                      "block_scales": P(dtypes=e4m3), "output_type": P(dtypes=bf16)},
                              default_devices=devices),
        "scaled_mm_nvfp4": F(params={"a": P(dtypes=u8, shape_rules=(dims(2),)), "b": P(dtypes=u8, shape_rules=(dims(2),)),
                                     "tensor_scale_a": P(dtypes=f32), "tensor_scale_b": P(dtypes=f32),
                                     "block_scale_a": P(dtypes=e4m3), "block_scale_b": P(dtypes=e4m3),
                                     "bias": P(dtypes=bf16), "out_dtype": P(dtypes=bf16)},
                             default_devices=devices),
    }


def _hook_fast_matmul(layout) -> None:
    if "_nvfp4_exact_original" in layout.__dict__:
        return
    original = layout.supports_fast_matmul
    layout._nvfp4_exact_original = original

    def supports_fast_matmul(cls) -> bool:
        return _state["installed"] or original()

    supports_fast_matmul.__doc__ = original.__doc__
    layout.supports_fast_matmul = classmethod(supports_fast_matmul)


def install(priority: int = 0, *, backend: str = "auto") -> str:
    """Registers the backend in comfy-kitchen's registry at position ``priority`` of its priority
    list (0: ahead of comfy-kitchen's own backends) and lets TensorCoreNVFP4Layout take its
    quantized-matmul path on every device. backend: the GEMM backend (``auto``, ``cpu-oracle`` or a
    GPU kernel name). Returns the GEMM backend ``auto`` resolves to here.
    Raises ImportError when comfy-kitchen is not installed."""
    registry, constraints, layout = _comfy_kitchen()
    resolved = resolve_backend(backend)  # an unknown name fails here, not in the first layer
    registry.register(NAME, sys.modules[__name__], capabilities=_capabilities(constraints))
    registry.enable(NAME)
    # comfy-kitchen 0.2.40 keeps its order in _priority and offers no getter.
    order = [name for name in registry._priority if name != NAME]
    order.insert(max(0, min(int(priority), len(order))), NAME)
    registry.set_priority(order)
    _state.update(installed=True, backend=backend)
    _hook_fast_matmul(layout)
    for k in calls:
        calls[k] = 0
    return resolved


def uninstall() -> None:
    """Takes the backend out of comfy-kitchen's dispatch and restores supports_fast_matmul's answer."""
    registry, _, _ = _comfy_kitchen()
    registry.disable(NAME)
    registry.set_priority([name for name in registry._priority if name != NAME])
    _state["installed"] = False


def installed() -> bool:
    return bool(_state["installed"])

