"""The device paths for packed NVFP4 operands (torch CUDA tensors): matmul from a packed A and the
weight prepack on the GPU, bit for bit against the CPU oracle and the host prepack, with no host
round trip (nvfp4_exact.host_copies). Skipped without torch or without a CUDA device."""

import numpy as np
import pytest

import nvfp4_exact as nx
from nvfp4_exact import _core
from conftest import SPLIT_K_CONTRACTS, random_bf16, split_k_operands

torch = pytest.importorskip("torch", reason="torch is not installed (the GPU machine has it)")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def device_backends():
    if not torch.cuda.is_available():
        return []
    return [b for b in nx.available_backends() if b in nx._DEVICE_BACKENDS]


def _bits(t) -> np.ndarray:
    return t.cpu().view(torch.int16).numpy().view(np.uint16)


def _cuda(q: nx.NVFP4Tensor) -> nx.NVFP4Tensor:
    return nx.NVFP4Tensor(torch.from_numpy(q.data).cuda(), torch.from_numpy(q.scales).view(torch.float8_e4m3fn).cuda(),
                          q.global_scale, q.shape, q.nibbles, q.scale_layout)


def _reset():
    for k in nx.host_copies:
        nx.host_copies[k] = 0


# M odd, N % 16 != 0 (the weight has roundup(N,16) rows), K not a multiple of 64 (or of 16); K = 256
# with lo_first codes is read in place (no repack).
SHAPES = [(37, 72, 200), (1, 100, 1000), (130, 16, 64), (5, 300, 256), (64, 130, 33)]


@pytest.mark.parametrize("backend", device_backends() or ["none"])
@pytest.mark.parametrize("nibbles", ["hi_first", "lo_first"])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matmul_on_cuda_operands_runs_on_the_device_bit_for_bit(backend, nibbles, m, n, k):
    if backend == "none":
        pytest.skip("no device-path backend on this GPU")
    a = nx.quantize(random_bf16((m, k), seed=m + k), pad=True, nibbles=nibbles)
    w = nx.quantize(random_bf16((n, k), seed=n + k + 1, scale=0.05), pad=True, nibbles=nibbles)
    a = nx.NVFP4Tensor(a.data, a.scales, a.global_scale, (m, k), nibbles)
    w = nx.NVFP4Tensor(w.data, w.scales, w.global_scale, (n, k), nibbles)
    bias = random_bf16((n,), seed=3)
    want, want_raw = nx.matmul(a, w, bias=bias, backend="cpu-oracle", return_raw=True)
    a_t, w_t = _cuda(a), _cuda(w)
    b_t = torch.from_numpy(bias.view(np.int16)).view(torch.bfloat16).cuda()
    _reset()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        got, raw = nx.matmul(a_t, w_t, bias=b_t, backend=backend, return_raw=True)
    stream.synchronize()
    assert nx.host_copies == {"to_host": 0, "from_host": 0, "scalars": 0}, nx.host_copies
    assert id(w_t.data) in nx._prepared  # prepared from the CUDA weight (the host path prepares nothing)
    assert got.device == a_t.data.device and got.dtype == torch.bfloat16 and tuple(got.shape) == (m, n)
    assert np.array_equal(_bits(got), want)
    assert np.array_equal(raw.cpu().numpy().view(np.uint32), want_raw.view(np.uint32))
    # An explicit alpha, no bias: the same oracle, the prepared weight reused.
    want_a = nx.matmul(a, w, alpha=0.375, backend="cpu-oracle")
    got_a = nx.matmul(a_t, w_t, alpha=0.375, backend=backend)
    assert np.array_equal(_bits(got_a), want_a)
    assert nx.host_copies["to_host"] == 0 and nx.host_copies["from_host"] == 0


def test_host_copies_counts_a_round_trip():
    """The counter the tests above rely on does see a host round trip: cpu-oracle on CUDA tensors."""
    a = nx.quantize(random_bf16((16, 64), seed=1), pad=True)
    w = nx.quantize(random_bf16((16, 64), seed=2), pad=True)
    _reset()
    got = nx.matmul(_cuda(a), _cuda(w), backend="cpu-oracle")
    assert got.device.type == "cuda"
    assert nx.host_copies["to_host"] == 4 and nx.host_copies["from_host"] == 1


def _random_weight(n, k, seed):
    """Random codes and random UE4M3 scale bytes (NaN, subnormal and large ones included) in the
    logical blocks, zeros in the padding, swizzled as checkpoints store them."""
    rng = np.random.default_rng(seed)
    r16, k16 = (n + 15) // 16 * 16, (k + 15) // 16 * 16
    data = np.zeros((r16, k16 // 2), np.uint8)
    data[:n] = rng.integers(0, 256, size=(n, k16 // 2), dtype=np.uint8)
    cp = (k16 // 16 + 3) // 4 * 4
    rows_pad = (r16 + 127) // 128 * 128
    sf = np.zeros(rows_pad * cp, np.uint8)
    for r in range(n):
        for c in range(k16 // 16):
            off = ((r // 128) * (cp // 4) + (c // 4)) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + (c % 4)
            sf[off] = rng.integers(0, 256)
    return data, sf.reshape(rows_pad, cp)


@pytest.mark.parametrize("backend", device_backends() or ["none"])
@pytest.mark.parametrize("n,k", [(72, 200), (300, 1000), (16, 64), (129, 48)])
def test_device_prepack_equals_the_host_prepack_byte_for_byte(backend, n, k):
    if backend == "none":
        pytest.skip("no device-path backend on this GPU")
    data, sf = _random_weight(n, k, seed=n * k)
    host = _core.prepare_weight(data, sf, 0.5, k, None, n, backend, 0)
    stream = int(torch.cuda.current_stream().cuda_stream)
    dev_hi = _core.prepare_weight_device(torch.from_numpy(data).cuda(), torch.from_numpy(sf).cuda(), 0.5, k, None, n,
                                         backend, "hi_first", stream)
    lo = ((data << 4) | (data >> 4)).astype(np.uint8)
    dev_lo = _core.prepare_weight_device(torch.from_numpy(lo).cuda(), torch.from_numpy(sf).cuda(), 0.5, k, None, n,
                                         backend, "lo_first", stream)
    want = _core.prepared_bytes(host)
    for dev in (dev_hi, dev_lo):
        assert (dev.n, dev.k) == (host.n, host.k)
        got = _core.prepared_bytes(dev)
        for name, g, h in zip(("codes", "scales", "records"), got, want):
            assert g.shape == h.shape, name
            assert np.array_equal(g, h), f"{name}: first difference at byte {int(np.argmax(g != h))}"


@pytest.mark.parametrize("backend", device_backends() or ["none"])
def test_cuda_linear_prepacks_the_weight_on_the_device(backend):
    """linear with a CUDA weight: no host copy from the first call on, the oracle's bits."""
    if backend == "none":
        pytest.skip("no device-path backend on this GPU")
    x = random_bf16((7, 200), seed=40)
    wq = nx.quantize(random_bf16((72, 200), seed=41, scale=0.05), pad=True)
    bias = random_bf16((72,), seed=42)
    want = nx.linear(x, wq.data, wq.scales, wq.global_scale, bias=bias, backend="cpu-oracle")
    x_t = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).cuda()
    b_t = torch.from_numpy(bias.view(np.int16)).view(torch.bfloat16).cuda()
    w_t = torch.from_numpy(wq.data).cuda()
    ws_t = torch.from_numpy(wq.scales).view(torch.float8_e4m3fn).cuda()
    _reset()
    got = nx.linear(x_t, w_t, ws_t, wq.global_scale, bias=b_t, backend=backend)
    assert nx.host_copies == {"to_host": 0, "from_host": 0, "scalars": 0}, nx.host_copies
    assert np.array_equal(_bits(got), want)


@pytest.mark.parametrize("backend", [b for b in device_backends() if b != "sm90"] or ["none"])
@pytest.mark.parametrize("contract", SPLIT_K_CONTRACTS)
def test_split_k_contracts_run_on_the_device_bit_for_bit(backend, contract):
    """A split-K contract (what cuBLASLt may plan for a shape: FC2's likely plan) on the SM120-side
    kernels: the K-slice partials and their ordered merge on the GPU, the CPU oracle's bits under the
    same contract, no host round trip; sm90 (sequential only) says so in one line."""
    if backend == "none":
        pytest.skip("no SM120-side device-path backend on this GPU")
    m, n, k = 45, 72, 1000
    a, w = split_k_operands()
    want, want_raw = nx.matmul(a, w, backend="cpu-oracle", contract=contract, return_raw=True)
    a_t, w_t = _cuda(a), _cuda(w)
    _reset()
    got, raw = nx.matmul(a_t, w_t, backend=backend, contract=contract, return_raw=True)
    torch.cuda.synchronize()
    assert nx.host_copies == {"to_host": 0, "from_host": 0, "scalars": 0}, nx.host_copies
    assert np.array_equal(_bits(got), want)
    assert np.array_equal(raw.cpu().numpy().view(np.uint32), want_raw.view(np.uint32))
    # The layer's real input (bf16 x quantized on the GPU), the weight as a checkpoint stores it.
    x = random_bf16((m, k), seed=83)
    want_l = nx.linear(x, w.data, w.scales, w.global_scale, backend="cpu-oracle", contract=contract)
    x_t = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).cuda()
    w_d = torch.from_numpy(w.data).cuda()
    w_s = torch.from_numpy(w.scales).view(torch.float8_e4m3fn).cuda()
    _reset()
    got_l = nx.linear(x_t, w_d, w_s, w.global_scale, backend=backend, contract=contract)
    torch.cuda.synchronize()
    assert nx.host_copies["to_host"] == 0 and nx.host_copies["from_host"] == 0, nx.host_copies
    assert np.array_equal(_bits(got_l), want_l)
    if "sm90" in device_backends():
        with pytest.raises(ValueError, match="sequential contract only"):
            nx.matmul(a_t, w_t, backend="sm90", contract=contract)


@pytest.mark.parametrize("backend", device_backends() or ["none"])
def test_matmul_with_cuda_global_scales_reads_nothing_to_the_host(backend):
    """Global scales as one-element float32 CUDA tensors (comfy-kitchen's): alpha = f32(s_a * s_w) is
    formed on the GPU, so after the weight's prepack (which reads its scale once) no call reads a
    scalar to the host; the bits are the oracle's. A scale of another dtype is read (counted)."""
    if backend == "none":
        pytest.skip("no device-path backend on this GPU")
    m, n, k = 37, 72, 200
    a = nx.quantize(random_bf16((m, k), seed=5), pad=True)
    w = nx.quantize(random_bf16((n, k), seed=6, scale=0.05), pad=True)
    a = nx.NVFP4Tensor(a.data, a.scales, a.global_scale, (m, k))
    w = nx.NVFP4Tensor(w.data, w.scales, w.global_scale, (n, k))
    want = nx.matmul(a, w, backend="cpu-oracle")

    def cuda_scaled(q, dtype=torch.float32):
        t = _cuda(q)
        return nx.NVFP4Tensor(t.data, t.scales, torch.tensor(q.global_scale, dtype=dtype, device="cuda"), q.shape)

    a_t, w_t = cuda_scaled(a), cuda_scaled(w)
    nx.matmul(a_t, w_t, backend=backend)  # prepares the weight
    _reset()
    got = nx.matmul(a_t, w_t, backend=backend)
    assert nx.host_copies == {"to_host": 0, "from_host": 0, "scalars": 0}, nx.host_copies
    assert np.array_equal(_bits(got), want)
    # float64 scales hold the same values here, but only float32 ones are read where they are.
    a64 = nx.NVFP4Tensor(a_t.data, a_t.scales, a_t.global_scale.double(), (m, k))
    _reset()
    assert np.array_equal(_bits(nx.matmul(a64, w_t, backend=backend)), want)
    assert nx.host_copies["scalars"] == 2, nx.host_copies


@pytest.mark.parametrize("backend", device_backends() or ["none"])
def test_linear_with_a_cuda_input_scale_reads_nothing_to_the_host(backend):
    """A static input_scale as a one-element float32 CUDA tensor (ComfyUI's): on sm90 the pre-pass
    reads it on the GPU, so no scalar comes to the host, and the bits are those of the same value as
    a number and the oracle's; 0 quantizes with 0 as the oracle does (not "dynamic"). The scale is
    written on the call's stream just before it. A float64 one is read (counted), and so is one
    given to an SM120-side backend, which takes a static scale through the host."""
    if backend == "none":
        pytest.skip("no device-path backend on this GPU")
    m, n, k = 37, 72, 200
    x = random_bf16((m, k), seed=90)
    wq = nx.quantize(random_bf16((n, k), seed=91, scale=0.05), pad=True)
    bias = random_bf16((n,), seed=92)
    x_t = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).cuda()
    b_t = torch.from_numpy(bias.view(np.int16)).view(torch.bfloat16).cuda()
    w_t = torch.from_numpy(wq.data).cuda()
    ws_t = torch.from_numpy(wq.scales).view(torch.float8_e4m3fn).cuda()
    nx.linear(x_t, w_t, ws_t, wq.global_scale, bias=b_t, backend=backend)  # prepares the weight
    s_dyn = np.float32(nx.global_scale(x))
    values = [np.float32(2 * s_dyn), np.float32(0.0421875)] + ([np.float32(0.0)] if backend == "sm90" else [])
    for s in values:
        assert s != s_dyn  # a kernel that ignored the scale (dynamic) would differ
        want, want_raw = nx.linear(x, wq.data, wq.scales, wq.global_scale, bias=bias, input_scale=float(s),
                                   backend="cpu-oracle", return_raw=True)
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            s_t = torch.full((1,), float(s), dtype=torch.float32, device="cuda")  # written on this stream
            _reset()
            got, raw = nx.linear(x_t, w_t, ws_t, wq.global_scale, bias=b_t, input_scale=s_t, backend=backend,
                                 return_raw=True)
            counts = dict(nx.host_copies)
        stream.synchronize()
        assert got.device == x_t.device and got.dtype == torch.bfloat16 and tuple(got.shape) == (m, n)
        assert np.array_equal(_bits(got), want), f"input_scale {s}"
        assert np.array_equal(raw.cpu().numpy().view(np.uint32), want_raw.view(np.uint32)), f"input_scale {s}"
        if backend != "sm90":
            assert counts["scalars"] == 1, counts
            continue
        assert counts == {"to_host": 0, "from_host": 0, "scalars": 0}, counts
        if s > 0:  # as a number, and as a float64 tensor (read): the same bits (0 as a number is refused)
            got_f = nx.linear(x_t, w_t, ws_t, wq.global_scale, bias=b_t, input_scale=float(s), backend=backend)
            assert np.array_equal(_bits(got_f), _bits(got))
            _reset()
            got_64 = nx.linear(x_t, w_t, ws_t, wq.global_scale, bias=b_t, input_scale=s_t.double(), backend=backend)
            assert nx.host_copies["scalars"] == 1, nx.host_copies
            assert np.array_equal(_bits(got_64), want)
