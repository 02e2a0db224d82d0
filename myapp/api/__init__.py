"""The REST API under /api/v1/: one ResourceApi per model, registered with FAB."""
from __future__ import annotations

from flask_appbuilder import AppBuilder
from flask_appbuilder.security.schemas import login_post

from .admin import ClusterApi, LimitApi, QuotaApi, ResourceGroupApi, ResourceGroupStatusApi
from .catalog import ImageApi, JobTemplateApi
from .experiments import ExperimentApi, TrialApi
from .images import ImageBuildApi
from .me import MeApi
from .notebooks import NotebookApi
from .pipelines import EdgeApi, PipelineApi, PipelineRunApi, TaskApi
from .projects import ProjectApi
from .registry import ModelVersionApi
from .scheduler import SchedulerApi
from .serving import InferenceServiceApi
from .serving_proxy import ServingProxyApi
from .task_runs import TaskRunApi
from .users import UserAccountApi

APIS = (
    MeApi, ProjectApi, UserAccountApi, ClusterApi, ResourceGroupApi, ResourceGroupStatusApi, QuotaApi, LimitApi,
    ImageApi, JobTemplateApi,
    PipelineApi, TaskApi, EdgeApi, PipelineRunApi, TaskRunApi, ExperimentApi, TrialApi,
    NotebookApi, ModelVersionApi, InferenceServiceApi, ServingProxyApi, ImageBuildApi, SchedulerApi,
)


def register_apis(appbuilder: AppBuilder) -> None:
    # FAB's JWT login reads payload["provider"], which its schema leaves optional: a body without one was a 500.
    login_post.fields["provider"].required = True
    for api in APIS:
        appbuilder.add_api(api)
