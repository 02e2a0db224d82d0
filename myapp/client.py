"""The platform from code: a small typed client on the REST API, authenticated with a token.

    from myapp.client import Client
    client = Client.login("http://127.0.0.1:8080", "alice", password)   # or Client(url, token)
    pipeline = client.apply_pipeline(open("pipeline.yaml").read())
    run = client.run_pipeline(pipeline["id"], parameters={"lr": 0.01})
    client.wait(run["id"])

Inside a task whose template mounts the run's token: ``Client.from_job().report_metrics(step, {"loss": 0.3})``.

It needs nothing of the platform but its URL (no database, no configuration): `myapp login URL` stores
URL and token in the user's config file (`config_path()`, mode 0600), which `myapp pipeline ...`,
`myapp run ...`, `myapp model list` and `myapp service deploy` then use. See docs/client.md.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypedDict

FINISHED = ("succeeded", "failed", "cancelled")
PAGE_SIZE = 100


class ClientError(Exception):
    """The platform refused a request (status, its message and per-field errors) or could not be reached."""

    def __init__(self, status: int, message: str, errors: list[dict[str, str]] | None = None):
        self.status, self.message, self.errors = status, message, errors or []
        detail = "; ".join(f"{e.get('field')}: {e.get('reason')}" for e in self.errors)
        super().__init__(f"{status}: {message}" + (f" ({detail})" if detail else ""))


class Run(TypedDict, total=False):
    id: int
    pipeline_id: int
    state: str
    reason: str | None
    parameters: dict[str, Any]
    logical_date: str | None
    started_at: str | None
    finished_at: str | None


class Saved(TypedDict):
    url: str
    token: str


def config_path() -> Path:
    """Where `myapp login` keeps URL and token: $MYAPP_CLIENT_CONFIG, else ~/.config/myapp/client.json."""
    override = os.environ.get("MYAPP_CLIENT_CONFIG")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "myapp" / "client.json"


def save_login(url: str, token: str, path: Path | None = None) -> Path:
    """Write URL and token for later commands: the file is created 0600, in a 0700 folder."""
    path = path or config_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"url": url.rstrip("/"), "token": token}, fh)
    os.chmod(path, 0o600)  # an older file keeps its mode through O_CREAT
    return path


def saved_login(path: Path | None = None) -> Saved | None:
    path = path or config_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str) or not isinstance(data.get("token"), str):
        return None
    return Saved(url=data["url"], token=data["token"])


class Client:
    def __init__(self, url: str, token: str, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._task_run: int | None = None

    @classmethod
    def login(cls, url: str, username: str, password: str) -> Client:
        answer = cls(url, "").request("POST", "/api/v1/security/login",
                                      {"username": username, "password": password, "provider": "db"}, auth=False)
        return cls(url, answer["access_token"])

    @classmethod
    def from_job(cls) -> Client:
        """In a job: the platform's address and the run's own token, from the environment the platform
        gives a task whose template mounts the token (PLATFORM_API_URL, PLATFORM_API_TOKEN)."""
        url = os.environ.get("PLATFORM_API_URL") or os.environ.get("MYAPP_API_URL")
        token = os.environ.get("PLATFORM_API_TOKEN", "").strip()
        if not url or not token:
            raise ClientError(0, "not in a job with the platform's token: PLATFORM_API_URL and PLATFORM_API_TOKEN "
                                 "are set for tasks whose template mounts secret://myapp-api-token/token")
        return cls(url, token)

    @classmethod
    def from_saved(cls) -> Client | None:
        saved = saved_login()
        return cls(saved["url"], saved["token"]) if saved else None

    # ---- transport ----------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None,
                auth: bool = True, raw: bool = False) -> Any:
        url = self.url + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        headers = {"Accept": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # the user's own URL
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", errors="replace")
            try:
                error = json.loads(text)
            except ValueError:
                error = {"message": text[:500]}
            raise ClientError(exc.code, str(error.get("message") or exc.reason), error.get("errors")) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ClientError(0, f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}") from None
        if raw:
            return payload
        return json.loads(payload) if payload else None

    def pages(self, path: str, **filters: Any) -> Iterator[dict[str, Any]]:
        page = 0  # the API's pages count from 0
        while True:
            answer = self.request("GET", path, query={**filters, "page": page, "page_size": PAGE_SIZE})
            yield from answer["items"]
            if (page + 1) * PAGE_SIZE >= answer["count"] or not answer["items"]:
                return
            page += 1

    # ---- projects and pipelines ---------------------------------------------------------------
    def me(self) -> dict[str, Any]:
        return self.request("GET", "/api/v1/me/")

    def project(self, name: str) -> dict[str, Any]:
        for item in self.pages("/api/v1/project/", name=name):
            if item["name"] == name:
                return item
        raise ClientError(404, f"no project {name!r} (or you are not a member)")

    def pipeline(self, name: str, project: str) -> dict[str, Any]:
        project_id = self.project(project)["id"]
        for item in self.pages("/api/v1/pipeline/", project_id=project_id, name=name):
            if item["name"] == name:
                return item
        raise ClientError(404, f"no pipeline {name!r} in project {project!r}")

    def apply_pipeline(self, yaml_text: str) -> dict[str, Any]:
        return self.request("POST", "/api/v1/pipeline/import", {"yaml": yaml_text})

    def export_pipeline(self, pipeline_id: int) -> str:
        return self.request("GET", f"/api/v1/pipeline/{pipeline_id}/export")["yaml"]

    # ---- runs ---------------------------------------------------------------------------------
    def run_pipeline(self, pipeline_id: int, parameters: Mapping[str, Any] | None = None) -> Run:
        return self.request("POST", "/api/v1/pipeline_run/",
                            {"pipeline_id": pipeline_id, "parameters": dict(parameters or {})})

    def run(self, run_id: int) -> Run:
        return self.request("GET", f"/api/v1/pipeline_run/{run_id}")

    def runs(self, pipeline_id: int | None = None, limit: int = 20) -> list[Run]:
        query: dict[str, Any] = {"order": "-id", "page_size": limit}
        if pipeline_id is not None:
            query["pipeline_id"] = pipeline_id
        return self.request("GET", "/api/v1/pipeline_run/", query=query)["items"]

    def cancel_run(self, run_id: int) -> str:
        return self.request("POST", f"/api/v1/pipeline_run/{run_id}/cancel")["message"]

    def rerun(self, run_id: int) -> Run:
        return self.request("POST", f"/api/v1/pipeline_run/{run_id}/rerun")

    def task_runs(self, run_id: int) -> list[dict[str, Any]]:
        return list(self.pages("/api/v1/task_run/", pipeline_run_id=run_id))

    def logs(self, task_run_id: int, limit: int = 1000) -> list[dict[str, Any]]:
        return self.request("GET", f"/api/v1/task_run/{task_run_id}/logs", query={"limit": limit})["items"]

    def outputs(self, task_run_id: int) -> dict[str, Any]:
        return self.request("GET", f"/api/v1/task_run/{task_run_id}/outputs")

    def this_task_run(self) -> int:
        """In a job: the id of the attempt running it, from the contract's MYAPP_RUN_ID, MYAPP_TASK and
        MYAPP_ATTEMPT (found once, then kept)."""
        if self._task_run is None:
            run_id, task, attempt = (os.environ.get(k, "") for k in ("MYAPP_RUN_ID", "MYAPP_TASK", "MYAPP_ATTEMPT"))
            if not run_id.isdigit() or not task or not attempt.isdigit():
                raise ClientError(0, "not in a job: MYAPP_RUN_ID, MYAPP_TASK and MYAPP_ATTEMPT are not all set")
            pipeline_id = self.run(int(run_id))["pipeline_id"]
            tasks = [t for t in self.pages("/api/v1/task/", pipeline_id=pipeline_id, name=task) if t["name"] == task]
            found = [a["id"] for a in self.task_runs(int(run_id))
                     if tasks and a["task_id"] == tasks[0]["id"] and a["attempt"] == int(attempt)]
            if not found:
                raise ClientError(404, f"no attempt {attempt} of task {task!r} in run {run_id}")
            self._task_run = found[0]
        return self._task_run

    def report_metrics(self, step: int, values: Mapping[str, float], task_run_id: int | None = None) -> int:
        """Metrics at a step (name -> finite number), kept with the attempt like metrics.jsonl's and
        charted by the run view; by default this job's own attempt. Returns how many the attempt keeps."""
        task_run_id = self.this_task_run() if task_run_id is None else task_run_id
        return self.request("POST", f"/api/v1/task_run/{task_run_id}/reported_metrics",
                            {"step": step, "values": dict(values)})["kept"]

    def wait(self, run_id: int, timeout: float = 3600.0, poll: float = 1.0) -> Run:
        """Until the run has finished (ClientError 408 after timeout seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.run(run_id)
            if run["state"] in FINISHED:
                return run
            if time.monotonic() > deadline:
                raise ClientError(408, f"run {run_id} still {run['state']} after {timeout:g} s")
            time.sleep(poll)

    # ---- models and services ------------------------------------------------------------------
    def models(self, project_id: int | None = None) -> list[dict[str, Any]]:
        filters = {"project_id": project_id} if project_id is not None else {}
        return list(self.pages("/api/v1/model_version/", **filters))

    def register_model(self, project_id: int, name: str, uri: str, **fields: Any) -> dict[str, Any]:
        """A new version of model NAME (numbered by the platform); fields: framework, metrics, params, signature,
        files, description, stage, task_run_id (registered from that attempt's run, the version records the run's
        parameters and metrics: myapp/api/registry.py)."""
        return self.request("POST", "/api/v1/model_version/", {"project_id": project_id, "name": name, "uri": uri,
                                                               **fields})

    def deploy_service(self, project_id: int, name: str, model_version_id: int, **settings: Any) -> dict[str, Any]:
        body = {"project_id": project_id, "name": name, "model_version_id": model_version_id, **settings}
        return self.request("POST", "/api/v1/inference_service/", body)
