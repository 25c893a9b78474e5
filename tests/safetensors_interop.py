"""The Python `safetensors` package's side of the interop tests (tests/test_checkpoint.cpp).

  write OUT NPYDIR   save every NPYDIR/<name>.npy as tensor <name> with safetensors.numpy.save_file,
                     metadata from NPYDIR/metadata.json when present
  read FILE          parse FILE with safetensors (its Rust parser checks the header) and print
                     {"tensors": {name: {"dtype", "shape", "sha256"}}, "metadata": {...}} as JSON

numpy only: no torch.
"""
import hashlib
import json
import os
import sys

import numpy as np
import safetensors
import safetensors.numpy


def write(out, npydir):
    tensors = {}
    for f in sorted(os.listdir(npydir)):
        if f.endswith(".npy"):
            tensors[f[: -len(".npy")]] = np.load(os.path.join(npydir, f))
    meta_path = os.path.join(npydir, "metadata.json")
    metadata = None
    if os.path.exists(meta_path):
        with open(meta_path) as fh:
            metadata = json.load(fh)
    safetensors.numpy.save_file(tensors, out, metadata=metadata)


def read(path):
    with open(path, "rb") as fh:
        blob = fh.read()
    out = {"tensors": {}, "metadata": {}}
    # deserialize() covers every dtype (F8_E4M3, BF16 included); numpy's loader only its own ones.
    for name, view in safetensors.deserialize(blob):
        out["tensors"][name] = {
            "dtype": view["dtype"],
            "shape": list(view["shape"]),
            "sha256": hashlib.sha256(bytes(view["data"])).hexdigest(),
        }
    with safetensors.safe_open(path, framework="numpy") as f:
        out["metadata"] = f.metadata() or {}
        for name in f.keys():
            dtype = out["tensors"][name]["dtype"]
            if dtype in ("F32", "F16", "U8", "I64", "I32", "U16", "BOOL"):
                arr = f.get_tensor(name)
                got = hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()
                if got != out["tensors"][name]["sha256"]:
                    raise SystemExit("numpy view of %s differs from the raw bytes" % name)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        raise SystemExit(__doc__)
