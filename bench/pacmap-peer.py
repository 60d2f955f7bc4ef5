"""The official PaCMAP / LocalMAP as a benchmark peer, run from its source.

    PACMAP_SRC=/path/to/PaCMAP NUMBA_NUM_THREADS=2 /usr/bin/python3 bench/pacmap-peer.py \
        METHOD X.f32 N D OUT.f32 [NEW.f32 M OUT_NEW.f32]

METHOD is pacmap or localmap. X.f32 holds N x D float32 values row by row
(as R's writeBin(as.vector(t(X)), size = 4) writes them). The embedding is
written to OUT.f32 the same way; with NEW.f32, its M rows are placed by
transform() and written to OUT_NEW.f32. Prints one line of JSON with the
seconds of fit_transform() and of transform(). The numba functions are
compiled on a small random problem before the clock starts.
"""
import json
import os
import sys
import time

import numpy as np

src = os.environ.get("PACMAP_SRC", "")
sys.path.insert(0, os.path.join(src, "source"))
import pacmap  # noqa: E402


def model(method):
    cls = pacmap.LocalMAP if method == "localmap" else pacmap.PaCMAP
    # n_neighbors = None: the size rule (10 up to 10,000 rows, then growing)
    return cls(n_components=2, n_neighbors=None)


def main():
    method, path, n, d, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    X = np.fromfile(path, dtype=np.float32).reshape(n, d)
    warm = np.random.default_rng(0).normal(size=(500, d)).astype(np.float32)
    w = model(method)
    w.fit_transform(warm, init="pca")
    w.transform(warm[:50], basis=warm)
    t0 = time.time()
    m = model(method)
    Y = m.fit_transform(X, init="pca")
    fit = time.time() - t0
    Y.astype(np.float32).tofile(out)
    res = {"method": method, "n": n, "fit_seconds": fit, "n_neighbors": m.n_neighbors}
    if len(sys.argv) > 6:
        new = np.fromfile(sys.argv[6], dtype=np.float32).reshape(int(sys.argv[7]), d)
        t0 = time.time()
        Yn = m.transform(new, basis=X)
        res["transform_seconds"] = time.time() - t0
        Yn.astype(np.float32).tofile(sys.argv[8])
    print(json.dumps(res))


if __name__ == "__main__":
    main()
