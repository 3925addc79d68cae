"""Writes a VectorDBBench custom dataset: clustered synthetic vectors.

Usage: python dataset.py ROWS OUT_DIR

OUT_DIR gets train.parquet (id, emb), test.parquet (100 queries) and
neighbors.parquet (the exact 100 nearest train ids of each query under L2),
the files VectorDBBench's PerformanceCustomDataset case reads. The vectors
are 200 Gaussian centres in 128 dimensions plus unit noise (seed 7).
"""
import numpy as np, pandas as pd, sys, os
n, dim, nq, k = int(sys.argv[1]), 128, 100, 100
rng = np.random.default_rng(7)
centres = rng.normal(size=(200, dim)).astype(np.float32) * 4
train = (centres[rng.integers(0, 200, n)] + rng.normal(size=(n, dim)).astype(np.float32)).astype(np.float32)
test = (centres[rng.integers(0, 200, nq)] + rng.normal(size=(nq, dim)).astype(np.float32)).astype(np.float32)
d = (test**2).sum(1)[:, None] - 2 * test @ train.T + (train**2).sum(1)[None, :]
gt = np.argsort(d, axis=1)[:, :k]
out = sys.argv[2]; os.makedirs(out, exist_ok=True)
pd.DataFrame({"id": np.arange(n), "emb": list(train)}).to_parquet(f"{out}/train.parquet")
pd.DataFrame({"id": np.arange(nq), "emb": list(test)}).to_parquet(f"{out}/test.parquet")
pd.DataFrame({"id": np.arange(nq), "neighbors_id": list(gt)}).to_parquet(f"{out}/neighbors.parquet")
