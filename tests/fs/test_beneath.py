"""myapp.fs.beneath on real files and links: what is beneath a trusted folder is reached, nothing through a
link is, and deletes, chmod/chown and zips stay inside the tree whatever links it holds."""
from __future__ import annotations

import ctypes
import errno
import io
import os
import stat
import zipfile

import pytest

from myapp.fs import resolve
from myapp.fs.beneath import Folder, Refused


@pytest.fixture
def tree(tmp_path, resolver):
    """root/ (trusted) with d/file, d/e/deep, a link to a folder outside and a link to a file outside."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d" / "e").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_bytes(b"SECRET")
    (root / "d" / "file").write_bytes(b"data")
    (root / "d" / "e" / "deep").write_bytes(b"deeper")
    (root / "top.txt").write_bytes(b"top")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret", root / "d" / "secret")
    with Folder.open(root) as folder:
        yield folder, root, outside


def test_reads_a_file_beneath(tree):
    folder, _, _ = tree
    with folder.open_file("d/e/deep") as fh:
        assert fh.read() == b"deeper"
    assert folder.read("top.txt", 2) == b"to"


@pytest.mark.parametrize("path", ["link/secret", "d/secret", "link", "d", "d/file/x"])
def test_never_through_a_link_nor_anything_but_a_file(tree, path):
    folder, _, _ = tree
    with pytest.raises(Refused):
        folder.open_file(path)


@pytest.mark.parametrize("path", ["../root/top.txt", "/etc/passwd", "d//file", "./top.txt", "d/./file"])
def test_names_that_could_leave_are_refused_before_any_lookup(tree, path):
    folder, _, _ = tree
    with pytest.raises(ValueError):
        folder.open_file(path)


def test_missing_is_file_not_found(tree):
    folder, _, _ = tree
    with pytest.raises(FileNotFoundError):
        folder.open_file("d/none")
    with pytest.raises(FileNotFoundError):
        folder.open_file("none/file")


def test_a_fifo_is_refused_without_blocking(tree):
    folder, root, _ = tree
    os.mkfifo(root / "pipe")
    with pytest.raises(Refused):
        folder.open_file("pipe")


def test_stat_is_the_entrys_own(tree):
    folder, _, _ = tree
    assert stat.S_ISLNK(folder.stat("d/secret").st_mode)
    assert folder.stat("d/file").st_size == 4
    assert folder.is_dir("d/e") and not folder.is_dir("link") and not folder.is_dir("none")
    with pytest.raises(Refused):
        folder.stat("link/secret")


def test_files_in_walk_order_links_skipped(tree):
    folder, _, _ = tree
    assert folder.files() == [("top.txt", 3), ("d/file", 4), ("d/e/deep", 6)]
    assert folder.files("d") == [("file", 4), ("e/deep", 6)]
    assert folder.files(limit=2) == [("top.txt", 3), ("d/file", 4)]
    with pytest.raises(Refused):
        folder.files("link")
    assert [e.path for e in folder.entries()] == ["d", "d/e", "d/e/deep", "d/file", "d/secret", "link", "top.txt"]


def test_remove_tree_removes_links_never_what_they_point_at(tree):
    folder, root, outside = tree
    folder.remove_tree("d")
    folder.remove_tree("link")  # the link itself goes
    assert sorted(os.listdir(root)) == ["top.txt"]
    assert (outside / "secret").read_bytes() == b"SECRET"
    folder.remove_tree("none")  # missing_ok
    with pytest.raises(FileNotFoundError):
        folder.remove_tree("none", missing_ok=False)


def test_remove_tree_refuses_a_link_on_the_way(tree):
    folder, _, outside = tree
    (outside / "sub").mkdir()
    with pytest.raises(Refused):
        folder.remove_tree("link/sub")
    assert (outside / "sub").is_dir() and (outside / "secret").exists()


def test_a_tree_deeper_than_the_walk_is_deleted_and_listed_no_deeper(tree):
    folder, root, _ = tree
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(resolve.MAX_DEPTH + 40):  # deeper than PATH_MAX allows by name
            os.mkdir("x", dir_fd=fd)
            child = os.open("x", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            with os.fdopen(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=child), "w") as fh:
                fh.write("x")
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    assert len(folder.files("x")) == resolve.MAX_DEPTH
    with pytest.raises(Refused):
        list(folder.entries("x", strict=True))
    folder.remove_tree("x")
    assert not os.path.lexists(root / "x")


def test_make_dirs_chmod_chown_by_descriptor(tree):
    folder, root, outside = tree
    folder.make_dirs("a/b/c", 0o750, owner=12345)
    assert (root / "a" / "b" / "c").stat().st_uid == 12345
    assert stat.S_IMODE((root / "a" / "b").stat().st_mode) == 0o750
    with pytest.raises(Refused):
        folder.make_dirs("link/new")
    assert not (outside / "new").exists()
    before = (outside / "secret").stat()
    with pytest.raises(Refused):
        folder.set_mode("d/secret", 0o777)
    folder.chown("d/secret", 4242, 4242)  # the link's own owner
    after = (outside / "secret").stat()
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)
    assert os.lstat(root / "d" / "secret").st_uid == 4242


def test_own_tree_leaves_what_links_point_at(tree):
    folder, root, outside = tree
    before = (outside / "secret").stat()
    folder.own_tree("d", 4242, 4242, lambda mode: mode | 0o444)
    assert (root / "d" / "e" / "deep").stat().st_uid == 4242
    assert os.lstat(root / "d" / "secret").st_uid == 4242
    after = (outside / "secret").stat()
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)


def test_folders_lists_real_folders_only_and_never_through_a_link(tree):
    folder, _, _ = tree
    assert folder.folders() == ["d"]  # not the link to a folder outside, nor top.txt
    assert folder.folders("d") == ["e"]
    with pytest.raises(Refused):
        folder.folders("link")


def test_writes_stay_beneath(tree):
    folder, root, outside = tree
    folder.write("d/new.json", b"{}")
    assert (root / "d" / "new.json").read_bytes() == b"{}"
    with pytest.raises(Refused):
        folder.write("link/new.json", b"{}")
    with pytest.raises(FileExistsError):
        folder.create("d/secret")
    with pytest.raises(Refused):
        folder.create("d/secret", exclusive=False)  # a link at the end is not written through
    with folder.create("d/part") as fh:
        fh.write(b"abc")
    folder.replace("d/part", "d/e/whole")
    folder.utime("d/e/whole")
    assert (root / "d" / "e" / "whole").read_bytes() == b"abc"
    assert folder.symlink("/elsewhere", "d/e/ln") and not folder.symlink("/elsewhere", "d/e/ln")
    folder.remove("d/e/ln")
    assert not os.path.lexists(root / "d" / "e" / "ln")
    assert (outside / "secret").read_bytes() == b"SECRET" and sorted(os.listdir(outside)) == ["secret"]


def test_zip_holds_the_files_not_what_links_point_at(tree):
    folder, _, _ = tree
    out = io.BytesIO()
    written = folder.write_zip(out, [("d/file", 100), ("d/secret", 100), ("link/secret", 100), ("d/e/deep", 3)])
    assert written == ["d/file", "d/e/deep"]
    with zipfile.ZipFile(out) as zf:
        assert zf.read("d/file") == b"data" and zf.read("d/e/deep") == b"dee"
        assert b"SECRET" not in b"".join(zf.read(n) for n in zf.namelist())


@pytest.mark.parametrize(("code", "from_then_on"), [
    (errno.ENOSYS, True),  # a kernel before 5.6: the walk from then on
    (errno.EPERM, False),  # a seccomp profile older than the syscall (older container runtimes): that call
])
def test_without_openat2_the_walk_answers_with_the_same_refusals(tmp_path, monkeypatch, code, from_then_on):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"ok")
    os.symlink(tmp_path / "d", tmp_path / "ln")

    def failing(*args):
        ctypes.set_errno(code)
        return -1

    monkeypatch.setattr(resolve, "_openat2", failing)
    with Folder.open(tmp_path) as folder:
        assert folder.read("d/f", 10) == b"ok"
        assert resolve.openat2_in_use() is not from_then_on
        with pytest.raises(Refused):
            folder.open_file("ln/f")
