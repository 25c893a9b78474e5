"""The Python API against the library's own results: the CLI's bytes and reports, the oracle."""

import json
import re

import numpy as np
import pytest

import nvfp4_exact as nx
from conftest import SPLIT_K_CONTRACTS, bf16_bits, bf16_values, random_bf16, split_k_operands

RECIPES = ["comfy-cuda", "comfy-eager-cuda", "comfy-eager-cpu"]


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("nibbles,layout", [("hi_first", "swizzled128x4"), ("lo_first", "linear")])
@pytest.mark.parametrize("scale", ["dynamic", "f32", "0.0017"])
def test_quantize_matches_cli_bytes(cli, tmp_path, recipe, nibbles, layout, scale):
    x = random_bf16((40, 72), seed=3)  # not multiples of 16: padded
    x[0, 5] = 0x7FC0  # a NaN and a huge value: the recipes' special cases travel too
    x[3, 9] = 0xC700
    np.save(tmp_path / "x.npy", x)
    r = cli("quantize", "--input", tmp_path / "x.npy", "--out", tmp_path / "q", "--recipe", recipe, "--nibbles", nibbles,
            "--scales", layout, "--global-scale", scale, "--pad", "--json")
    assert r.returncode == 0, r.stderr
    meta = json.loads(r.stdout)
    gs = scale if scale in ("dynamic", "f32") else float(scale)
    q = nx.quantize(x, gs, recipe=recipe, nibbles=nibbles, scale_layout=layout, pad=True)
    assert np.float32(q.global_scale).view(np.uint32) == int(meta["global_scale_bits"], 16)
    assert q.data.dtype == np.uint8 and q.scales.dtype == np.uint8
    assert np.array_equal(q.data, np.load(tmp_path / "q.data.npy"))
    assert np.array_equal(q.scales, np.load(tmp_path / "q.scales.npy"))
    assert q.shape == (40, 72)


def test_global_scale_rules():
    x = bf16_bits(np.array([[1.0, -2688.0 * 3, 7.0, np.nan]], dtype=np.float32))
    # amax 8064 (the NaN is skipped): dynamic = f32(bf16(8064/2688)) = 3, f32 = 8064/2688 = 3.
    assert nx.global_scale(x) == 3.0
    assert nx.global_scale(x, "f32") == np.float32(np.float32(8064.0) / np.float32(2688.0))
    with pytest.raises(ValueError, match="dynamic"):
        nx.global_scale(x, "max")


def _bf16_rn(v: np.ndarray) -> np.ndarray:
    return bf16_values(bf16_bits(v))


def _e2m1(code):
    return np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)[code]


def _e4m3(b):
    b = b.astype(np.int64)
    e, m = (b >> 3) & 15, b & 7
    return np.where(e == 0, m * 2.0 ** -9, (1 + m / 8.0) * 2.0 ** (e - 7)).astype(np.float32)


@pytest.mark.parametrize("recipe", ["comfy-eager", "comfy-cuda"])
def test_dequantize_matches_the_recipe_formula(recipe):
    x = random_bf16((48, 64), seed=5)
    q = nx.quantize(x, scale_layout="linear", nibbles="lo_first")
    got = nx.dequantize(q, recipe=recipe)
    assert got.dtype == np.uint16 and got.shape == (48, 64)
    codes = np.stack([q.data & 15, q.data >> 4], axis=-1).reshape(48, 64)  # lo_first: element 2j low
    v = _e2m1(codes)
    sf = np.repeat(_e4m3(q.scales), 16, axis=1)
    s = np.float32(q.global_scale)
    if recipe == "comfy-eager":  # bf16(v * bf16(bf16(s) * sf)); every product is exact in fp32
        want = _bf16_rn(v * _bf16_rn(_bf16_rn(np.array(s)) * sf))
    else:  # bf16(fmul(fmul(s, sf), v)); no subnormal appears for this data, so ftz changes nothing
        want = _bf16_rn((s * sf).astype(np.float32) * v)
    assert np.array_equal(got, bf16_bits(want))


def _checkpoint_layer(n, k, seed):
    w = random_bf16((n, k), seed=seed, scale=0.05)
    q = nx.quantize(w, pad=True)  # ComfyUI's weight: comfy-cuda, dynamic scale, hi_first, swizzled
    return q.data, q.scales, np.float32(q.global_scale)


def test_linear_is_quantize_then_matmul():
    x = random_bf16((3, 5, 80), seed=11)
    w, ws, s_w = _checkpoint_layer(48, 80, seed=12)
    bias = random_bf16((48,), seed=13)
    y, raw = nx.linear(x, w, ws, s_w, bias=bias, return_raw=True)
    assert y.shape == (3, 5, 48) and y.dtype == np.uint16 and raw.dtype == np.float32
    a = nx.quantize(x.reshape(15, 80), pad=True)
    y2, raw2 = nx.matmul(a, nx.NVFP4Tensor(w, ws, float(s_w), (48, 80)), bias=bias, return_raw=True)
    assert np.array_equal(y.reshape(15, 48), y2)
    assert np.array_equal(raw.reshape(15, 48).view(np.uint32), raw2.view(np.uint32))
    # A static input scale replaces the dynamic one.
    y3 = nx.linear(x, w, ws, s_w, bias=bias, input_scale=a.global_scale)
    assert np.array_equal(y3, y)


def test_linear_equals_the_oracle_through_explain(tmp_path):
    """The CLI's explain, given Python's output and the same checkpoint arrays, finds that the
    sequential contract with the alpha-before-bf16 epilogue reproduces it bit for bit."""
    x = random_bf16((24, 1024), seed=21, spread=12)  # wide magnitudes: fp32 sums round
    w, ws, s_w = _checkpoint_layer(64, 1024, seed=22)
    np.save(tmp_path / "t.x.npy", x)
    np.save(tmp_path / "t.weight.npy", w)
    np.save(tmp_path / "t.weight_scale.npy", ws)
    np.save(tmp_path / "t.weight_scale_2.npy", np.array(s_w, dtype=np.float32))
    y = nx.linear(x, w, ws, s_w, backend="cpu-oracle")
    rep = nx.explain("t:64:1024", inputs=tmp_path, reference=y, splits=[4], grains=[64])
    assert rep["exact"], rep["verdict"]
    assert rep["exact"][0]["contract"] == "sequential" and rep["exact"][0]["epilogue"] == "alpha_before_bf16"
    # And a split-K output is recognised as that contract, not as sequential.
    c = "split_k:4:grain=64:cublas:bf16_serial"
    y_split = nx.linear(x, w, ws, s_w, backend="cpu-oracle", contract=c)
    assert not np.array_equal(y_split, y)  # this data is sensitive to the reduction order
    rep = nx.explain("t:64:1024", inputs=tmp_path, reference=y_split, splits=[4], grains=[64])
    assert c in [e["contract"] for e in rep["exact"]]
    assert "sequential" not in [e["contract"] for e in rep["exact"]]


def test_auto_backend_is_the_first_available():
    backends = nx.available_backends()
    assert backends[-1] == "cpu-oracle"
    assert nx.resolve_backend("auto") == backends[0]
    # Split-K: the first kernel that runs it (every GPU kernel but sm90), else the CPU oracle.
    assert nx.resolve_backend("auto", "split_k:2") == next((b for b in backends[:-1] if b != "sm90"), "cpu-oracle")
    x = random_bf16((16, 64), seed=31)
    w, ws, s_w = _checkpoint_layer(32, 64, seed=32)
    y_auto = nx.linear(x, w, ws, s_w)
    assert np.array_equal(y_auto, nx.linear(x, w, ws, s_w, backend="cpu-oracle"))


def test_split_k_device_test_data_depends_on_the_contract():
    """The split-K device-path test's operands give other bits under its second contract than
    sequentially, so that test would see a kernel that ignored the contract."""
    a, w = split_k_operands()
    seq_raw = nx.matmul(a, w, backend="cpu-oracle", return_raw=True)[1]
    split_raw = nx.matmul(a, w, backend="cpu-oracle", contract=SPLIT_K_CONTRACTS[1], return_raw=True)[1]
    assert not np.array_equal(seq_raw.view(np.uint32), split_raw.view(np.uint32))


@pytest.mark.parametrize("n", [1, 17, 72, 100])
def test_linear_with_n_not_a_multiple_of_16(n):
    """A checkpoint stores N padded to 16 (weight [N16][K16/2]); the layer has N outputs, N taken from
    the bias or from out_features, bit for bit the oracle's GEMM on the logical [N][K] weight."""
    k, n16 = 96, (n + 15) // 16 * 16
    x = random_bf16((3, 5, k), seed=60 + n)
    w, ws, s_w = _checkpoint_layer(n, k, seed=61 + n)
    assert w.shape == (n16, k // 2)
    bias = random_bf16((n,), seed=62 + n)
    a = nx.quantize(x.reshape(15, k), pad=True)
    want, want_raw = nx.matmul(a, nx.NVFP4Tensor(w, ws, float(s_w), (n, k)), bias=bias, backend="cpu-oracle",
                               return_raw=True)
    assert want.shape == (15, n)
    for b in nx.available_backends():
        y, raw = nx.linear(x, w, ws, s_w, bias=bias, backend=b, return_raw=True)  # N from the bias
        assert y.shape == (3, 5, n) and raw.shape == (3, 5, n), b
        assert np.array_equal(y.reshape(15, n), want), b
        assert np.array_equal(raw.reshape(15, n).view(np.uint32), want_raw.view(np.uint32)), b
    # Without a bias, out_features says N; the weight's N16 rows give N16 columns whose first N are
    # the layer's (a padded row is zero and touches only its own column).
    y_n = nx.linear(x, w, ws, s_w, out_features=n, backend="cpu-oracle")
    y_16 = nx.linear(x, w, ws, s_w, backend="cpu-oracle")
    assert y_n.shape == (3, 5, n) and y_16.shape == (3, 5, n16)
    assert np.array_equal(y_16[..., :n], y_n)
    assert np.array_equal(nx.linear(x, w, ws, s_w, bias=bias, out_features=n, backend="cpu-oracle"),
                          want.reshape(3, 5, n))


def test_every_gpu_backend_matches_the_oracle():
    gpu = [b for b in nx.available_backends() if b != "cpu-oracle"]
    if not gpu:
        pytest.skip("no GPU backend on this machine")
    x = random_bf16((37, 200), seed=41)
    w, ws, s_w = _checkpoint_layer(72, 200, seed=42)
    bias = random_bf16((72,), seed=43)
    want, want_raw = nx.linear(x, w, ws, s_w, bias=bias, backend="cpu-oracle", return_raw=True)
    for b in gpu:
        got, raw = nx.linear(x, w, ws, s_w, bias=bias, backend=b, return_raw=True)
        assert np.array_equal(got, want), b
        assert np.array_equal(raw.view(np.uint32), want_raw.view(np.uint32)), b


def test_validate_returns_the_cli_summary(tmp_path, cli):
    rep = nx.validate(shapes="t:32:128", rows=16, out=tmp_path / "py")
    assert rep["status"].startswith("PASS"), rep["status"]
    r = cli("validate", "--shapes", "t:32:128", "--rows", 16, "--out", tmp_path / "cli", "--quiet")
    assert r.returncode == 0, r.stderr
    ref = json.loads((tmp_path / "cli" / "summary.json").read_text())

    def stable(j):  # timings and file names differ between two runs
        j = {k: v for k, v in j.items() if k not in ("total_seconds", "source_artifacts")}
        j["results"] = [{k: v for k, v in res.items() if k != "timing"} for res in j["results"]]
        return j

    assert stable(rep) == stable(ref)


def test_explain_plant_matches_the_cli(cli):
    args = dict(rows=16, plant="split_k:3:grain=128:cublas:bf16_partials", splits=[3], grains=[128])
    rep = nx.explain("t:32:384", **args)
    r = cli("explain", "--linear", "t:32:384", "--rows", 16, "--plant", args["plant"], "--splits", 3, "--grains", 128,
            "--json")
    assert r.returncode == 0, r.stderr
    assert rep == json.loads(r.stdout)
    assert args["plant"] in [e["contract"] for e in rep["exact"]]


# ---------------------------------------------------------------------------------------------
# Errors: the library's one-line messages in the matching Python exceptions.

def test_bad_input_raises_value_error():
    x = random_bf16((32, 64))
    with pytest.raises(ValueError, match="unknown recipe 'nope'"):
        nx.quantize(x, recipe="nope")
    with pytest.raises(ValueError, match="must be bf16"):
        nx.quantize(x.astype(np.float32))
    with pytest.raises(ValueError, match="2-D"):
        nx.quantize(x.reshape(-1))
    with pytest.raises(ValueError):
        nx.quantize(random_bf16((30, 64)))  # 30 rows without pad
    w, ws, s_w = _checkpoint_layer(32, 64, seed=1)
    with pytest.raises(ValueError, match="needs 40"):
        nx.linear(random_bf16((4, 80)), w, ws, s_w)
    with pytest.raises(ValueError, match="unknown backend"):
        nx.linear(x, w, ws, s_w, backend="tpu")
    with pytest.raises(ValueError, match="split_k"):
        nx.linear(x, w, ws, s_w, contract="split_k:0")
    with pytest.raises(ValueError, match="inferred from the bias length"):
        nx.linear(x, w, ws, s_w, bias=random_bf16((15,)))  # 15 outputs cannot have 32 weight rows
    with pytest.raises(ValueError, match="bias has 31 elements, out_features is 30"):
        nx.linear(x, w, ws, s_w, bias=random_bf16((31,)), out_features=30)
    for bad in (33, 16, 0, -1):  # 32 rows hold N = 17..32
        with pytest.raises(ValueError, match=f"out_features {bad} does not fit a weight of 32 rows") as info:
            nx.linear(x, w, ws, s_w, out_features=bad)
        assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="sequential contract only"):
        nx.linear(x, w, ws, s_w, backend="sm90", contract="split_k:2")
    with pytest.raises(ValueError, match="one value"):
        nx.linear(x, w, ws, np.ones(2, np.float32))
    for e in (ValueError,):
        with pytest.raises(e) as info:
            nx.validate(rows=0)
        assert "\n" not in str(info.value)


def test_shapes_are_checked_not_only_byte_counts():
    """A [64][32] matrix labelled (32, 64) has as many bytes (data and swizzled scales): refused,
    in one line, instead of decoding garbage."""
    q = nx.quantize(random_bf16((64, 32), seed=90))
    for bad in [lambda: nx.NVFP4Tensor(q.data, q.scales, q.global_scale, (32, 64)),
                lambda: nx.NVFP4Tensor(q.data.reshape(-1), q.scales, q.global_scale, (64, 32)),
                lambda: nx.NVFP4Tensor(q.data, q.scales.reshape(256, 2), q.global_scale, (64, 32)),
                lambda: nx.NVFP4Tensor(q.data, q.scales, q.global_scale, (64, 32, 1)),
                lambda: nx.linear(random_bf16((4, 32)), q.data, q.scales.reshape(256, 2), q.global_scale)]:
        with pytest.raises(ValueError) as info:
            bad()
        assert "\n" not in str(info.value)
    # Flat scales (the layout's bytes in one dimension) are the same tensor.
    flat = nx.NVFP4Tensor(q.data, q.scales.reshape(-1), q.global_scale, (64, 32))
    assert np.array_equal(nx.dequantize(flat), nx.dequantize(q))
    lin = nx.quantize(random_bf16((40, 72), seed=91), scale_layout="linear", pad=True)
    assert lin.scales.shape == (48, 5)
    with pytest.raises(ValueError, match=r"linear scales .* are \[48\]\[5\]"):
        nx.NVFP4Tensor(lin.data, lin.scales.reshape(5, 48), lin.global_scale, (40, 72), scale_layout="linear")


def test_read_only_and_big_endian_inputs(tmp_path):
    """np.load(mmap_mode='r'), np.frombuffer and big-endian arrays are read as they are."""
    x = random_bf16((32, 96), seed=92)
    w, ws, s_w = _checkpoint_layer(48, 96, seed=93)
    want_q = nx.quantize(x)
    want_y = nx.linear(x, w, ws, s_w)
    for name, a in (("x", x), ("w", w), ("ws", ws)):
        np.save(tmp_path / f"{name}.npy", a)
    ro = {name: np.load(tmp_path / f"{name}.npy", mmap_mode="r") for name in ("x", "w", "ws")}
    x_buf = np.frombuffer(x.tobytes(), dtype=np.uint16).reshape(x.shape)
    for xi in (ro["x"], x_buf, x.astype(">u2")):
        q = nx.quantize(xi)
        assert np.array_equal(q.data, want_q.data) and np.array_equal(q.scales, want_q.scales)
        assert nx.global_scale(xi) == want_q.global_scale
        assert np.array_equal(nx.linear(xi, ro["w"], ro["ws"], np.array(s_w, ">f4")), want_y)
    q_ro = nx.NVFP4Tensor(ro["w"], ro["ws"], float(s_w), (48, 96))
    assert np.array_equal(nx.dequantize(q_ro), nx.dequantize(nx.NVFP4Tensor(w, ws, float(s_w), (48, 96))))
    assert np.array_equal(nx.matmul(nx.quantize(x_buf, pad=True), q_ro), nx.matmul(want_q, q_ro))


def test_wrong_argument_types_name_the_argument():
    x = random_bf16((32, 64))
    w, ws, s_w = _checkpoint_layer(32, 64, seed=94)
    for call, err, name in [(lambda: nx.linear(x, w, ws, s_w, out_features=32.0), TypeError, "out_features"),
                            (lambda: nx.linear(x, w, ws, s_w, backend=None), TypeError, "backend"),
                            (lambda: nx.linear(x, w, ws, s_w, contract=1), TypeError, "contract"),
                            (lambda: nx.linear(x, w, ws, "half"), TypeError, "weight_scale_2"),
                            (lambda: nx.linear(x, w, ws, None), ValueError, "weight_scale_2 is missing"),
                            (lambda: nx.quantize(x, recipe=None), TypeError, "recipe"),
                            (lambda: nx.quantize(np.array([["a"]])), TypeError, "x must be a numeric array"),
                            (lambda: nx.global_scale(x, mode=2), TypeError, "mode"),
                            (lambda: nx.NVFP4Tensor(w, ws, s_w, (32, 64), nibbles="middle"), ValueError, "nibble"),
                            (lambda: nx.NVFP4Tensor(w, ws, s_w, (32.0, 64)), ValueError, "shape")]:
        with pytest.raises(err, match=name) as info:
            call()
        assert "\n" not in str(info.value), name
    # Integers and flags of other Python types are what they say.
    assert np.array_equal(nx.linear(x, w, ws, s_w, out_features=np.int64(32), return_raw=0), nx.linear(x, w, ws, s_w))
    assert np.array_equal(nx.quantize(x, pad=1).data, nx.quantize(x).data)


def test_a_scale_must_be_a_real_number():
    """float() parsed a str or bytes given as a scale ("0.5" was 0.5), read a bool as 1.0 and cut a
    complex number to its real part with a warning; each is a TypeError naming the argument now."""
    import warnings
    from fractions import Fraction

    x = random_bf16((32, 64), seed=109)
    w, ws, s_w = _checkpoint_layer(32, 64, seed=110)
    a, q = nx.quantize(x), nx.NVFP4Tensor(w, ws, s_w, (32, 64))
    strings = ["0.5", np.str_("0.5"), np.array("0.5"), ["0.5"], np.array(["0.5"], dtype=object)]
    others = [b"0.5", np.bytes_(b"0.5"), True, np.True_, np.array(True), [False], 0.5 + 0j, np.complex64(0.5),
              np.array([0.5], np.complex128), np.array(True, dtype=object)]
    calls = [("weight_scale_2", lambda v: nx.linear(x, w, ws, v), strings + others),
             ("input_scale", lambda v: nx.linear(x, w, ws, s_w, input_scale=v), strings + others),
             ("global_scale", lambda v: nx.quantize(x, v), others[:-1] + strings[2:]),  # a str is a mode's name
             ("alpha", lambda v: nx.matmul(a, q, alpha=v), strings + others),
             ("global_scale", lambda v: nx.NVFP4Tensor(w, ws, v, (32, 64)), strings + others)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, call, bad in calls:
            for v in bad:
                with pytest.raises(TypeError, match=f"^{name} must be a real number, got ") as info:
                    call(v)
                assert "\n" not in str(info.value), (name, v)
        # What was taken stays taken: Python and numpy numbers, 0-d and one-element arrays.
        want = nx.linear(x, w, ws, 0.5)
        for v in [0.5, np.float32(0.5), np.float64(0.5), np.float16(0.5), np.array(0.5, np.float32),
                  np.array([0.5]), [0.5], np.array([[0.5]], np.float16), Fraction(1, 2)]:
            assert np.array_equal(nx.linear(x, w, ws, v), want), v
            assert np.array_equal(nx.quantize(x, v).data, nx.quantize(x, 0.5).data), v
        for v in [1, np.int32(1), np.uint8(1), np.array([1], np.int64)]:
            assert np.array_equal(nx.linear(x, w, ws, v), nx.linear(x, w, ws, 1.0)), v


def test_a_negative_zero_global_scale_is_refused(cli, tmp_path):
    """-0 compares equal to 0, which quantize takes, but it wrote 0xFE block scales (no UE4M3 byte;
    0 writes 0x7E) and, as linear's input_scale, flipped the sign of zero outputs. Refused in
    Python as ``nvfp4 quantize --global-scale -0`` refuses it."""
    x = random_bf16((32, 64), seed=111)
    w, ws, s_w = _checkpoint_layer(32, 64, seed=112)
    for v in (-0.0, np.float32(-0.0), np.array([-0.0], np.float32), -0):
        if isinstance(v, int):  # the int -0 is 0
            assert nx.quantize(x, v).scales.max() == 0x7E
            continue
        for name, call in (("global_scale", lambda: nx.quantize(x, v)),
                           ("input_scale", lambda: nx.linear(x, w, ws, s_w, input_scale=v))):
            with pytest.raises(ValueError, match=f"^{name} must be >= 0 and not -0 .*, got -0.0$") as info:
                call()
            assert "\n" not in str(info.value)
    # A weight_scale_2 of -0 reached alpha and the sign of every output; a checkpoint's is refused.
    for v in (-0.0, np.float32(-0.0), np.array([-0.0], np.float32)):
        with pytest.raises(ValueError, match=r"^weight_scale_2 must be >= 0 and not -0 \(its sign would reach alpha "
                                             r"and the sign of every output\), got -0.0$"):
            nx.linear(x, w, ws, v)
    assert nx.linear(x, w, ws, 0.0).shape == (32, 32)
    assert nx.quantize(x, 0.0).global_scale == 0 and nx.linear(x, w, ws, s_w, input_scale=0.0).shape == (32, 32)
    np.save(tmp_path / "x.npy", x)
    for g, code in (("-0", 2), ("-0.0", 2), ("-0x0p0", 2), ("0", 0)):
        r = cli("quantize", "--input", tmp_path / "x.npy", "--out", tmp_path / "q", "--global-scale", g)
        assert r.returncode == code, (g, r.stderr)
        if code:
            assert r.stderr.strip().endswith(f"not -0 (its sign would reach the block scales), got '{g}'"), r.stderr
            assert len(r.stderr.strip().splitlines()) == 1
    assert np.load(tmp_path / "q.scales.npy").max() == 0x7E


def test_out_features_beyond_64_bits_is_one_line():
    """The compiled module takes int64; a larger Python int was its multi-line overload TypeError."""
    x = random_bf16((32, 64))
    w, ws, s_w = _checkpoint_layer(32, 64, seed=98)
    for xi in (x, np.zeros((0, 64), np.uint16)):
        for bad in (2**64, -2**63 - 1):
            with pytest.raises(ValueError, match="out_features .* out of range") as info:
                nx.linear(xi, w, ws, s_w, out_features=bad)
            assert "\n" not in str(info.value)


def test_a_0d_array_keeps_its_shape():
    """A 0-d x is no vector of one element: quantize says 0-D, linear refuses it even where the
    weight has K = 1 (it gave an [N] result)."""
    with pytest.raises(ValueError, match="x must be 2-D, got 0-D"):
        nx.quantize(np.array(0x3F80, np.uint16))
    w, ws, s_w = _checkpoint_layer(16, 1, seed=99)
    assert nx.linear(np.array([0x3F80], np.uint16), w, ws, s_w).shape == (16,)
    with pytest.raises(ValueError, match="at least one dimension") as info:
        nx.linear(np.array(0x3F80, np.uint16), w, ws, s_w)
    assert "\n" not in str(info.value)
    assert nx.global_scale(np.array(0x4000, np.uint16)) == nx.global_scale(np.array([0x4000], np.uint16))


def test_nibble_order_aliases_are_the_canonical_orders():
    x = random_bf16((32, 64), seed=95)
    q = nx.quantize(x, nibbles="comfy", scale_layout="128x4")
    assert (q.nibbles, q.scale_layout) == ("hi_first", "swizzled128x4")
    w = nx.quantize(random_bf16((16, 64), seed=96, scale=0.05))
    want = nx.matmul(nx.quantize(x), w)
    assert np.array_equal(nx.matmul(q, w), want)  # "comfy" and "hi_first" are one order
    lo = nx.quantize(x, nibbles="ptx")
    assert lo.nibbles == "lo_first"
    w_lo = nx.NVFP4Tensor(((w.data << 4) | (w.data >> 4)).astype(np.uint8), w.scales, w.global_scale, w.shape, "cutlass")
    assert w_lo.nibbles == "lo_first" and np.array_equal(nx.matmul(lo, w_lo), want)


@pytest.mark.parametrize("lead", [(0,), (2, 0), (0, 3)])
def test_linear_on_an_empty_batch(lead):
    k = 64
    w, ws, s_w = _checkpoint_layer(24, k, seed=97)  # 32 weight rows
    x = np.zeros((*lead, k), np.uint16)
    y = nx.linear(x, w, ws, s_w)
    assert y.shape == (*lead, 32) and y.dtype == np.uint16
    y, raw = nx.linear(x, w, ws, s_w, bias=random_bf16((24,)), return_raw=True)
    assert y.shape == raw.shape == (*lead, 24) and raw.dtype == np.float32
    assert nx.linear(x, w, ws, s_w, out_features=20).shape == (*lead, 20)
    with pytest.raises(ValueError, match="out_features 8 does not fit"):
        nx.linear(x, w, ws, s_w, out_features=8)


@pytest.mark.parametrize("lead", [(0,), (2, 0)])
def test_an_empty_batch_is_checked_as_any_other(lead):
    """Only the result's shape was checked for an empty batch: a wrong K, a float32 x, a missing
    weight_scale_2 or scales of the wrong size gave an empty result instead of the error a
    one-row batch gets."""
    w, ws, s_w = _checkpoint_layer(24, 64, seed=97)
    x = np.zeros((*lead, 64), np.uint16)
    for call, match in [(lambda: nx.linear(np.zeros((*lead, 80), np.uint16), w, ws, s_w), "x has K = 80"),
                        (lambda: nx.linear(x.astype(np.float32), w, ws, s_w), "x must be bf16"),
                        (lambda: nx.linear(x, w, ws, None), "weight_scale_2 is missing"),
                        (lambda: nx.linear(x, w, ws, np.float32(np.inf)), "global scale must be finite"),
                        (lambda: nx.linear(x, w, ws[:64], s_w), "scales have 256 bytes"),
                        (lambda: nx.linear(x, w, ws, s_w, bias=np.zeros(24, np.float32)), "bias must be bf16")]:
        with pytest.raises(ValueError, match=match) as info:
            call()
        assert "\n" not in str(info.value)
    # The same calls on one row raise the same errors (the reference behaviour).
    with pytest.raises(ValueError, match="x has K = 80"):
        nx.linear(np.zeros((1, 80), np.uint16), w, ws, s_w)


def test_k_of_zero_names_k():
    """x of shape [M][0]: numpy's "cannot reshape array of size 0" before, which names no argument."""
    w, ws, s_w = _checkpoint_layer(16, 16, seed=100)
    for shape in [(4, 0), (0,), (0, 0)]:
        with pytest.raises(ValueError, match=r"K \(x's last dimension\) must be positive, got 0") as info:
            nx.linear(np.zeros(shape, np.uint16), w, ws, s_w)
        assert "\n" not in str(info.value)


def test_matmul_refuses_a_non_finite_host_alpha():
    """The docstring (and the device path) refuse a host alpha that is not finite; the host path
    applied it, every output NaN or Inf."""
    a = nx.quantize(random_bf16((32, 64), seed=101))
    w = nx.quantize(random_bf16((16, 64), seed=102, scale=0.05))
    for alpha in (float("nan"), float("inf"), -np.inf, np.float64(1e39)):
        with pytest.raises(ValueError, match="alpha must be finite") as info:
            nx.matmul(a, w, alpha=alpha)
        assert "\n" not in str(info.value)
    big = nx.NVFP4Tensor(a.data, a.scales, 3e38, a.shape)  # finite scales whose product is not
    with pytest.raises(ValueError, match=r"a.global_scale \* w.global_scale\) must be finite, got inf"):
        nx.matmul(big, nx.NVFP4Tensor(w.data, w.scales, 3e38, w.shape))
    nan = nx.NVFP4Tensor(a.data, a.scales, float("nan"), a.shape)
    with pytest.raises(ValueError, match="must be finite, got nan"):
        nx.matmul(nan, w)
    assert np.array_equal(nx.matmul(a, w, alpha=np.float32(a.global_scale) * np.float32(w.global_scale)),
                          nx.matmul(a, w))


def test_linear_refuses_a_non_finite_host_alpha():
    """A static input_scale times weight_scale_2 beyond float32 (3e38 * 10) was applied, every output
    Inf or NaN, where matmul refuses the same overflow of its two global scales."""
    x = random_bf16((16, 64), seed=107)
    w, ws, s_w = _checkpoint_layer(32, 64, seed=108)
    for s_in, s_w2, xi in ((3e38, 10.0, x), (np.float32(2e20), np.array([2e20], np.float32), x),
                           (3e38, 10.0, np.zeros((0, 64), np.uint16))):
        with pytest.raises(ValueError, match=r"^alpha = f32\(input_scale \* weight_scale_2\) must be finite, "
                                             r"got inf \(") as info:
            nx.linear(xi, w, ws, s_w2, input_scale=s_in, return_raw=True)
        assert "\n" not in str(info.value)
    # The dynamic s_x of a huge x (6.3e34 here) is formed by the library: refused there, in the same words.
    huge = np.full((16, 64), 0x7F00, np.uint16)
    with pytest.raises(ValueError, match=r"^alpha = f32\(s_x \(x's dynamic scale\) \* weight_scale_2\) must be "
                                         r"finite, got inf \(") as info:
        nx.linear(huge, w, ws, 1e10)
    assert "\n" not in str(info.value)
    # A finite product is applied as before.
    assert np.isfinite(bf16_values(nx.linear(x, w, ws, 1e30, input_scale=1e8))).any()
    assert np.array_equal(nx.linear(huge, w, ws, s_w), nx.linear(huge, w, ws, s_w, input_scale=nx.global_scale(huge)))


def test_operand_errors_name_the_argument():
    """matmul's w was called 'b', dequantize's scales 'data scales', linear's weight_scale 'weight
    scales', and the library's own messages ("global scale must be finite") named no operand."""
    a = nx.quantize(random_bf16((32, 64), seed=103))
    w = nx.quantize(random_bf16((16, 64), seed=104, scale=0.05))
    w64, ws, s_w = _checkpoint_layer(16, 64, seed=105)
    for call, want in [
            (lambda: nx.matmul(a, nx.NVFP4Tensor(w.data.astype(np.float64), w.scales, 1.0, w.shape)),
             "w.data must be a one-byte array"),
            (lambda: nx.matmul(a, nx.NVFP4Tensor(w.data, w.scales.astype(np.float32), 1.0, w.shape)),
             "w.scales must be a one-byte array"),
            (lambda: nx.matmul(nx.NVFP4Tensor(a.data.astype(np.int16), a.scales, 1.0, a.shape), w),
             "a.data must be a one-byte array"),
            (lambda: nx.dequantize(nx.NVFP4Tensor(a.data, a.scales.astype(np.float64), 1.0, a.shape)),
             "q.scales must be a one-byte array"),
            (lambda: nx.dequantize(nx.NVFP4Tensor(a.data, a.scales, float("nan"), a.shape)),
             "q: global scale must be finite"),
            (lambda: nx.linear(random_bf16((4, 64)), w64, ws.astype(np.float32), s_w), "weight_scale must be a one-byte"),
            (lambda: nx.linear(random_bf16((4, 64)), w64, ws[:64], s_w), "weight: block scales have 256 bytes"),
            (lambda: nx.linear(random_bf16((4, 64)), w64, ws, float("nan")), "weight: global scale must be finite")]:
        with pytest.raises(ValueError, match=f"^{want}") as info:
            call()
        assert "\n" not in str(info.value)


def test_matmul_and_dequantize_take_nvfp4_tensors():
    """An array or None where an NVFP4Tensor belongs was an AttributeError ('no attribute nibbles')."""
    x = random_bf16((32, 64), seed=106)
    q = nx.quantize(x)
    for call, name in [(lambda: nx.matmul(x, q), "a"), (lambda: nx.matmul(q, None), "w"),
                       (lambda: nx.matmul(q, (q.data, q.scales)), "w"), (lambda: nx.dequantize(x), "q"),
                       (lambda: nx.dequantize(None), "q")]:
        with pytest.raises(TypeError, match=f"^{name} must be an NVFP4Tensor") as info:
            call()
        assert "\n" not in str(info.value)


def test_clear_prepared_arguments():
    """Only torch weights on the device path are cached: a numpy weight drops nothing, and anything
    that is no array is refused rather than read as a weight that had nothing cached."""
    assert "clear_prepared" in nx.__all__
    nx.clear_prepared()
    assert nx.clear_prepared() == 0  # an empty cache
    assert nx.clear_prepared(np.zeros((16, 8), np.uint8)) == 0
    for bad in ("weight", 3, [np.zeros(4)]):
        with pytest.raises(TypeError, match="^weight must be a torch tensor, a numpy array or None, got ") as info:
            nx.clear_prepared(bad)
        assert "\n" not in str(info.value)


def test_validate_and_explain_refuse_a_bool_for_a_value():
    """rows=True became the flag --rows without its value (the next option taken as it, or an
    'unexpected argument' error) and rows=False silently the default."""
    for call, name in [(lambda: nx.validate(shapes="t:32:64", rows=True), "rows must be an integer"),
                       (lambda: nx.validate(shapes="t:32:64", rows=False), "rows must be an integer"),
                       (lambda: nx.validate(shapes=True), "shapes must be a string"),
                       (lambda: nx.explain("t:32:64", plant="sequential", seed=False), "seed must be an integer"),
                       (lambda: nx.explain("t:32:64", plant="sequential", splits=True), "splits must be a list of integers")]:
        with pytest.raises(TypeError, match=f"^{name}, got (True|False)$"):
            call()
    # The flags take bools, as before.
    assert nx.explain("t:32:64", plant="sequential", rows=16, plant_raw=False)["exact"]


def test_explain_errors_about_an_array_reference_name_reference():
    """An array reference is saved to a temporary file: its errors named that file (already removed
    when the caller reads the message) instead of the argument."""
    for ref, err, want in [(np.zeros((32, 32), np.float64), TypeError, "^reference must be bf16 .* got float64$"),
                           (np.zeros((32, 32), np.uint8), TypeError, "^reference must be bf16 .* got uint8$"),
                           (np.zeros(5, np.uint16), ValueError, r"^reference is \[5\], expected \[M, N\] = \[16, 32\]$")]:
        with pytest.raises(err, match=want) as info:
            nx.explain("t:32:64", rows=16, reference=ref)
        assert "nvfp4-explain-" not in str(info.value) and "\n" not in str(info.value)


def test_explain_refuses_a_reference_of_another_shape(cli, tmp_path):
    """Only the count was checked: a transposed [N][M], flat or batched dump of M*N values was read
    as [M][N] and explained as matching no contract."""
    good = np.load(_planted(tmp_path))
    assert good.shape == (16, 32) and nx.explain("t:32:64", rows=16, reference=good)["exact"]
    for bad in (good.reshape(32, 16), good.T, good.reshape(-1), good.reshape(1, 16, 32)):
        want = re.escape(f"is {list(bad.shape)}, expected [M, N] = [16, 32]") + "$"
        with pytest.raises(ValueError, match="^reference " + want) as info:
            nx.explain("t:32:64", rows=16, reference=bad)
        assert "\n" not in str(info.value)
        np.save(tmp_path / "bad.npy", np.ascontiguousarray(bad))
        r = cli("explain", "--linear", "t:32:64", "--rows", "16", "--reference", tmp_path / "bad.npy")
        assert r.returncode == 2 and re.search(want, r.stderr.strip()), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_explain_reference_dtypes_are_the_clis(cli, tmp_path):
    """An array's dtype is checked in Python, a file's by the CLI: the two take the same dtypes."""
    y = np.load(_planted(tmp_path))
    for dt in (np.uint16, np.float32, np.uint8, np.int32, np.float16, np.float64):
        a = y.astype(dt)
        try:
            nx.explain("t:32:64", rows=16, reference=a)
            py_ok = True
        except TypeError:
            py_ok = False
        np.save(tmp_path / "r.npy", a)
        r = cli("explain", "--linear", "t:32:64", "--rows", "16", "--reference", tmp_path / "r.npy")
        # 1: explained, no contract reproduces it (float32 values of a bf16 output are no raw dump).
        assert py_ok == (r.returncode in (0, 1)) == (dt in (np.uint16, np.float32)), (dt, r.returncode, r.stderr)
        assert r.returncode in (0, 1, 2) and len(r.stderr.strip().splitlines()) == (r.returncode == 2)


def _planted(tmp_path):
    nx.explain("t:32:64", rows=16, plant="sequential", save_reference=tmp_path / "y.npy")
    return tmp_path / "y.npy"


def test_gpu_kernels_are_detected_from_the_build_targets():
    """CUDA tensors go through the host on a GPU the library has no machine code for (the rule, the
    library's own through the binding; test_torch.py runs the host path on a GPU)."""
    built = "sm_90a sm_120a sm_121a"
    assert all(nx._core.kernels_cover(*cc, built) for cc in [(9, 0), (12, 0), (12, 1)])
    assert not any(nx._core.kernels_cover(*cc, built) for cc in [(8, 0), (8, 9), (10, 0), (9, 1), (12, 2)])
    assert not nx._core.kernels_cover(12, 0, "sm_90a")  # a Hopper-only build on an RTX 50
    assert not nx._core.kernels_cover(12, 1, "sm_120a")  # arch-specific code runs on its own GPU only
    assert nx._core.kernels_cover(12, 0, "compute_90")  # portable PTX: JIT-compiled on later GPUs
    assert not nx._core.kernels_cover(9, 0, "")  # a build without CUDA
    # Without a list, this build's own, the one cuda_targets() reports (empty without CUDA).
    own = nx._core.cuda_targets()
    for cc in [(9, 0), (12, 0), (12, 1), (8, 9), (10, 0)]:
        assert nx._core.kernels_cover(*cc) == nx._core.kernels_cover(*cc, own), (cc, own)
    assert nx._core.kernels_cover(9, 0) == ("sm_90a" in own.split())


def test_missing_file_raises_os_error(tmp_path):
    with pytest.raises(OSError):
        nx.explain("t:32:64", reference=str(tmp_path / "missing.npy"))


def test_unavailable_backend_raises_not_implemented():
    if "gpu-model" in nx.available_backends():
        pytest.skip("this machine has a GPU: gpu-model runs")
    x = random_bf16((16, 64))
    w, ws, s_w = _checkpoint_layer(16, 64, seed=2)
    with pytest.raises(NotImplementedError) as info:
        nx.linear(x, w, ws, s_w, backend="gpu-model")
    assert "\n" not in str(info.value)
    with pytest.raises(RuntimeError):  # NotImplementedError is a RuntimeError
        nx.quantize(x, device="gpu")


# ---------------------------------------------------------------------------------------------
# python -m nvfp4_exact is the CLI: same commands and exit codes.

@pytest.mark.parametrize("args,code", [(["--help"], 0), ([], 2), (["frobnicate"], 2), (["quantize", "--bogus"], 2),
                                        (["quantize", "--input", "/nonexistent.npy", "--out", "/tmp/x"], 4),
                                        (["quantize", "--input", "", "--out", "/tmp/x"], 2), (["inspect", ""], 2),
                                        (["version"], 0)])
def test_cli_exit_codes(cli, args, code):
    r = cli(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    if code >= 2 and args:
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_main_in_process(capfd):
    from nvfp4_exact.__main__ import main

    assert main(["version"]) == 0
    out, _ = capfd.readouterr()
    assert out.startswith("nvfp4 " + nx.__version__)
