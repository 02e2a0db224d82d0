"""All SQL models. Everything lives on flask_appbuilder.Model.metadata (Alembic points there)."""
from flask_appbuilder.security.sqla.models import User  # noqa: F401  (ab_user, FK target)

from .base import never_reuse_ids, utcnow  # noqa: F401
from .catalog import Image, JobTemplate  # noqa: F401
from .cluster import (  # noqa: F401
    LOCAL_CLUSTER,
    LOCAL_DEFAULT_GROUP,
    Cluster,
    ClusterKind,
    Quota,
    ResourceGroup,
    ServingEngine,
)
from .experiment import Experiment, ExperimentState, Trial, TrialState  # noqa: F401
from .limits import PlatformSetting  # noqa: F401
from .list_count import ListCount  # noqa: F401
from .login import KnownAddress, LoginLimit, LoginSession, TokenCutoff  # noqa: F401
from .pipeline import ConcurrencyPolicy, Edge, Pipeline, Task, TriggerRule  # noqa: F401
from .project import Project, ProjectMember, ProjectRole  # noqa: F401
from .run import PipelineRun, RunTrigger, TaskRun  # noqa: F401
from .run_token import CheckpointCleanup, OutputsCleanup, RunToken  # noqa: F401
from .states import InvalidTransition, RunState, TaskState  # noqa: F401
from .system import WorkerHeartbeat  # noqa: F401
from .workspace import (  # noqa: F401
    BuildSource,
    ImageBuild,
    InferenceService,
    ModelStage,
    ModelVersion,
    Notebook,
    NotebookIntent,
    NotebookState,
    ServiceState,
)

# Ids are never reused after a delete, so logs and archives of two runs can never mix: SQLite picks
# max(id)+1 unless the key is AUTOINCREMENT (PostgreSQL sequences never go back). Every table on the
# metadata, FAB's included (a reused user id would inherit a deleted user's tokens); migration 0009.
never_reuse_ids()
