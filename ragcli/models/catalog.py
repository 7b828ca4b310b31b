"""Curated models `rag models pull` knows by short name: official files, pinned sha256.

Every pin below was read from a public source (cited per entry); none was computed or guessed.
"HF LFS" means the Git LFS pointer / "Git LFS Details" of that file on its Hugging Face page,
which is the sha256 the server also announces as X-Linked-Etag. "Pins" means projects whose
downloaders verify that exact sha256 against the file they fetch. Where no pin was found,
``sha256`` is None and the download is checked against the server's announced sha256 instead.

Embedding facts (prefixes, pooling, dimension, context) come from the model cards:
- BGE v1.5: query instruction "Represent this sentence for searching relevant passages: ",
  none for passages; CLS pooling (FlagOpen/FlagEmbedding README.md); 512 tokens.
- Snowflake arctic-embed: same query prefix, CLS token, 512 tokens (Snowflake model card,
  mirrored in micchyboy237/jet_python_modules docs/hf_readmes/snowflake-arctic-embed-s_README.md).
- nomic-embed-text-v1.5: "search_query: " / "search_document: ", mean pooling, 768 dims
  (model card examples, mirrored in micchyboy237/jet_python_modules
  docs/hf_readmes/code/nomic-embed-text/python/*.py). The card says 8192 tokens with RoPE
  scaling; the GGUF's trained context (what llama.cpp reports) is 2048.
- all-MiniLM-L6-v2: no prefixes, mean pooling, 384 dims, input truncated at 256 word pieces.
- mxbai-embed-large-v1: query prompt as BGE, CLS pooling, 1024 dims, 512 tokens.
Dimensions and limits agree with qdrant/fastembed fastembed/text/onnx_embedding.py.
"""
from __future__ import annotations

from dataclasses import dataclass

BGE_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class CatalogModel:
    name: str          # short name, e.g. "qwen2.5-1.5b-instruct"
    role: str          # "llm" or "embed"
    repo: str          # Hugging Face repo, e.g. "Qwen/Qwen2.5-1.5B-Instruct-GGUF"
    file: str          # file in that repo
    sha256: str | None # pinned; None only where no public pin was found (then the server's ETag is checked)
    size: int | None
    licence: str
    # embeddings only
    query_prefix: str = ""
    document_prefix: str = ""
    pooling: str = ""  # "mean" | "cls" | "last"
    dim: int = 0
    max_tokens: int = 0
    note: str = ""

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo}/resolve/main/{self.file}"


def _llm(name, repo, file, sha256, size, licence, note=""):
    return CatalogModel(name, "llm", repo, file, sha256, size, licence, note=note)


def _embed(name, repo, file, sha256, size, licence, query, doc, pooling, dim, ctx, note=""):
    return CatalogModel(name, "embed", repo, file, sha256, size, licence,
                        query, doc, pooling, dim, ctx, note)


CATALOG: dict[str, CatalogModel] = {m.name: m for m in (
    # --- generation -------------------------------------------------------------------------
    # Qwen official GGUFs: tsukumogami/tsuku tsuku-llm/src/model.rs (commit 230bce7d, "from
    # HuggingFace LFS metadata"); 1.5B/3B also pinned by x-linked-etag at Qwen revisions
    # 91cad511... / 7dabda4d... in other projects.
    _llm("qwen2.5-0.5b-instruct", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "qwen2.5-0.5b-instruct-q4_k_m.gguf",
         "74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db", 491_400_032, "Apache-2.0",
         "Qwen's 0.5B 'q4_k_m' is mostly Q5_0 inside (tensor widths not k-quantizable)"),
    _llm("qwen2.5-1.5b-instruct", "Qwen/Qwen2.5-1.5B-Instruct-GGUF", "qwen2.5-1.5b-instruct-q4_k_m.gguf",
         "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e", 1_117_320_736, "Apache-2.0"),
    _llm("qwen2.5-3b-instruct", "Qwen/Qwen2.5-3B-Instruct-GGUF", "qwen2.5-3b-instruct-q4_k_m.gguf",
         "626b4a6678b86442240e33df819e00132d3ba7dddfe1cdc4fbb18e0a9615c62d", 2_104_932_768,
         "Qwen Research License (non-commercial)",
         "not Apache-2.0: commercial use needs a licence from Alibaba Cloud"),
    # Qwen2.5-Coder: the sha256/size pinned in ragcli/models/joined.py, matched by >= 8 independent
    # public pins of these exact URLs (exact-string search; revisions ebb20151... and f86cb2c1...).
    _llm("qwen2.5-coder-0.5b-instruct", "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
         "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
         "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064, "Apache-2.0"),
    _llm("qwen2.5-coder-1.5b-instruct", "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
         "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
         "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768, "Apache-2.0"),
    # HF LFS: huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/blob/d52af37.../...Q4_K_M.gguf;
    # also pinned by many projects at 807,694,464 bytes.
    _llm("llama-3.2-1b-instruct", "bartowski/Llama-3.2-1B-Instruct-GGUF", "Llama-3.2-1B-Instruct-Q4_K_M.gguf",
         "6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83", 807_694_464,
         "Llama 3.2 Community License"),
    # HF LFS: .../bartowski/Llama-3.2-3B-Instruct-GGUF/blob/c346bfc.../...Q4_K_M.gguf;
    # pinned in iimez/inference-server tests/testmodels.config.js.
    _llm("llama-3.2-3b-instruct", "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
         "6c1a2b41161032677be168d354123594c0e6e67d2b9227c84f296ad037c728ff", 2_019_377_696,
         "Llama 3.2 Community License"),
    # HF LFS: .../bartowski/Phi-3.5-mini-instruct-GGUF/blob/4cd0c51.../...Q4_K_M.gguf (+ pins).
    _llm("phi-3.5-mini-instruct", "bartowski/Phi-3.5-mini-instruct-GGUF", "Phi-3.5-mini-instruct-Q4_K_M.gguf",
         "e4165e3a71af97f1b4820da61079826d8752a2088e313af0c7d346796c38eff5", 2_393_232_672, "MIT"),
    # HF LFS: .../bartowski/gemma-2-2b-it-GGUF/blob/1eb353a.../gemma-2-2b-it-Q4_K_M.gguf; Nix
    # fetchurl hash in an older nix file of nobodywho-ooo/nobodywho is the same digest.
    _llm("gemma-2-2b-it", "bartowski/gemma-2-2b-it-GGUF", "gemma-2-2b-it-Q4_K_M.gguf",
         "e0aee85060f168f0f2d8473d7ea41ce2f3230c1bc1374847505ea599288a7787", 1_708_582_752,
         "Gemma Terms of Use"),
    # >= 8 independent pins of this URL (one at bartowski commit 1f034647...); no HF page seen.
    _llm("smollm2-1.7b-instruct", "bartowski/SmolLM2-1.7B-Instruct-GGUF", "SmolLM2-1.7B-Instruct-Q4_K_M.gguf",
         "77665ea4815999596525c636fbeb56ba8b080b46ae85efef4f0d986a139834d7", 1_055_609_824, "Apache-2.0"),
    # --- embeddings -------------------------------------------------------------------------
    # Nix fetchurl sha256 in nobodywho-ooo/nobodywho nobodywho/models.nix (SRI 7Djo2h...);
    # same digest on HF LFS of ChristianAzinn/bge-small-en-v1.5-gguf Q8_0.
    _embed("bge-small-en-v1.5", "CompendiumLabs/bge-small-en-v1.5-gguf", "bge-small-en-v1.5-q8_0.gguf",
           "ec38e8da142596baa913124ae50550de284b6916bf59577ef2f0cb9660c2f514", 36_806_944, "MIT",
           BGE_QUERY, "", "cls", 384, 512),
    # HF LFS: huggingface.co/CompendiumLabs/bge-base-en-v1.5-gguf/blob/main/bge-base-en-v1.5-q8_0.gguf.
    _embed("bge-base-en-v1.5", "CompendiumLabs/bge-base-en-v1.5-gguf", "bge-base-en-v1.5-q8_0.gguf",
           "ad1afe72cd6654a558667a3db10878b049a75bfd72912e1dabb91310d671173c", 117_974_304, "MIT",
           BGE_QUERY, "", "cls", 768, 512),
    # iimez/inference-server tests/testmodels.config.js; also an Arch PKGBUILD and others.
    _embed("nomic-embed-text-v1.5", "nomic-ai/nomic-embed-text-v1.5-GGUF", "nomic-embed-text-v1.5.Q8_0.gguf",
           "3e24342164b3d94991ba9692fdc0dd08e3fd7362e0aacc396a9a5c54a544c3b7", 146_146_432, "Apache-2.0",
           "search_query: ", "search_document: ", "mean", 768, 2048,
           "card: 8192 tokens with RoPE scaling; GGUF trained context 2048; Matryoshka dims"),
    # stateforward/emel.cpp tests/models/README.md (third-party mirror; no official GGUF exists).
    _embed("snowflake-arctic-embed-s", "yixuan-chia/snowflake-arctic-embed-s-GGUF",
           "snowflake-arctic-embed-s-Q8_0.gguf",
           "4db660cc9122d6153be9306fb8707bba6b77035cbeb2ab078d9a58c33dfea6be", 36_685_120, "Apache-2.0",
           BGE_QUERY, "", "cls", 384, 512, "third-party GGUF conversion"),
    # No trustworthy pin found: one app pins 670a415c5b42b1b3...0741a8 for this file, but its
    # entry's other metadata is wrong (1024 dims), so it is not used.
    _embed("snowflake-arctic-embed-m", "ChristianAzinn/snowflake-arctic-embed-m-gguf",
           "snowflake-arctic-embed-m-Q8_0.GGUF", None, None, "Apache-2.0",
           BGE_QUERY, "", "cls", 768, 512, "third-party GGUF conversion; unpinned"),
    # HF LFS: .../second-state/All-MiniLM-L6-v2-Embedding-GGUF/blob/aa38cf2.../...Q8_0.gguf (+ pins).
    _embed("all-minilm-l6-v2", "second-state/All-MiniLM-L6-v2-Embedding-GGUF", "all-MiniLM-L6-v2-Q8_0.gguf",
           "263215c3cadd6e16740741a7624ab4cbb6c8e777688bd5331ecfbf5681c2f8ed", 25_008_064, "Apache-2.0",
           "", "", "mean", 384, 256, "trained with 256-token inputs (512 positions)"),
    # HF LFS: huggingface.co/mixedbread-ai/mxbai-embed-large-v1 gguf/mxbai-embed-large-v1-f16.gguf
    # (the same blob Ollama serves as mxbai-embed-large).
    _embed("mxbai-embed-large-v1", "mixedbread-ai/mxbai-embed-large-v1", "gguf/mxbai-embed-large-v1-f16.gguf",
           "819c2adf5ce6df2b6bd2ae4ca90d2a69f060afeb438d0c171db57daa02e39c3d", 669_603_712, "Apache-2.0",
           BGE_QUERY, "", "cls", 1024, 512),
)}


def lookup(name: str) -> CatalogModel | None:
    """The catalogue entry for a short name (case and surrounding spaces ignored)."""
    return CATALOG.get(name.strip().lower())


def embed_entry(value: str) -> CatalogModel | None:
    """The catalogue embedding model that ``embed_model`` names: its short name, or a path
    to the file `rag models pull` saved it as (the file name is compared, case ignored)."""
    if not value:
        return None
    known = lookup(value)
    if known is not None:
        return known if known.role == "embed" else None
    name = value.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return next((m for m in CATALOG.values()
                 if m.role == "embed" and m.file.rsplit("/", 1)[-1].lower() == name), None)
