"""umap-learn's densMAP as a benchmark peer, run from its source.

    UMAP_SRC=/path/to/umap-0.5.7 NUMBA_NUM_THREADS=2 /usr/bin/python3 bench/densmap-peer.py \
        X.f32 N D N_NEIGHBORS OUT.f32 [OTHER.f32]

X.f32 holds N x D float32 values row by row (as R's
writeBin(as.vector(t(X)), size = 4) writes them). Runs
umap.UMAP(densmap=True, output_dens=True, n_neighbors=N_NEIGHBORS) at its
other defaults, writes the embedding to OUT.f32 the same way, and prints one
line of JSON: the seconds of fit_transform() and the Pearson correlation of
the log radii umap-learn reports (rad_orig, rad_emb). The numba functions are
compiled on a small random problem before the clock starts.

With OTHER.f32 (another N x 2 layout of the same rows, say lsnn's), the line
also holds "other_radius_correlation": the correlation of umap-learn's data
radii (rad_orig) with the other layout's radii measured as umap-learn
measures its own layout's: over a new UMAP graph of that layout (its
N_NEIGHBORS nearest neighbours), each point's membership-weighted mean
distance (not squared: umap-learn squares the data's distances for
rad_orig but not the layout's for rad_emb), as log(1e-8 + r). The peer's
own layout is measured again the same way ("remeasured_radius_correlation"),
so that the two numbers compare.
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ.get("UMAP_SRC", ""))
import umap  # noqa: E402
from umap.umap_ import fuzzy_simplicial_set, nearest_neighbors  # noqa: E402


def layout_log_radii(Y, k):
    """Log radii of a layout over its own UMAP graph (as rad_emb is made)."""
    rng = np.random.RandomState(0)
    idx, dist, _ = nearest_neighbors(Y, k, "euclidean", {}, False, rng)
    graph, _, _, dists = fuzzy_simplicial_set(Y, k, rng, "euclidean", {}, idx, dist,
                                              return_dists=True)
    graph = graph.tocoo()
    graph.sum_duplicates()
    graph.eliminate_zeros()
    dist = np.asarray(dists.tocsr()[graph.row, graph.col]).ravel()
    n = Y.shape[0]
    num = np.zeros(n)
    den = np.zeros(n)
    for ends in (graph.row, graph.col):
        np.add.at(num, ends, graph.data * dist)
        np.add.at(den, ends, graph.data)
    return np.log(1e-8 + num / den)


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
    res = {"seconds": seconds, "radius_correlation": corr}
    if len(sys.argv) > 6:
        other = np.fromfile(sys.argv[6], dtype=np.float32).reshape(n, 2)
        res["other_radius_correlation"] = float(
            np.corrcoef(rad_orig, layout_log_radii(other, k))[0, 1])
        res["remeasured_radius_correlation"] = float(
            np.corrcoef(rad_orig, layout_log_radii(Y, k))[0, 1])
    print(json.dumps(res))


if __name__ == "__main__":
    main()
