"""Helpers of the experiment tests: a project with a pipeline that declares parameters, through the API."""
from __future__ import annotations

from typing import Any

from tests.support import unique
from tests.world import created


def pipeline_with_parameters(client: Any, catalog: int, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    project = created(client.post("/api/v1/project/", json={"name": unique("p")}))
    return created(client.post("/api/v1/pipeline/", json={
        "project_id": project["id"], "name": "train", "parameters": parameters or {"lr": 0.1, "epochs": 3}}))


def body(pipeline_id: int, **changes: Any) -> dict[str, Any]:
    return {"pipeline_id": pipeline_id, "name": unique("e"),
            "search_space": [{"name": "lr", "type": "float", "low": 0.001, "high": 1.0, "log": True},
                             {"name": "epochs", "type": "int", "low": 1, "high": 5}],
            "objectives": [{"metric": "accuracy", "direction": "maximize"}], "max_trials": 4} | changes
