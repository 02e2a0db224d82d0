"""All SQL models. Everything lives on flask_appbuilder.Model.metadata (Alembic points there)."""
from flask_appbuilder.security.sqla.models import User  # noqa: F401  (ab_user, FK target)

from .base import utcnow  # noqa: F401
from .catalog import Image, JobTemplate  # noqa: F401
from .cluster import Cluster, ClusterKind, Quota, ResourceGroup  # noqa: F401
from .pipeline import ConcurrencyPolicy, Edge, Pipeline, Task, TriggerRule  # noqa: F401
from .project import Project, ProjectMember, ProjectRole  # noqa: F401
from .run import PipelineRun, RunTrigger, TaskRun  # noqa: F401
from .run_token import RunToken  # noqa: F401
from .states import InvalidTransition, RunState, TaskState  # noqa: F401
from .system import WorkerHeartbeat  # noqa: F401
from .workspace import ImageBuild, InferenceService, ModelVersion, Notebook, ServiceState  # noqa: F401
