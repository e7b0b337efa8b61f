"""Pinned downloads: git blob SHA-1, verification, caching, and no half-written files."""

import http.server
import subprocess
import threading
from pathlib import Path

import pytest

from harness.core import paths
from harness.core.errors import BenchmarkError, ChecksumError
from harness.data import download as datasets
from harness.data.benchmarks import load_benchmark
from tests.conftest import write_redqa


def test_git_blob_sha1_matches_git(tmp_path):
    path = write_redqa(tmp_path / "b.json")
    expected = subprocess.run(
        ["git", "hash-object", str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert datasets.git_blob_sha1(path) == expected
    # a RedQA file read by path records it: reproduction reports compare it with the pins
    bench = load_benchmark({"format": "redqa", "path": str(path)})
    assert bench.metadata["git_blob_sha1"] == expected


@pytest.fixture
def server(tmp_path):
    """A static file server on 127.0.0.1 serving tmp_path/served."""
    root = tmp_path / "served"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _cfg(url: str, sha1: str) -> dict:
    return {
        "name": "mini",
        "format": "redqa",
        "file": "redqa/mini.json",
        "url": url,
        "git_blob_sha1": sha1,
    }


def test_download_verify_and_reuse(server, tmp_path, monkeypatch):
    root, base = server
    src = write_redqa(root / "mini.json")
    sha1 = datasets.git_blob_sha1(src)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    bench = load_benchmark(_cfg(f"{base}/mini.json", sha1))
    cached = tmp_path / "data" / "redqa" / "mini.json"
    assert cached.read_bytes() == src.read_bytes()
    assert bench.metadata["git_blob_sha1"] == sha1
    src.unlink()  # second load must not need the server
    assert load_benchmark(_cfg(f"{base}/mini.json", sha1)).checksum == bench.checksum


def test_download_with_wrong_checksum_leaves_nothing(server, tmp_path, monkeypatch):
    root, base = server
    write_redqa(root / "mini.json")
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(ChecksumError, match="checksum mismatch.*expected 0000"):
        load_benchmark(_cfg(f"{base}/mini.json", "0" * 40))
    assert not (tmp_path / "data").exists()


def test_corrupt_cached_file_is_refused(tmp_path, monkeypatch):
    data = tmp_path / "data"
    write_redqa((data / "redqa").mkdir(parents=True) or data / "redqa" / "mini.json")
    monkeypatch.setenv("HARNESS_DATA_DIR", str(data))
    with pytest.raises(ChecksumError, match=r"mini.json.*delete .* to download it again"):
        load_benchmark(_cfg("http://127.0.0.1:9/x", "1" * 40))


def test_unreachable_source_says_where_to_put_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(BenchmarkError, match=r"could not download .*place the file at .*mini.json"):
        load_benchmark(_cfg("http://127.0.0.1:9/mini.json", "1" * 40))
    assert not (tmp_path / "data").exists()  # the folders the failed download made are gone
    (tmp_path / "data" / "redqa").mkdir(parents=True)  # folders it did not make stay
    with pytest.raises(BenchmarkError, match=r"could not download"):
        load_benchmark(_cfg("http://127.0.0.1:9/mini.json", "1" * 40))
    assert not any((tmp_path / "data" / "redqa").iterdir())


def test_data_dir_default(monkeypatch):
    monkeypatch.delenv("HARNESS_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert paths.data_dir() == Path("/x/cache/retrieval-harness")


def test_unwritable_data_dir(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("HARNESS_DATA_DIR", str(blocker / "data"))
    with pytest.raises(BenchmarkError, match="cannot create the data directory .*HARNESS_DATA_DIR"):
        load_benchmark(_cfg("http://127.0.0.1:9/mini.json", "1" * 40))
