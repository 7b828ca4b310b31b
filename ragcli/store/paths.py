"""The names of what an index folder holds."""

MANIFEST_NAME = "manifest.sqlite"  # the truth: files, chunks, keywords, vector cache
CHROMA_NAME = "chroma"  # the vector index, rebuildable from the manifest
LOCK_NAME = "write.lock"  # one writer at a time (flock)
