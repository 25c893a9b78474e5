"""The comfy-kitchen backend. Needs torch and comfy-kitchen (tools/prepare-comfy-kitchen carries its
Python sources to the GPU machine); without comfy-kitchen, install() must say so in one line."""

import importlib.util

import numpy as np
import pytest

import nvfp4_exact as nx
from conftest import random_bf16

HAVE_COMFY = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("comfy_kitchen") is not None


@pytest.mark.skipif(HAVE_COMFY, reason="comfy-kitchen is installed here")
def test_install_without_comfy_kitchen_says_so():
    import nvfp4_exact.comfy as comfy

    with pytest.raises(ImportError) as info:
        comfy.install()
    msg = str(info.value)
    assert "comfy-kitchen" in msg and "\n" not in msg


needs_comfy = pytest.mark.skipif(not HAVE_COMFY, reason="torch and comfy_kitchen are not both installed")


@pytest.fixture
def ck():
    import comfy_kitchen
    import nvfp4_exact.comfy as comfy

    comfy.install(priority=0)
    yield comfy_kitchen
    comfy.uninstall()


def _devices():
    import torch

    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _t(bits, device):
    import torch

    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16).to(device)


def _bits(t):
    import torch

    return t.cpu().view(torch.int16).numpy().view(np.uint16)


def _layer(device, seed):
    from comfy_kitchen.tensor import QuantizedTensor

    x_np = random_bf16((40, 200), seed=seed)  # M and K not multiples of 16: comfy pads
    w_np = random_bf16((72, 200), seed=seed + 1, scale=0.05)
    qx = QuantizedTensor.from_float(_t(x_np, device), "TensorCoreNVFP4Layout")
    qw = QuantizedTensor.from_float(_t(w_np, device), "TensorCoreNVFP4Layout")
    return x_np, w_np, qx, qw


def _oracle(x_np, w_np, qx, qw, bias=None):
    """The oracle on the same inputs, with the global scales comfy-kitchen's layout chose; also
    checks that the weight comfy-kitchen holds is the library's quantization of w."""
    import torch

    s_x, s_w = float(qx._params.scale), float(qw._params.scale)
    wq = nx.quantize(w_np, s_w, pad=True)
    assert np.array_equal(qw._qdata.cpu().numpy(), wq.data)
    assert np.array_equal(qw._params.block_scale.cpu().view(torch.uint8).numpy(), wq.scales)
    # N = 72 is not a multiple of 16: the weight has 80 rows, the layer 72 outputs.
    return nx.linear(x_np, wq.data, wq.scales, s_w, bias=bias, input_scale=s_x, backend="cpu-oracle",
                     out_features=w_np.shape[0])


@needs_comfy
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_f_linear_on_quantized_tensors_goes_through_the_backend(ck, device):
    import torch
    import nvfp4_exact.comfy as comfy
    from comfy_kitchen.tensor import TensorCoreNVFP4Layout

    if device not in _devices():
        pytest.skip("no CUDA device")
    assert TensorCoreNVFP4Layout.supports_fast_matmul()  # on the CPU and below SM 10.0 too
    x_np, w_np, qx, qw = _layer(device, 7)
    y = torch.nn.functional.linear(qx, qw)
    assert comfy.calls["quantize_nvfp4"] == 2 and comfy.calls["scaled_mm_nvfp4"] == 1
    assert y.dtype == torch.bfloat16 and tuple(y.shape) == (40, 72) and y.device.type == device
    assert np.array_equal(_bits(y), _oracle(x_np, w_np, qx, qw))


@needs_comfy
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_f_linear_with_bias(ck, device):
    import torch
    import nvfp4_exact.comfy as comfy

    if device not in _devices():
        pytest.skip("no CUDA device")
    x_np, w_np, qx, qw = _layer(device, 17)
    b_np = random_bf16((72,), seed=19)
    y = torch.nn.functional.linear(qx, qw, _t(b_np, device))
    if comfy.calls["scaled_mm_nvfp4"] == 0:
        # torch decomposes F.linear with a bias into aten.addmm, which comfy-kitchen 0.2.40's NVFP4
        # layout does not handle: it dequantizes instead, outside any NVFP4 backend.
        pytest.xfail("comfy-kitchen took its dequantize fallback for F.linear with bias (aten.addmm)")
    assert np.array_equal(_bits(y), _oracle(x_np, w_np, qx, qw, bias=b_np))


@needs_comfy
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_dequantize_goes_through_the_backend(ck, device):
    import nvfp4_exact.comfy as comfy
    from comfy_kitchen.tensor import QuantizedTensor

    if device not in _devices():
        pytest.skip("no CUDA device")
    w_np = random_bf16((48, 64), seed=10)
    qw = QuantizedTensor.from_float(_t(w_np, device), "TensorCoreNVFP4Layout")
    d = qw.dequantize()
    assert comfy.calls["dequantize_nvfp4"] == 1
    q = nx.quantize(w_np, float(qw._params.scale))
    assert np.array_equal(_bits(d), nx.dequantize(q, recipe="comfy-cuda"))


@needs_comfy
def test_the_registry_picks_the_backend_and_lets_others_have_the_rest(ck):
    import torch
    from comfy_kitchen.registry import registry

    x = torch.zeros(32, 64, dtype=torch.bfloat16)
    s = torch.tensor(1.0)
    kw = dict(x=x, per_tensor_scale=s, epsilon=0.0, pad_16x=False, hi_first=True)
    assert registry.get_capable_backend("quantize_nvfp4", kw) == "nvfp4_exact"
    # fp32 input and a nonzero epsilon are not this backend's: comfy-kitchen's own take them.
    assert registry.get_capable_backend("quantize_nvfp4", {**kw, "x": x.float()}) != "nvfp4_exact"
    assert registry.get_capable_backend("quantize_nvfp4", {**kw, "epsilon": 1e-6}) != "nvfp4_exact"


@needs_comfy
def test_uninstall_restores_the_gate():
    import nvfp4_exact.comfy as comfy
    from comfy_kitchen.tensor import TensorCoreNVFP4Layout

    comfy.install()
    comfy.uninstall()
    assert TensorCoreNVFP4Layout.supports_fast_matmul() == TensorCoreNVFP4Layout._nvfp4_exact_original()


@needs_comfy
def test_f_linear_on_cuda_tensors_stays_on_the_device(ck):
    """scaled_mm_nvfp4 on CUDA operands: the device path (sm90 on Hopper), no host round trip of A,
    the weight or the output (nvfp4_exact.host_copies), the weight prepacked once on the GPU (its
    global scale read then, once); from the second call on not even a scalar is read: the global
    scales comfy-kitchen hands over as float32 CUDA tensors make alpha on the GPU."""
    import torch
    import nvfp4_exact.comfy as comfy

    if "cuda" not in _devices():
        pytest.skip("no CUDA device")
    if nx.resolve_backend("auto") not in nx._DEVICE_BACKENDS:
        pytest.skip(f"auto is {nx.resolve_backend('auto')} here, which has no device path")
    x_np, w_np, qx, qw = _layer("cuda", 27)
    want = _oracle(x_np, w_np, qx, qw)
    for k in nx.host_copies:
        nx.host_copies[k] = 0
    for i in range(2):  # the second call reuses the prepared weight
        if i == 1:
            for k in nx.host_copies:
                nx.host_copies[k] = 0
        y = torch.nn.functional.linear(qx, qw)
        assert nx.host_copies["to_host"] == 0 and nx.host_copies["from_host"] == 0, nx.host_copies
    assert nx.host_copies["scalars"] == 0, nx.host_copies
    assert comfy.calls["scaled_mm_nvfp4"] == 2
    assert y.device == qx._qdata.device and y.dtype == torch.bfloat16 and tuple(y.shape) == (40, 72)
    assert np.array_equal(_bits(y), want)
    assert len([v for v in nx._prepared.values() if v[1].backend == nx.resolve_backend("auto")]) >= 1


@needs_comfy
def test_the_readme_custom_node_installs_the_backend_when_loaded_as_comfyui_loads_it(tmp_path):
    """The README's custom-node folder, loaded as ComfyUI loads one (the module named after its
    folder, nodes.py's load_custom_node): the backend is installed and NODE_CLASS_MAPPINGS exists."""
    import os
    import re
    import sys

    import nvfp4_exact.comfy as comfy

    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    if not os.path.exists(readme):
        pytest.skip("no README.md beside the tests (an installed copy of them)")
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"`ComfyUI/custom_nodes/([A-Za-z0-9_]+)/__init__\.py`[^\n]*\n(?:[^\n]+\n)*?\n((?:    [^\n]*\n)+)", text)
    assert m, "the README's custom-node snippet was not found"
    folder, code = m.group(1), "\n".join(line[4:] for line in m.group(2).splitlines()) + "\n"
    assert folder != "nvfp4_exact", "a custom node named after the package hides the package"
    node = tmp_path / folder
    node.mkdir()
    (node / "__init__.py").write_text(code)
    comfy.uninstall()
    try:
        spec = importlib.util.spec_from_file_location(folder, str(node / "__init__.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[folder] = module
        spec.loader.exec_module(module)
        assert module.NODE_CLASS_MAPPINGS == {}
        assert comfy.installed()
    finally:
        sys.modules.pop(folder, None)
        comfy.uninstall()
