"""Links in an attempt's outputs folder are never followed, wherever they are in a path: a job's link to a
folder outside (the platform's secrets) or inside its own folder, at the end of the path or in the middle,
is not found for the download, the preview, the listing and the zip alike."""
from __future__ import annotations

import io
import os
import zipfile

import pytest

from tests.outputs.support import attempt_with_token

SECRET = b"the platform's secret key"


@pytest.fixture
def linked(app, catalog, tmp_path):
    client, attempt_id, folder = attempt_with_token(app, catalog)
    outside = tmp_path / "platform"
    outside.mkdir()
    (outside / "x.txt").write_bytes(SECRET)
    (folder / "real").mkdir()
    (folder / "real" / "x.txt").write_bytes(b"inside")
    os.symlink("real", folder / "inner")  # a folder link that stays inside the attempt's folder
    os.symlink(outside, folder / "outer")  # a folder link out of it
    os.symlink(outside, folder / "real" / "sub")  # one further down the path
    os.symlink(outside / "x.txt", folder / "top.txt")  # a file link
    return client, f"/api/v1/task_run/{attempt_id}"


@pytest.mark.parametrize("path", ["outer/x.txt", "inner/x.txt", "real/sub/x.txt", "top.txt", "outer", "real"])
@pytest.mark.parametrize("preview", ["", "&preview=1"])
def test_a_link_anywhere_in_the_path_is_not_found(linked, path, preview):
    client, url = linked
    answer = client.get(f"{url}/output?path={path}{preview}")
    assert answer.status_code == 404, answer.data[:200]
    assert SECRET not in answer.data and b"inside" not in answer.data


def test_the_real_file_is_served(linked):
    client, url = linked
    assert client.get(f"{url}/output?path=real/x.txt").data == b"inside"
    assert client.get(f"{url}/output?path=real/x.txt&preview=1").data == b"inside"


def test_listing_and_zip_hold_only_the_real_file(linked):
    client, url = linked
    assert client.get(f"{url}/outputs").get_json()["files"] == [{"path": "real/x.txt", "size": 6, "preview": "text"}]
    answer = client.get(f"{url}/output")
    assert answer.status_code == 200 and SECRET not in answer.data
    with zipfile.ZipFile(io.BytesIO(answer.data)) as zf:
        assert zf.namelist() == ["real/x.txt"] and zf.read("real/x.txt") == b"inside"
