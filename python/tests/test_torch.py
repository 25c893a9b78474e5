"""torch tensors in and out (CPU, and CUDA where there is one): same bits as numpy."""

import numpy as np
import pytest

import nvfp4_exact as nx
from conftest import random_bf16

torch = pytest.importorskip("torch", reason="torch is not installed (the GPU machine has it)")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def as_torch_bf16(bits: np.ndarray, device: str):
    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16).to(device)


def bits(t) -> np.ndarray:
    return t.cpu().view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_quantize_and_dequantize(device):
    x = random_bf16((48, 96), seed=1)
    q_np = nx.quantize(x)
    q_t = nx.quantize(as_torch_bf16(x, device))
    assert q_t.data.device.type == device and q_t.data.dtype == torch.uint8
    assert np.array_equal(bits(q_t.data), q_np.data) and np.array_equal(bits(q_t.scales), q_np.scales)
    assert q_t.global_scale == q_np.global_scale
    d = nx.dequantize(q_t)
    assert d.dtype == torch.bfloat16 and d.device.type == device
    assert np.array_equal(bits(d), nx.dequantize(q_np))


@pytest.mark.parametrize("device", DEVICES)
def test_linear(device):
    x = random_bf16((2, 9, 160), seed=2)
    # N a multiple of 16: a checkpoint weight has N16 rows and the layer N16 outputs
    wq = nx.quantize(random_bf16((48, 160), seed=3, scale=0.05), pad=True)
    bias = random_bf16((48,), seed=4)
    want = nx.linear(x, wq.data, wq.scales, wq.global_scale, bias=bias)
    w_t = torch.from_numpy(wq.data).to(device)
    ws_t = torch.from_numpy(wq.scales).view(torch.float8_e4m3fn).to(device)  # as checkpoints store it
    s_t = torch.tensor(wq.global_scale, dtype=torch.float32, device=device)
    got, raw = nx.linear(as_torch_bf16(x, device), w_t, ws_t, s_t, bias=as_torch_bf16(bias, device), return_raw=True)
    assert got.dtype == torch.bfloat16 and got.device.type == device and tuple(got.shape) == (2, 9, 48)
    assert raw.dtype == torch.float32
    assert np.array_equal(bits(got), want)
