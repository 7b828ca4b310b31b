"""``LlamaGenerator``: llama.cpp in process through llama-cpp-python.

The model's own chat template (``create_chat_completion``, streaming). The evaluated system
prompt is kept on disk (KV state), so a one-shot `rag ask` does not pay for it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ..errors import ModelError
from .base import REPEAT_PENALTY, STOP, Collector, Generation, Message, OnToken
from .prompt import SYSTEM_PROMPT

# A model file under this size decodes one token faster on one thread than on two: its
# per-token work is so small that waking the second thread costs more than it saves
# (SmolLM2-135M on the 2-core machine, OMP_WAIT_POLICY=PASSIVE: 68 tokens/s on one thread
# against 42 on two; the prompt still uses every core). Larger models keep every core.
SMALL_MODEL_BYTES = 256 * 2**20


class LlamaGenerator:
    """llama.cpp through llama-cpp-python. Loads lazily; ``preload`` loads in a thread."""

    def __init__(self, model_path: Path, *, n_ctx: int = 2048, n_threads: int = 0,
                 n_gpu_layers: int = -1, cache_dir: Path | None = None, model_name: str = ""):
        """``n_threads`` 0 chooses: every core for the prompt, and for decoding too unless the
        model is small (``SMALL_MODEL_BYTES``); a number given is used for both."""
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.notices: list[str] = []
        self.n_threads = n_threads if n_threads > 0 else (os.cpu_count() or 1)
        self.decode_threads = n_threads if n_threads > 0 else _decode_threads(self.model_path, self.n_threads)
        self.n_gpu_layers = n_gpu_layers
        self.cache_dir = cache_dir
        self.model_name = model_name or self.model_path.name
        self._llm = None
        self._formatter = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.prefix_cached = False  # the system prompt's state came from disk
        self.prefix_tokens = 0  # tokens of that state (the system prompt), once loaded
        self.placement = ""  # where the layers run ("cpu", "CUDA0:all"), once loaded

    # -- loading ------------------------------------------------------------------------
    def preload(self) -> None:
        """Load the model in a background thread (llama.cpp releases the GIL while it loads)."""
        if self._llm is None and self._thread is None:
            self._thread = threading.Thread(target=self._load_guarded, daemon=True,
                                            name="ragcli-llm-load")
            self._thread.start()

    def _load_guarded(self) -> None:
        try:
            self._load()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            self._error = exc

    def wait_loaded(self) -> None:
        """Block until a background load finishes; raise its error, if any."""
        self.llm  # noqa: B018 - the property joins the loading thread, or loads here

    @property
    def llm(self):
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
            self._thread = None
            if self._error is not None:
                error, self._error = self._error, None
                raise error
        if self._llm is None:
            self._load()
        return self._llm

    def _load(self) -> None:
        with self._lock:
            if self._llm is not None:
                return
            from ..models.gguf import read_gguf_info
            from ..models.llama import load_llama_cpp

            read_gguf_info(self.model_path)  # garbage or truncated: an error, not a crash
            llama_cpp = load_llama_cpp()  # llama.cpp's own log silenced
            from llama_cpp import llama_chat_format

            from ..models.backend import describe_backends

            gpu_layers = self.n_gpu_layers
            if gpu_layers < 0:
                gpu_layers = -1 if llama_cpp.llama_supports_gpu_offload() else 0
            self.placement = describe_backends().placement(gpu_layers)
            try:
                llm = llama_cpp.Llama(
                    model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.decode_threads,
                    n_threads_batch=self.n_threads, n_gpu_layers=gpu_layers, n_batch=256,
                    n_ubatch=256, flash_attn=True, verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelError(f"llama.cpp cannot load {self.model_path}: {exc}",
                                 hint="Use a GGUF generation model llama.cpp supports, "
                                      "or unset RAG_LLM_MODEL for the built-in one.") from None
            template = llm.metadata.get("tokenizer.chat_template")
            if template:
                eos_id, bos_id = llm.token_eos(), llm.token_bos()
                self._formatter = llama_chat_format.Jinja2ChatFormatter(
                    template=template,
                    eos_token=llm._model.token_get_text(eos_id) if eos_id != -1 else "",
                    bos_token=llm._model.token_get_text(bos_id) if bos_id != -1 else "",
                    stop_token_ids=[eos_id])
            self._llm = llm
            if self.cache_dir is not None:
                _PrefixCache(self, self.cache_dir).restore_or_save()

    # -- tokens -------------------------------------------------------------------------
    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The exact tokens create_chat_completion will evaluate for these messages."""
        llm = self.llm
        if self._formatter is None:  # no template in the file: llama-cpp-python's fallback
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages)
            return llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        result = self._formatter(messages=list(messages))
        return llm.tokenize(result.prompt.encode("utf-8"),
                            add_bos=not result.added_special, special=True)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self.prompt_tokens(messages))

    # -- generation ---------------------------------------------------------------------
    def generate(self, messages: Sequence[Message], *, max_tokens: int, temperature: float,
                 on_token: OnToken | None = None) -> Generation:
        llm = self.llm
        n_prompt = self.count_tokens(messages)
        max_tokens = max(1, min(max_tokens, self.n_ctx - n_prompt))
        if n_prompt >= self.n_ctx:
            raise ModelError(f"prompt of {n_prompt} tokens does not fit the {self.n_ctx}-token "
                             "context window", hint="Raise it with --ctx, or lower -k.")
        out = Collector(on_token)
        finish = None
        try:
            stream = llm.create_chat_completion(
                messages=list(messages), max_tokens=max_tokens, temperature=temperature,
                repeat_penalty=REPEAT_PENALTY, stop=STOP, stream=True, seed=0)
            for chunk in stream:
                choice = chunk["choices"][0]
                out.add(choice.get("delta", {}).get("content") or "")
                finish = choice.get("finish_reason") or finish
                if out.stopped:
                    stream.close()  # llama.cpp stops decoding; the KV cache keeps what was done
                    finish = "enough"
                    break
        except ValueError as exc:  # llama-cpp-python's overlong-prompt error, as a last line
            raise ModelError(f"generation failed: {exc}",
                             hint="Raise the context with --ctx, or lower -k.") from None
        text = out.text
        n_completion = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
        return Generation(text, n_prompt, n_completion, out.first, out.elapsed(), finish)

    def rewind(self) -> None:
        """Forget what was evaluated after the system prompt, so that the next answer starts
        from the state a fresh process starts from. llama.cpp reuses the longest prefix it
        still holds; starting elsewhere moves its batch boundaries, and the floating-point
        sums with them, so a long-lived generator (the watcher's) could answer a token
        differently from a one-shot `rag ask`."""
        llm = self._llm
        if llm is not None and 0 < self.prefix_tokens < llm.n_tokens:
            llm.n_tokens = self.prefix_tokens  # the cells past it are dropped by the next decode

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._llm is not None:
            self._llm.close()
            self._llm = None


def _decode_threads(path: Path, cores: int) -> int:
    try:
        small = path.stat().st_size < SMALL_MODEL_BYTES
    except OSError:
        small = False  # the load reports the missing file
    return 1 if small else cores


def prefix_key(model_path: Path, n_ctx: int, placement: str, tokens: list[int]) -> str:
    """The file-name key of a saved system-prompt state (see ``_PrefixCache``)."""
    from ..models.llama import load_llama_cpp

    llama_cpp = load_llama_cpp()

    st = model_path.stat()
    raw = json.dumps([str(model_path.resolve()), st.st_size, st.st_mtime_ns, n_ctx,
                      llama_cpp.__version__, placement, tokens])
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class _PrefixCache:
    """The KV state of the constant prompt prefix (template header + system prompt), on disk.

    llama-cpp-python reuses the longest matching token prefix of whatever state the model
    holds; restoring this state makes a fresh process skip evaluating the system prompt.
    The key covers the model file, context size, library version, the prefix tokens and
    where the layers run: a state evaluated on a GPU loads on the CPU without complaint, and
    the answers then differ by a few tokens from a CPU-only run (seen on an H100).
    """

    MAGIC = b"RAGKV1\n"

    def __init__(self, gen: LlamaGenerator, folder: Path):
        self.gen, self.folder = gen, Path(folder)

    def prefix_tokens(self) -> list[int]:
        a = self.gen.prompt_tokens([{"role": "system", "content": SYSTEM_PROMPT},
                                    {"role": "user", "content": "a"}])
        b = self.gen.prompt_tokens([{"role": "system", "content": SYSTEM_PROMPT},
                                    {"role": "user", "content": "b"}])
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return a[:n]

    def _key(self, tokens: list[int]) -> str:
        return prefix_key(self.gen.model_path, self.gen.n_ctx, self.gen.placement, tokens)

    def restore_or_save(self) -> None:
        import numpy as np
        from llama_cpp.llama import LlamaState

        llm = self.gen._llm
        tokens = self.prefix_tokens()
        if len(tokens) < 8:
            return
        self.gen.prefix_tokens = len(tokens)
        path = self.folder / f"prefix-{self._key(tokens)}.kv"
        try:
            blob = path.read_bytes()
        except OSError:
            blob = b""
        if blob.startswith(self.MAGIC):
            state_bytes = blob[len(self.MAGIC):]
            ids = np.zeros((self.gen.n_ctx,), dtype=np.intc)
            ids[: len(tokens)] = tokens
            state = LlamaState(input_ids=ids, scores=np.zeros((1, llm.n_vocab()), np.single),
                               n_tokens=len(tokens), llama_state=state_bytes,
                               llama_state_size=len(state_bytes), seed=0)
            try:
                llm.load_state(state)
                self.gen.prefix_cached = True
                return
            except (RuntimeError, ValueError):
                llm.reset()  # stale or damaged: evaluate afresh and overwrite it
        llm.reset()
        llm.eval(tokens)
        state = llm.save_state()
        try:
            from ..config import ensure_private_dir, write_private

            ensure_private_dir(self.folder)
            write_private(path, self.MAGIC + state.llama_state)
            for old in self.folder.glob("prefix-*.kv"):  # one model at a time is enough
                if old != path and old.stat().st_mtime < time.time() - 7 * 86400:
                    old.unlink(missing_ok=True)
        except OSError:
            pass  # a cache, not a requirement
