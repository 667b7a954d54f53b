"""Robustness, batch invariance, thread safety, fidelity, load time, RSS and timings of embeddings.Embedder."""
import time, threading, sys
import numpy as np

def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

import onnxruntime, tokenizers  # imports counted apart from the load
r0 = rss_kb(); t0 = time.perf_counter()
from embeddings import Embedder
e = Embedder()
load = time.perf_counter() - t0; r1 = rss_kb()
print(f"load {load*1000:.0f} ms, RSS +{(r1-r0)/1024:.1f} MiB (before {r0/1024:.1f}, after {r1/1024:.1f})")

weird = ["", " ", "🔥🚀💯", "深色模式", "الوضع الليلي", "שלום עולם", "a\x00b\x01\x1b[31mred\u200b\u202e", "\ud800 lone surrogate",
         "x" * 10_000, "word " * 2000, "\n\t\r", "Ω≈ç√∫˜µ≤≥÷", "🏳️‍🌈👨‍👩‍👧‍👦", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǫ̗̻̝"]
v = e.embed(weird)
assert v.shape == (len(weird), 384) and v.dtype == np.float32
assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5), np.linalg.norm(v, axis=1)
assert e.embed([]).shape == (0, 384)
print("weird inputs ok")

titles = ["Dark mode please", "Add a dark theme", "Export data to CSV", "Night mode for late work sessions", "Download my reports as a spreadsheet"] * 20
single = np.stack([e.embed([t])[0] for t in titles[:5]])
batch = e.embed(titles)[:5]
print("batch vs single max abs diff", float(np.abs(single - batch).max()))
print("cos dark/theme", float(single[0] @ single[1]), "dark/csv", float(single[0] @ single[2]), "csv/spreadsheet", float(single[2] @ single[4]))

# thread safety: 4 threads embedding at once give the same vectors
ref = e.embed(titles[:40]); errs = []
def work():
    for _ in range(5):
        if not np.allclose(e.embed(titles[:40]), ref, atol=1e-5): errs.append(1)
ts = [threading.Thread(target=work) for _ in range(4)]; [t.start() for t in ts]; [t.join() for t in ts]
print("threads ok" if not errs else f"thread mismatches {len(errs)}")

# timings
e.embed(["warm up"])
n = 50; t0 = time.perf_counter()
for i in range(n): e.embed([f"Add a dark theme to the dashboard {i}"])
print(f"1 title: {1000*(time.perf_counter()-t0)/n:.2f} ms")
import json
from pathlib import Path
posts = [p for g in json.load(open(Path(__file__).resolve().parents[1] / "data" / "duplicates.json"))["groups"] for p in g["posts"]][:100]
best = 1e9
for _ in range(3):
    t0 = time.perf_counter(); e.embed(posts); best = min(best, time.perf_counter() - t0)
print(f"100 titles: {1000*best:.0f} ms ({10*best:.2f} ms/title)")
print(f"RSS after use {rss_kb()/1024:.1f} MiB")
print("informative:", e.informative(["🌙🖤", "", "Dark mode", "二段階認証", "\ud800"]).tolist())
t0 = time.perf_counter(); Embedder(verify=False); print(f"load without sha256 check {1000*(time.perf_counter()-t0):.0f} ms")
# fidelity: sentence-transformers' published fp32 all-MiniLM-L6-v2 cosines for these three sentences
# are 0.6660, 0.1046, 0.1411 (its quickstart); the int8 file must stay within 0.01
v = e.embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
got = [float(v[0] @ v[1]), float(v[0] @ v[2]), float(v[1] @ v[2])]
assert max(abs(g - r) for g, r in zip(got, [0.6660, 0.1046, 0.1411])) < 0.01, got
print("fidelity vs published fp32 cosines:", [round(g, 4) for g in got], "vs [0.666, 0.1046, 0.1411]")
