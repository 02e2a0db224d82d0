"""`myapp model register`: a version through the REST API, as a person's token (the client's request
is served by the app in-process here; tests/test_remote_cli.py drives a real platform)."""
from __future__ import annotations

import json
import urllib.parse

from click.testing import CliRunner

from myapp.client import Client, ClientError
from tests.support import unique
from tests.world import created, data_file


class InProcess(Client):
    def __init__(self, api):
        super().__init__("http://in-process", api.token)
        self.api = api

    def request(self, method, path, body=None, query=None, **_):
        url = path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        answer = self.api.request(method, url, json=body)
        data = answer.get_json()
        if answer.status_code >= 400:
            raise ClientError(answer.status_code, data["message"], data.get("errors"))
        return data


def test_model_register_numbers_versions_and_names_bad_fields(app, user, monkeypatch):
    from myapp.pipelines import cli

    created_project = created(user.post("/api/v1/project/", json={"name": unique("cli")}))
    project = created_project["name"]
    model = data_file(app, created_project["id"], "digits.joblib")
    monkeypatch.setattr(cli, "_need_login", lambda: InProcess(user))
    runner = CliRunner()
    args = ["register", "digits", model, "--project", project, "--metrics", '{"accuracy": 0.97}',
            "--signature", '{"shape": [null, 64], "dtype": "float32"}', "--json"]
    first = json.loads(runner.invoke(cli.model_group, args, catch_exceptions=False).output)
    second = json.loads(runner.invoke(cli.model_group, args, catch_exceptions=False).output)
    assert (first["version"], second["version"]) == (1, 2)
    assert first["metrics"] == {"accuracy": 0.97} and first["signature"] == {"shape": [None, 64], "dtype": "float32"}
    bad = runner.invoke(cli.model_group, ["register", "digits", model, "--project", project,
                                          "--signature", '{"dtype": "complex"}'])
    assert bad.exit_code == 2 and "signature.dtype" in bad.output
