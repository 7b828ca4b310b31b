"""LlamaEmbedder on the real built-in model (converted once per test session)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ragcli.config import load_config
from ragcli.embed import Embedder, make_embedder
from ragcli.embed.llama import LlamaEmbedder


@pytest.fixture(scope="module")
def embedder(models_dir, tmp_path_factory):
    env = {"RAG_HOME": str(tmp_path_factory.mktemp("embed-home")), "RAG_MODELS_DIR": str(models_dir)}
    instance = make_embedder(load_config(env=env))
    yield instance
    instance.close()


def test_satisfies_the_protocol(embedder):
    assert isinstance(embedder, LlamaEmbedder)
    protocol_members = ("model_id", "dim", "max_tokens", "embed", "count_tokens")
    assert all(hasattr(embedder, m) for m in protocol_members)
    assert embedder.dim == 384
    assert embedder.model_id.startswith("all-MiniLM-L6-v2@")
    assert 200 <= embedder.max_tokens <= 254
    _: Embedder = embedder  # typed use, as the pipeline does


def test_vectors_are_unit_float32_rows(embedder):
    vectors = embedder.embed(["one", "two words", "a somewhat longer third sentence here"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_same_text_same_vector_whatever_the_batch(embedder):
    text = "Daily notes open a note named after today's date."
    alone = embedder.embed([text])[0]
    among = embedder.embed(["unrelated filler " * 40, text, "x"])[1]
    again = embedder.embed([text])[0]
    assert np.array_equal(alone, again)
    # another batch layout may round differently in the last bits, nothing more
    assert float(alone @ among) > 0.9999


def test_similar_sentences_are_closer_than_unrelated(embedder):
    a, b, c = embedder.embed(["How do I create a link to another note?",
                              "Linking between notes uses double square brackets.",
                              "The recipe needs two eggs and a cup of flour."])
    assert a @ b > a @ c + 0.2
    assert b @ a > b @ c + 0.2


def test_count_tokens_is_word_pieces_without_specials(embedder):
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello") == 1
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("unbelievably") >= 2  # split into word pieces
    long = "word " * 1000
    assert embedder.count_tokens(long) == 1000


def test_over_long_text_is_truncated_not_refused(embedder):
    long = "Obsidian keeps notes as Markdown. " * 400  # ~2,800 word pieces
    head = " ".join(long.split()[:600])
    v_long, v_head = embedder.embed([long, head])
    assert np.isfinite(v_long).all()
    assert float(v_long @ v_head) > 0.999  # both see the same first max_tokens pieces


def test_odd_text_does_not_raise(embedder):
    odd = ["", " ", "\x00\x01 control", "emoji 🙂🚀", "日本語のテキスト", "a" * 20000, "\ud800 lone surrogate"]
    vectors = embedder.embed(odd)
    assert vectors.shape == (len(odd), 384) and np.isfinite(vectors).all()


def test_many_texts_keep_their_order(embedder):
    texts = [f"note number {i} about topic {'abcdefghij'[i % 10]} " * (1 + i % 7) for i in range(70)]
    batched = embedder.embed(texts)
    for i in (0, 13, 42, 69):
        assert float(batched[i] @ embedder.embed([texts[i]])[0]) > 0.9999


def test_importing_the_cli_does_not_load_llama_cpp():
    code = ("import ragcli.cli, ragcli.embed, ragcli.models, sys; "
            "print([m for m in ('chromadb','llama_cpp','pypdf','watchdog') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_concurrent_callers_get_their_own_answers(embedder):
    """The watcher and a query may embed at once: contexts are handed out one caller each."""
    from concurrent.futures import ThreadPoolExecutor

    batches = [[f"batch {b} sentence {i} about {'gardens' if b % 2 else 'engines'}" for i in range(9)]
               for b in range(4)]
    expected = [embedder.embed(batch) for batch in batches]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(embedder.embed, batches))
    for want, have in zip(expected, got):
        assert np.allclose(want, have, atol=1e-5)


# -- prefixes and pooling (models such as nomic-embed or bge want them; MiniLM wants none) ----


def _embedder_with(models_dir, tmp_path_factory, **settings):
    env = {"RAG_HOME": str(tmp_path_factory.mktemp("embed-home")), "RAG_MODELS_DIR": str(models_dir)}
    env.update({f"RAG_{k.upper()}": v for k, v in settings.items()})
    return make_embedder(load_config(env=env))


def test_minilm_defaults_are_no_prefix_and_its_own_mean_pooling(embedder):
    assert embedder.pooling == embedder.model_pooling == "mean"
    assert embedder.query_prefix == embedder.document_prefix == ""
    assert embedder.settings == {}  # nothing differs from the model's own: nothing to fingerprint
    text = "Daily notes open a note named after today's date."
    plain = embedder.embed([text])[0]
    assert np.array_equal(embedder.embed_queries([text])[0], plain)
    assert np.array_equal(embedder.embed_documents([text])[0], plain)


def test_prefixes_go_on_queries_and_on_documents_and_change_the_vector(embedder, models_dir, tmp_path_factory):
    prefixed = _embedder_with(models_dir, tmp_path_factory, embed_query_prefix="search_query: ",
                              embed_document_prefix="search_document: ")
    try:
        text = "How do I link to a heading in another note?"
        plain = embedder.embed([text])[0]
        query = prefixed.embed_queries([text])[0]
        document = prefixed.embed_documents([text])[0]
        assert float(query @ plain) < 0.999 and float(document @ plain) < 0.999
        assert float(query @ document) < 0.999  # each side its own prefix
        assert float(query @ embedder.embed(["search_query: " + text])[0]) > 0.9999
        assert float(document @ embedder.embed(["search_document: " + text])[0]) > 0.9999
        assert np.array_equal(prefixed.embed([text])[0], plain)  # embed() adds nothing
        assert prefixed.settings == {"query_prefix": "search_query: ", "document_prefix": "search_document: "}
    finally:
        prefixed.close()


def test_cls_pooling_differs_from_mean_and_mean_named_is_the_default(embedder, models_dir, tmp_path_factory):
    cls = _embedder_with(models_dir, tmp_path_factory, embed_pooling="cls")
    mean = _embedder_with(models_dir, tmp_path_factory, embed_pooling="mean")
    try:
        texts = ["Canvas files hold cards laid out on a plane.", "Tomatoes need full sun."]
        assert cls.pooling == "cls" and cls.settings == {"pooling": "cls"}
        assert mean.pooling == "mean" and mean.settings == {}  # the model's own, said out loud
        v_cls, v_mean, v_default = cls.embed(texts), mean.embed(texts), embedder.embed(texts)
        assert np.allclose(v_mean, v_default, atol=1e-6)
        assert (v_cls * v_default).sum(axis=1).max() < 0.99  # the [CLS] vector is another vector
        assert np.allclose(np.linalg.norm(v_cls, axis=1), 1.0, atol=1e-5)
    finally:
        cls.close()
        mean.close()


def test_unknown_pooling_is_a_config_error(models_dir, tmp_path_factory):
    from ragcli.errors import ConfigError

    with pytest.raises(ConfigError, match="(?i)embed_pooling"):
        load_config(env={"RAG_HOME": str(tmp_path_factory.mktemp("h")), "RAG_EMBED_POOLING": "max"})


# -- catalogue models (`rag models pull NAME`): their prefixes and pooling take effect ------
# No download is possible here, so the bundled MiniLM GGUF stands in under a catalogue file
# name: the mechanics (which prefixes, which pooling, what is fingerprinted) are the same.


def _as_catalog_file(embedder, folder, name):
    from ragcli.models.catalog import lookup

    target = folder / lookup(name).file.rsplit("/", 1)[-1]
    target.symlink_to(embedder.path)
    return target


def _home_env(tmp_path_factory, **settings):
    env = {"RAG_HOME": str(tmp_path_factory.mktemp("embed-home"))}
    env.update({f"RAG_{k.upper()}": str(v) for k, v in settings.items()})
    return env


def test_a_catalog_file_takes_its_query_instruction_and_cls_pooling(embedder, tmp_path_factory):
    from ragcli.models.catalog import BGE_QUERY

    folder = tmp_path_factory.mktemp("pulled")
    path = _as_catalog_file(embedder, folder, "bge-small-en-v1.5")
    bge = make_embedder(load_config(env=_home_env(tmp_path_factory, embed_model=path)))
    cls = _embedder_with(embedder.path.parent, tmp_path_factory, embed_pooling="cls")
    try:
        assert (bge.query_prefix, bge.document_prefix, bge.pooling) == (BGE_QUERY, "", "cls")
        # what differs from the GGUF's own (MiniLM: mean, no prefixes) is what the index records
        assert bge.settings == {"pooling": "cls", "query_prefix": BGE_QUERY}
        text = "How do I link to a heading in another note?"
        assert float(bge.embed_queries([text])[0] @ cls.embed([BGE_QUERY + text])[0]) > 0.9999
        assert float(bge.embed_documents([text])[0] @ cls.embed([text])[0]) > 0.9999
    finally:
        bge.close()
        cls.close()


def test_a_catalog_short_name_finds_the_pulled_file_and_takes_both_prefixes(embedder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pulled")
    path = _as_catalog_file(embedder, folder, "nomic-embed-text-v1.5")
    nomic = make_embedder(load_config(env=_home_env(tmp_path_factory, embed_model="nomic-embed-text-v1.5",
                                                    models_dir=folder)))
    try:
        assert nomic.path == path
        assert (nomic.query_prefix, nomic.document_prefix, nomic.pooling) == (
            "search_query: ", "search_document: ", "mean")
        assert nomic.settings == {"query_prefix": "search_query: ", "document_prefix": "search_document: "}
    finally:
        nomic.close()


def test_settings_the_user_gives_win_over_the_catalog_even_an_empty_prefix(embedder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pulled")
    path = _as_catalog_file(embedder, folder, "snowflake-arctic-embed-s")
    env = _home_env(tmp_path_factory, embed_model=path, embed_pooling="mean")
    config_file = tmp_path_factory.mktemp("cfg") / "config.toml"
    config_file.write_text('embed_query_prefix = ""\nembed_document_prefix = "passage: "\n', encoding="utf-8")
    env["RAG_CONFIG"] = str(config_file)
    arctic = make_embedder(load_config(env=env))
    try:
        assert (arctic.query_prefix, arctic.document_prefix, arctic.pooling) == ("", "passage: ", "mean")
        assert arctic.settings == {"document_prefix": "passage: "}
    finally:
        arctic.close()


def test_a_catalog_name_not_pulled_yet_says_how_to_pull_it(tmp_path_factory):
    from ragcli.errors import ModelError

    folder = tmp_path_factory.mktemp("empty-models")
    with pytest.raises(ModelError) as info:
        make_embedder(load_config(env=_home_env(tmp_path_factory, embed_model="bge-base-en-v1.5",
                                                models_dir=folder)))
    assert "bge-base-en-v1.5" in str(info.value) and "rag models pull bge-base-en-v1.5" in info.value.hint


def _texts_of_every_length() -> list[str]:
    long = " ".join(f"word{i} in a note that runs on past what MiniLM reads" for i in range(80))
    return ["x", "Daily notes open a note named after today's date.", long,
            "Café, naïve, 東京 and emoji 🙂 in one line.", "```python\nprint('![[Internal links]]')\n```",
            *(f"Chunk {i}: tags like #project/alpha group notes; links join them." * (i % 4 + 1) for i in range(12))]


@pytest.mark.parametrize("pooling", ["", "cls"])
def test_the_numpy_engine_embeds_what_llama_cpp_embeds(embedder, pooling):
    # On the CPU a float BERT file runs in numpy (embed/numpy_bert.py), in two threads;
    # llama.cpp, which it replaces there, gives the same vectors.
    from threadpoolctl import threadpool_info

    texts = _texts_of_every_length()
    ours = LlamaEmbedder(embedder.path, "t", n_threads=2, max_tokens=embedder.max_tokens, pooling=pooling)
    theirs = LlamaEmbedder(embedder.path, "t", n_threads=2, max_tokens=embedder.max_tokens, pooling=pooling,
                           engine="llama.cpp")
    blas_threads = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    try:
        assert (ours.engine, theirs.engine) == ("numpy", "llama.cpp")
        assert (ours.dim, ours.max_tokens, ours.pooling) == (theirs.dim, theirs.max_tokens, theirs.pooling)
        assert ours.settings == theirs.settings
        a, b = ours.embed(texts), theirs.embed(texts)
        assert float((a * b).sum(axis=1).min()) > 0.99999
        q = ours.embed_queries(["how do I group notes"])
        assert float(q[0] @ theirs.embed_queries(["how do I group notes"])[0]) > 0.99999
        # the BLAS was held to one thread while the workers ran, and is given back
        assert [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"] == blas_threads
    finally:
        ours.close()
        theirs.close()


def test_a_quantised_file_stays_on_llama_cpp(embedder, models_dir, tmp_path_factory):
    from ragcli.embed.builtin import convert_builtin_embed

    env = {"RAG_HOME": str(tmp_path_factory.mktemp("q8-home")), "RAG_MODELS_DIR": str(models_dir)}
    q8 = LlamaEmbedder(convert_builtin_embed(load_config(env=env), file_type="q8_0"), "q8", n_threads=2,
                       max_tokens=embedder.max_tokens)
    try:
        assert q8.engine == "llama.cpp"  # numpy_bert computes float weights only
        texts = _texts_of_every_length()[:4]
        assert float((q8.embed(texts) * embedder.embed(texts)).sum(axis=1).min()) > 0.99
    finally:
        q8.close()


def test_embeds_at_once_give_the_blas_setting_back_only_when_the_last_one_ends(embedder):
    # The watcher and its prefill embed at once: the first to end must not hand BLAS its
    # threads back while the other's workers still run (two BLAS threads under each of them).
    if embedder._blas is None:  # the lent GPU's numpy: no BLAS threadpoolctl can limit, so no numpy engine
        pytest.skip("numpy's BLAS here is none threadpoolctl can limit: the embedder runs on llama.cpp")
    from threadpoolctl import ThreadpoolController

    from ragcli.embed.numpy_bert import one_blas_thread

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in ThreadpoolController().select(user_api="blas").info()]

    controller = ThreadpoolController().select(user_api="blas")
    with controller.limit(limits=2):  # what a 2-core box has, whatever this one has
        watcher, prefill = one_blas_thread.held(embedder._blas), one_blas_thread.held(embedder._blas)
        watcher.__enter__()  # in two threads: the watcher's embed starts first,
        prefill.__enter__()
        assert blas_threads() == [1]
        watcher.__exit__(None, None, None)  # and ends first
        assert blas_threads() == [1]  # the prefill's workers still run
        prefill.__exit__(None, None, None)
        assert blas_threads() == [2]  # given back, not left at one
        embedder.embed(_texts_of_every_length())  # the threaded path goes through the same hold
        assert blas_threads() == [2]
