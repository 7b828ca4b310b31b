"""``OpenAIGenerator``: any OpenAI-compatible server (llama.cpp's server, vLLM, Ollama).

Streamed over server-sent events with ``httpx`` and ``httpx-sse`` (both come with ``mcp``);
one client per generator, so the questions of a chat reuse one connection.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx
from httpx_sse import SSEError, connect_sse

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
        self.model = model
        self.model_name = model or f"server {parts.netloc}"
        self.n_ctx = n_ctx
        self.notices: list[str] = []
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def preload(self) -> None:
        pass  # nothing to load: the server holds the model

    def wait_loaded(self) -> None:
        pass

    # No tokenizer here: estimate conservatively (English BPE averages ~4 chars per token).
    def count_text(self, text: str) -> int:
        return len(text.encode("utf-8")) // 3 + 1

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(self.count_text(m["content"]) + 6 for m in messages) + 4

    def generate(self, messages: Sequence[Message], *, max_tokens: int, temperature: float,
                 on_token: OnToken | None = None) -> Generation:
        body = {"messages": list(messages), "max_tokens": max_tokens, "temperature": temperature,
                "stop": STOP, "stream": True}
        if self.model:
            body["model"] = self.model
        out = Collector(on_token)
        usage: dict = {}
        finish = None
        try:
            with connect_sse(self._client, "POST", self.base_url + "/chat/completions", json=body) as events:
                if events.response.status_code != 200:
                    detail = events.response.read()[:500].decode("utf-8", "replace").strip()
                    raise ModelError(f"generation server answered HTTP {events.response.status_code}: {detail}",
                                     hint="Check llm_url, llm_api_key and the model name.")
                for event in events.iter_sse():
                    if event.data == "[DONE]":
                        break
                    try:
                        data = json.loads(event.data)
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
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ModelError(f"cannot reach the generation server at {self.base_url}: {exc}",
                             hint="Start it, fix llm_url, or unset it to run the model in-process.") from None
        except (httpx.HTTPError, SSEError) as exc:
            raise ModelError(f"the generation server dropped the answer: {exc}") from None
        text = out.text
        return Generation(text, int(usage.get("prompt_tokens") or self.count_tokens(messages)),
                          int(usage.get("completion_tokens") or self.count_text(text) if text else 0),
                          out.first, out.elapsed(), finish)

    def rewind(self) -> None:
        pass  # the server keeps its own cache

    def close(self) -> None:
        self._client.close()

