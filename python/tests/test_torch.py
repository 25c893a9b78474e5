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
@pytest.mark.parametrize("scale", ["dynamic", 0.0123])
def test_quantize_and_dequantize_padded(device, scale):
    x = random_bf16((40, 72), seed=5)  # rows and columns padded to 16
    x[1, 2] = 0x7FC0  # NaN
    q_np = nx.quantize(x, scale, pad=True)
    q_t = nx.quantize(as_torch_bf16(x, device), scale, pad=True)
    assert np.array_equal(bits(q_t.data), q_np.data) and np.array_equal(bits(q_t.scales), q_np.scales)
    assert q_t.global_scale == q_np.global_scale
    d = nx.dequantize(q_t)
    assert tuple(d.shape) == (40, 72) and d.device.type == device
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


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@needs_cuda
@pytest.mark.parametrize("n", [72, 100])
def test_cuda_linear_zero_copy_on_the_current_stream(n):
    """A CUDA activation on a device-path backend: outputs on the GPU, enqueued on the caller's
    stream, the weight prepacked once and prepared again after an in-place update."""
    backend = nx.resolve_backend("auto")
    if backend not in nx._DEVICE_BACKENDS:
        pytest.skip(f"auto is {backend} here, which has no device path")
    x = random_bf16((37, 200), seed=70)
    w, ws, s_w = (lambda q: (q.data, q.scales, q.global_scale))(nx.quantize(random_bf16((n, 200), seed=71, scale=0.05), pad=True))
    bias = random_bf16((n,), seed=72)
    want, want_raw = nx.linear(x, w, ws, s_w, bias=bias, backend="cpu-oracle", return_raw=True)
    w_t = torch.from_numpy(w).cuda()
    ws_t = torch.from_numpy(ws).view(torch.float8_e4m3fn).cuda()
    s_t = torch.tensor(s_w, dtype=torch.float32, device="cuda")
    x_t, b_t = as_torch_bf16(x, "cuda"), as_torch_bf16(bias, "cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        got, raw = nx.linear(x_t, w_t, ws_t, s_t, bias=b_t, return_raw=True)
    stream.synchronize()
    assert got.device.type == "cuda" and tuple(got.shape) == (37, n) and raw.dtype == torch.float32
    assert id(w_t) in nx._prepared  # the device path ran (the host path prepares nothing)
    assert np.array_equal(bits(got), want)
    assert np.array_equal(bits(raw).view(np.uint32), want_raw.view(np.uint32))
    # A static input_scale (sm90) and no bias with out_features: the same oracle.
    if backend == "sm90":
        s_in = nx.global_scale(x) * 2
        want_s = nx.linear(x, w, ws, s_w, input_scale=s_in, out_features=n, backend="cpu-oracle")
        got_s = nx.linear(x_t, w_t, ws_t, s_t, input_scale=s_in, out_features=n)
        assert np.array_equal(bits(got_s), want_s)
    # An in-place change of the weight is seen (its version changes): zeroed weight, zero output.
    w_t.zero_()
    got0 = nx.linear(x_t, w_t, ws_t, s_t, out_features=n)
    assert np.array_equal(bits(got0), nx.linear(x, np.zeros_like(w), ws, s_w, out_features=n, backend="cpu-oracle"))
    # The cache entry goes with the weight tensor.
    key = id(w_t)
    del w_t
    assert key not in nx._prepared


def _reset_host_copies():
    for k in nx.host_copies:
        nx.host_copies[k] = 0


@pytest.mark.parametrize("device", DEVICES)
def test_linear_on_an_empty_batch(device):
    wq = nx.quantize(random_bf16((48, 160), seed=6, scale=0.05), pad=True)
    w_t = torch.from_numpy(wq.data).to(device)
    ws_t = torch.from_numpy(wq.scales).view(torch.float8_e4m3fn).to(device)
    x_t = torch.zeros((2, 0, 160), dtype=torch.bfloat16, device=device)
    y, raw = nx.linear(x_t, w_t, ws_t, wq.global_scale, return_raw=True)
    assert tuple(y.shape) == tuple(raw.shape) == (2, 0, 48)
    assert y.dtype == torch.bfloat16 and raw.dtype == torch.float32 and y.device.type == device


def test_prepared_weight_key_of_an_inference_tensor():
    """ComfyUI loads weights under torch.inference_mode(): such tensors have no version counter
    (reading _version raises), so their cache key goes without it; other tensors keep it."""
    with torch.inference_mode():
        w = torch.zeros(16, 8, dtype=torch.uint8)
    assert nx._identity(w) == nx._identity(w)
    v = torch.zeros(16, 8, dtype=torch.uint8)
    before = nx._identity(v)
    v.add_(1)
    assert nx._identity(v) != before


@needs_cuda
def test_cuda_linear_and_matmul_under_inference_mode():
    """The device paths on inference tensors (all of ComfyUI's), the oracle's bits, the weight
    prepared once."""
    backend = nx.resolve_backend("auto")
    if backend not in nx._DEVICE_BACKENDS:
        pytest.skip(f"auto is {backend} here, which has no device path")
    x = random_bf16((37, 200), seed=73)
    wq = nx.quantize(random_bf16((48, 200), seed=74, scale=0.05), pad=True)
    w_np = nx.NVFP4Tensor(wq.data, wq.scales, wq.global_scale, (48, 200))
    want = nx.linear(x, wq.data, wq.scales, wq.global_scale, backend="cpu-oracle")
    want_mm = nx.matmul(nx.quantize(x, pad=True), w_np, backend="cpu-oracle")
    with torch.inference_mode():
        x_t = as_torch_bf16(x, "cuda")
        w_t = torch.from_numpy(wq.data).cuda()
        ws_t = torch.from_numpy(wq.scales).view(torch.float8_e4m3fn).cuda()
        s_t = torch.tensor(wq.global_scale, dtype=torch.float32, device="cuda")
        assert w_t.is_inference()
        for _ in range(2):  # the second call finds the prepared weight
            got = nx.linear(x_t, w_t, ws_t, s_t)
        assert id(w_t) in nx._prepared
        got_mm = nx.matmul(nx.quantize(x_t, pad=True), nx.NVFP4Tensor(w_t, ws_t, wq.global_scale, (48, 200)))
        torch.cuda.synchronize()
    assert got.device.type == "cuda" and np.array_equal(bits(got), want)
    assert got_mm.device.type == "cuda" and np.array_equal(bits(got_mm), want_mm)


@needs_cuda
def test_clear_prepared_after_an_in_place_update_of_an_inference_weight():
    """An inference tensor has no version counter: its in-place update goes unseen by the cache
    until clear_prepared drops the entry; the next call prepares the new bytes, and the entry's
    finalizer goes with it, so only the new entry's finalizer is left to drop it."""
    backend = nx.resolve_backend("auto")
    if backend not in nx._DEVICE_BACKENDS:
        pytest.skip(f"auto is {backend} here, which has no device path")
    x = random_bf16((37, 200), seed=75)
    wq = nx.quantize(random_bf16((48, 200), seed=76, scale=0.05), pad=True)
    vq = nx.quantize(random_bf16((48, 200), seed=77, scale=0.05), pad=True)
    want = nx.linear(x, wq.data, wq.scales, wq.global_scale, backend="cpu-oracle")
    want0 = nx.linear(x, np.zeros_like(wq.data), wq.scales, wq.global_scale, backend="cpu-oracle")
    with torch.inference_mode():
        x_t = as_torch_bf16(x, "cuda")
        w_t, v_t = torch.from_numpy(wq.data).cuda(), torch.from_numpy(vq.data).cuda()
        ws_t, vs_t = torch.from_numpy(wq.scales).cuda(), torch.from_numpy(vq.scales).cuda()
        s_t = torch.tensor(wq.global_scale, dtype=torch.float32, device="cuda")
        assert np.array_equal(bits(nx.linear(x_t, w_t, ws_t, s_t)), want)
        old = nx._prepared[id(w_t)][2]
        w_t.zero_()
        assert np.array_equal(bits(nx.linear(x_t, w_t, ws_t, s_t)), want)  # the stale prepacked weight
        assert nx.clear_prepared(w_t) == 1 and id(w_t) not in nx._prepared and not old.alive
        assert nx.clear_prepared(w_t) == 0
        assert np.array_equal(bits(nx.linear(x_t, w_t, ws_t, s_t)), want0)
        nx.linear(x_t, v_t, vs_t, vq.global_scale)
        entries, n = [nx._prepared[id(w_t)], nx._prepared[id(v_t)]], len(nx._prepared)
        assert nx.clear_prepared() == n and not nx._prepared
        assert not any(e[2].alive for e in entries)
        # Prepared again after the clear: the new entry still goes with its tensor.
        nx.linear(x_t, w_t, ws_t, s_t)
        key = id(w_t)
        del w_t
        assert key not in nx._prepared


def test_clear_prepared_of_a_tensor_with_nothing_cached():
    """A CPU x goes through the host, which prepares nothing: its weight drops nothing, as does a
    tensor that never was a weight."""
    wq = nx.quantize(random_bf16((48, 160), seed=78, scale=0.05), pad=True)
    w_t = torch.from_numpy(wq.data)
    nx.linear(as_torch_bf16(random_bf16((4, 160), seed=79), "cpu"), w_t, wq.scales, wq.global_scale)
    assert nx.clear_prepared(w_t) == 0
    assert nx.clear_prepared(torch.zeros(3)) == 0


@needs_cuda
def test_cuda_tensors_on_a_gpu_without_kernels_go_through_the_host(monkeypatch):
    """An A100 or RTX 4090 (no machine code in the build) or a build without CUDA: quantize,
    dequantize, global_scale, linear and matmul take CUDA tensors through the host, counted, with
    the same bits, the results back on the GPU."""
    monkeypatch.setattr(nx, "_has_gpu_kernels", lambda device: False)
    x = random_bf16((40, 72), seed=8)
    x_t = as_torch_bf16(x, "cuda")
    q_np = nx.quantize(x, pad=True)
    _reset_host_copies()
    q = nx.quantize(x_t, pad=True)
    assert nx.host_copies == {"to_host": 1, "from_host": 2, "scalars": 0}, nx.host_copies
    assert q.data.device.type == "cuda" and q.global_scale == q_np.global_scale
    assert np.array_equal(bits(q.data), q_np.data) and np.array_equal(bits(q.scales), q_np.scales)
    _reset_host_copies()
    d = nx.dequantize(q)
    assert nx.host_copies == {"to_host": 2, "from_host": 1, "scalars": 0}, nx.host_copies
    assert d.device.type == "cuda" and np.array_equal(bits(d), nx.dequantize(q_np))
    _reset_host_copies()
    assert nx.global_scale(x_t) == nx.global_scale(x) and nx.host_copies["to_host"] == 1
    wq = nx.quantize(random_bf16((48, 72), seed=9, scale=0.05), pad=True)
    w_t = torch.from_numpy(wq.data).cuda()
    got = nx.linear(x_t, w_t, torch.from_numpy(wq.scales).cuda(), wq.global_scale)
    assert id(w_t) not in nx._prepared  # the host path prepares nothing
    assert np.array_equal(bits(got), nx.linear(x, wq.data, wq.scales, wq.global_scale))


@needs_cuda
def test_host_matmul_reads_cuda_global_scales():
    """matmul through the host (cpu-oracle) with the global scales as CUDA tensors, as comfy-kitchen
    holds them: read as one value each, like the device path."""
    a = nx.quantize(random_bf16((16, 64), seed=10), pad=True)
    w = nx.quantize(random_bf16((32, 64), seed=11, scale=0.05), pad=True)
    want = nx.matmul(a, w, backend="cpu-oracle")

    def cuda_q(q):
        return nx.NVFP4Tensor(torch.from_numpy(q.data).cuda(), torch.from_numpy(q.scales).cuda(),
                              torch.tensor(q.global_scale, dtype=torch.float32, device="cuda"), q.shape)

    _reset_host_copies()
    got = nx.matmul(cuda_q(a), cuda_q(w), backend="cpu-oracle")
    assert got.device.type == "cuda" and np.array_equal(bits(got), want)
    assert nx.host_copies["scalars"] == 2, nx.host_copies


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_auto_backend_is_resolved_for_the_tensors_gpu(monkeypatch):
    """"auto" names the kernel of the GPU holding the operands, not of the caller's current GPU
    (an H100 beside an RTX 50 need different kernels): resolved with that GPU current."""
    seen = []
    real = nx.resolve_backend

    def spy(backend="auto", contract="sequential"):
        seen.append(torch.cuda.current_device())
        return real(backend, contract)

    monkeypatch.setattr(nx, "resolve_backend", spy)
    last = torch.cuda.device_count() - 1
    x = random_bf16((16, 64), seed=12)
    wq = nx.quantize(random_bf16((32, 64), seed=13, scale=0.05), pad=True)
    want = nx.linear(x, wq.data, wq.scales, wq.global_scale)
    with torch.cuda.device(0):
        got = nx.linear(as_torch_bf16(x, f"cuda:{last}"), torch.from_numpy(wq.data).to(f"cuda:{last}"),
                        torch.from_numpy(wq.scales).to(f"cuda:{last}"), wq.global_scale)
        assert torch.cuda.current_device() == 0
    assert seen == [last], seen
    assert got.device == torch.device(f"cuda:{last}") and np.array_equal(bits(got), want)


@needs_cuda
def test_cuda_global_scale_tensors_are_read_by_the_kernels():
    """quantize and dequantize with the global scale as a one-element float32 CUDA tensor (ComfyUI's
    per-tensor scale): the kernels read it on the GPU, no scalar comes to the host, the result keeps
    the tensor as its global_scale, and the bits are those of the same scale as a number."""
    if not nx._has_gpu_kernels(torch.device("cuda")):
        pytest.skip("the library has no kernels for this GPU: its tensors go through the host")
    x = random_bf16((40, 72), seed=14)
    s = np.float32(0.0123)
    want = nx.quantize(x, float(s), pad=True)
    s_t = torch.tensor(s, device="cuda")
    _reset_host_copies()
    q = nx.quantize(as_torch_bf16(x, "cuda"), s_t, pad=True)
    assert q.global_scale is s_t or (torch.is_tensor(q.global_scale) and q.global_scale.data_ptr() == s_t.data_ptr())
    assert np.array_equal(bits(q.data), want.data) and np.array_equal(bits(q.scales), want.scales)
    d = nx.dequantize(q)
    assert nx.host_copies["scalars"] == 0, nx.host_copies
    assert np.array_equal(bits(d), nx.dequantize(want))
