"""The posts service: posts, votes, comments, merges, roadmap and similarity search."""

import os

# numpy's OpenBLAS starts a thread per core that spins after each product, waiting for the
# next: a similar-post search then costs a second core for milliseconds (docs/benchmarks.md,
# "Everyday operations"). A service process runs its searches one at a time; set before
# anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
