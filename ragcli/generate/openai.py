"""``OpenAIGenerator``: any OpenAI-compatible server (llama.cpp's server, vLLM, Ollama).

Streamed over SSE with ``http.client``: no extra dependency.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from ..errors import ModelError
from .base import STOP, Collector, Generation, Message, OnToken


class OpenAIGenerator:
    """Chat completions from an OpenAI-compatible server (`llm_url`, e.g. http://127.0.0.1:8080/v1)."""

    def __init__(self, base_url: str, *, api_key: str = "", model: str = "", n_ctx: int = 2048,
                 timeout: float = 120.0):
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelError(f"llm_url must be an http(s) URL, got {base_url!r}",
                             hint="For example: http://127.0.0.1:8080/v1")
        self.base_url = base_url.rstrip("/")
        self._parts = parts
        self.api_key = api_key
        self.model = model
        self.model_name = model or f"server {parts.netloc}"
        self.n_ctx = n_ctx
        self.notices: list[str] = []
        self.timeout = timeout

    def preload(self) -> None:
        pass  # nothing to load: the server holds the model

    def wait_loaded(self) -> None:
        pass

    # No tokenizer here: estimate conservatively (English BPE averages ~4 chars per token).
    def count_text(self, text: str) -> int:
        return len(text.encode("utf-8")) // 3 + 1

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(self.count_text(m["content"]) + 6 for m in messages) + 4

    def _connection(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
        return cls(self._parts.hostname, self._parts.port, timeout=self.timeout)

    def generate(self, messages: Sequence[Message], *, max_tokens: int, temperature: float,
                 on_token: OnToken | None = None) -> Generation:
        body = {"messages": list(messages), "max_tokens": max_tokens, "temperature": temperature,
                "stop": STOP, "stream": True}
        if self.model:
            body["model"] = self.model
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        path = (self._parts.path or "") + "/chat/completions"
        out = Collector(on_token)
        usage: dict = {}
        finish = None
        conn = self._connection()
        try:
            try:
                conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
                resp = conn.getresponse()
            except OSError as exc:
                raise ModelError(f"cannot reach the generation server at {self.base_url}: {exc}",
                                 hint="Start it, fix llm_url, or unset it to run the model "
                                      "in-process.") from None
            if resp.status != 200:
                detail = resp.read(500).decode("utf-8", "replace").strip()
                raise ModelError(f"generation server answered HTTP {resp.status}: {detail}",
                                 hint="Check llm_url, llm_api_key and the model name.")
            for event in _sse_events(resp):
                if event == "[DONE]":
                    break
                try:
                    data = json.loads(event)
                except json.JSONDecodeError:
                    continue
                if "error" in data:
                    raise ModelError(f"generation server error: {data['error']}")
                usage = data.get("usage") or usage
                for choice in data.get("choices") or []:
                    out.add((choice.get("delta") or {}).get("content") or "")
                    finish = choice.get("finish_reason") or finish
                if out.stopped:
                    finish = "enough"  # closing the connection ends the server's generation
                    break
        except (OSError, http.client.HTTPException) as exc:
            raise ModelError(f"the generation server dropped the answer: {exc}") from None
        finally:
            conn.close()
        text = out.text
        return Generation(text, int(usage.get("prompt_tokens") or self.count_tokens(messages)),
                          int(usage.get("completion_tokens") or self.count_text(text) if text else 0),
                          out.first, out.elapsed(), finish)

    def rewind(self) -> None:
        pass  # the server keeps its own cache

    def close(self) -> None:
        pass


def _sse_events(resp) -> Iterator[str]:
    """The data payloads of a text/event-stream response, one per event."""
    data: list[str] = []
    while True:
        raw = resp.readline()
        if not raw:
            break
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)
