"""umap-learn's densMAP as a benchmark peer, run from its source.

    UMAP_SRC=/path/to/umap-0.5.7 NUMBA_NUM_THREADS=2 /usr/bin/python3 bench/densmap-peer.py \
        X.f32 N D N_NEIGHBORS OUT.f32

X.f32 holds N x D float32 values row by row (as R's
writeBin(as.vector(t(X)), size = 4) writes them). Runs
umap.UMAP(densmap=True, output_dens=True, n_neighbors=N_NEIGHBORS) at its
other defaults, writes the embedding to OUT.f32 the same way, and prints one
line of JSON: the seconds of fit_transform() and the Pearson correlation of
the log radii umap-learn reports (rad_orig, rad_emb). The numba functions are
compiled on a small random problem before the clock starts.
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ.get("UMAP_SRC", ""))
import umap  # noqa: E402


def main():
    path, n, d, k, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    X = np.fromfile(path, dtype=np.float32).reshape(n, d)
    warm = np.random.default_rng(0).normal(size=(2000, d)).astype(np.float32)
    umap.UMAP(densmap=True, output_dens=True, n_neighbors=k, n_epochs=20).fit_transform(warm)
    t0 = time.time()
    Y, rad_orig, rad_emb = umap.UMAP(densmap=True, output_dens=True, n_neighbors=k).fit_transform(X)
    seconds = time.time() - t0
    Y.astype(np.float32).tofile(out)
    corr = float(np.corrcoef(rad_orig, rad_emb)[0, 1])
    print(json.dumps({"seconds": seconds, "radius_correlation": corr}))


if __name__ == "__main__":
    main()
