"""Generation: prompt building (``prompt``), the backends (``llama``, ``openai``) behind the
``Generator`` protocol (``base``), and the factory that picks one from the config."""

from __future__ import annotations

from ..config import Config
from .base import Generation, Generator, Message, OnToken

__all__ = ["Generation", "Generator", "Message", "OnToken", "make_generator"]


def make_generator(config: Config) -> Generator:
    """The configured generator: a server when llm_url is set, else llama.cpp in-process."""
    if config.llm_url:
        # with a server, llm_model names the server's model (empty: its default)
        from .openai import OpenAIGenerator

        return OpenAIGenerator(config.llm_url, api_key=config.llm_api_key,
                               model=config.llm_model, n_ctx=config.n_ctx)
    from ..models.resolve import resolve_llm_model
    from .llama import LlamaGenerator

    spec = resolve_llm_model(config)
    generator = LlamaGenerator(spec.path, n_ctx=config.n_ctx, n_threads=config.threads,
                               n_gpu_layers=config.n_gpu_layers, cache_dir=config.data_dir / "cache",
                               model_name=spec.path.name)
    if spec.warning:
        generator.notices.append(spec.warning)
    return generator
