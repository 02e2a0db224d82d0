"""The labels and annotations the platform puts on what it submits: every key written once.

Rendering writes them (`myapp.rendering.pod`) and checks them (`myapp.rendering.policy`); the
backends find and read objects by them (an attempt's pods by JOB_NAME_LABEL, the catalog
folder by TEMPLATE_LABEL, a cancel by CANCELLED_ANNOTATION). No imports: anything may use this.
Changing a key changes every rendered manifest (tests/rendering/golden pins them).
"""
from __future__ import annotations

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "myapp"  # the value of MANAGED_BY_LABEL on everything the platform renders
PROJECT_LABEL = "myapp.io/project"
PIPELINE_LABEL = "myapp.io/pipeline"
RUN_LABEL = "myapp.io/run"
TASK_LABEL = "myapp.io/task"
RESOURCE_GROUP_LABEL = "myapp.io/resource-group"  # on a resource group's Volcano Queue (cluster-scoped)
TEMPLATE_LABEL = "myapp.io/template"  # the job template's name (the local backend maps COPY paths back)
# Unique per task attempt, on every pod template: selects every pod / process of the attempt.
JOB_NAME_LABEL = "myapp.io/job-name"
# On the short-lived pod that reads a finished attempt's outputs off the project's claim (the task run id).
OUTPUTS_READER_LABEL = "myapp.io/outputs-reader"

# Every rendered object and pod template must carry these (policy.check); TEMPLATE_LABEL is
# added by rendering too but not required of hand-written manifests.
REQUIRED_LABELS = (MANAGED_BY_LABEL, PROJECT_LABEL, PIPELINE_LABEL, RUN_LABEL, TASK_LABEL)

# Set by the Kubernetes backend's cancel: a terminating workload then reads "cancelled".
CANCELLED_ANNOTATION = "myapp.io/cancelled"
# Pod annotations rendering writes for the cluster's add-ons (Volcano gang scheduling, Istio).
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
ISTIO_INJECT_ANNOTATION = "sidecar.istio.io/inject"
# The PriorityClass a gang's PodGroup names (Volcano orders PodGroups by it; install/ creates it).
PRIORITY_CLASS = "myapp-batch"

# The platform API token a job template mounts as `secret://myapp-api-token/token`: a logical name.
# Rendering binds it to the run's own Secret (RenderContext.api_token_secret), which the run
# controller creates in the project's namespace while the run is active (myapp.auth.run_tokens).
API_TOKEN_SECRET = "myapp-api-token"
API_TOKEN_KEY = "token"


def run_token_secret(run_id: int | str) -> str:
    """The name of the Secret that holds a run's platform API token."""
    return f"myapp-run-{run_id}-token"
