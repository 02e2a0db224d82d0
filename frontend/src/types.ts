// The API's JSON shapes, by name: aliases over the types generated from the server's OpenAPI spec
// (src/api/schema.ts, `make api-types`; docs/ui.md). Nothing here is written by hand: to change a
// shape, change the server (myapp/api/responses.py, the models, the request schemas) and regenerate.
import type { components } from "./api/schema";

type Schemas = components["schemas"];

// ---- every endpoint ----------------------------------------------------------------------------------
/** One page of a list endpoint (/api/v1/<resource>/): {count, page, page_size, items}. */
export type Page<T> = Schemas["PageMeta"] & { items: T[] };
/** Every error answer: a message, and the fields to blame when there are any. */
export type ErrorBody = Schemas["Error"];
export type FieldReason = Schemas["FieldReason"];
export type Message = Schemas["Message"];

// ---- sign-in and who is signed in -------------------------------------------------------------------
export type SessionStatus = Schemas["Session"];
export type Me = Schemas["Me"];
export type MyProject = Schemas["MyProject"];
export type ProjectRole = MyProject["role"];

// ---- catalog -------------------------------------------------------------------------------------------
export type Resources = Schemas["Resources"];
export type ArgProperty = Schemas["ArgProperty"];
export type ArgsSchema = Schemas["ArgsSchema"];
export type JobTemplate = Schemas["JobTemplateOut"];
export type Image = Schemas["ImageOut"];

// ---- pipelines and runs --------------------------------------------------------------------------------
export type Pipeline = Schemas["PipelineOut"];
export type ConcurrencyPolicy = Pipeline["concurrency_policy"];
export type Task = Schemas["TaskOut"];
export type TriggerRule = Task["trigger_rule"];
export type Edge = Schemas["EdgeOut"];
/** GET/PUT /pipeline/{id}/graph; after a PUT each task also carries the key it was saved under. */
export type PipelineGraph = Schemas["PipelineGraph"];
/** The body of PUT /pipeline/{id}/graph, and one task of it. */
export type GraphPayload = Schemas["Graph"];
export type GraphTaskPayload = Schemas["GraphTask"];
export type PipelineExport = Schemas["PipelineExport"];
export type WebhookSecret = Schemas["WebhookSecret"];
export type WebhookEvent = Pipeline["webhook_events"][number];
export type PipelineRun = Schemas["PipelineRunOut"];
export type RunState = PipelineRun["state"];
export type TaskRun = Schemas["TaskRunOut"];
// queued: waiting for upstream; pending: submitted, not running yet; waiting: for resources.
export type TaskState = TaskRun["state"];
export type RunId = Schemas["RunId"];
export type LogLine = Schemas["LogLine"];
export type TaskLogs = Schemas["TaskLogs"];
export type MetricSample = Schemas["MetricSample"];
export type TaskMetrics = Schemas["TaskMetrics"];
/** Data of a `run` event from /pipeline_run/{id}/events: the run and its task runs (no manifests). */
export type RunSnapshot = Schemas["RunSnapshot"];
export type AttemptSummary = Schemas["AttemptSummary"];
/** Data of a `lines` event from /task_run/{id}/log_stream. */
export type LogBatch = Schemas["LogBatch"];
/** Data of a `problem` event from /task_run/{id}/log_stream: the backend could not be read (it keeps trying). */
export type StreamProblem = Schemas["StreamProblem"];
/** Data of the `end` event of both streams. */
export type StreamEnd = Schemas["StreamEnd"];

// The states after which nothing changes (myapp/models/states.py); checked against the generated unions.
export const TERMINAL_TASK_STATES: readonly TaskState[] = ["succeeded", "failed", "cancelled", "skipped", "upstream_failed"];
export const TERMINAL_RUN_STATES: readonly RunState[] = ["succeeded", "failed", "cancelled"];

// ---- request bodies (the API's marshmallow schemas); a PUT takes any part of its POST body ----------------
export type PipelineBody = Schemas["Pipeline"];
export type CloneBody = Schemas["Clone"];
export type PipelineYamlBody = Schemas["PipelineYaml"];
export type PipelineRunBody = Schemas["PipelineRun"];
export type ClusterBody = Schemas["Cluster"];
export type ResourceGroupBody = Schemas["ResourceGroup"];
export type QuotaBody = Schemas["Quota"];

// ---- admin: projects, clusters, capacity ---------------------------------------------------------------
export type Project = Schemas["ProjectOut"];
export type ProjectBody = Schemas["Project"];
/** What a project runs now: what deleting it stops (GET /project/{id}/running). */
export type RunningWork = Schemas["RunningWork"];
export type Cluster = Schemas["ClusterOut"];
export type ClusterKind = Cluster["kind"];
export type ServingEngine = Cluster["serving_engine"];
export type Toleration = Schemas["Toleration"];
/** cpu and memory as Kubernetes quantity strings, also given in canonical units. */
export type ResourceGroup = Schemas["ResourceGroupOut"];
export type Quota = Schemas["QuotaOut"];
/** Canonical amounts in the usage report (GET /api/v1/quota/usage). */
export type Amount = Schemas["Amount"];
export type GroupUsage = Schemas["GroupUsage"];
export type UsageReport = Schemas["UsageReport"];
/** How many attempts, notebooks and model servers a project runs in a resource group. */
export type RunningCounts = Schemas["RunningCounts"];
/** Admin limits (GET /api/v1/limits/): the platform's, and each project's limit of runs running at once. */
export type Limits = Schemas["LimitsOut"];
export type PlatformLimit = Schemas["PlatformLimitOut"];
export type ProjectLimit = Schemas["ProjectLimitOut"];
/** One resource group now (GET /api/v1/resource_group/{id}/status): capacity, use, projects, running, queue. */
export type ResourceGroupStatus = Schemas["ResourceGroupStatus"];
export type GroupProjectStatus = Schemas["GroupProjectStatus"];
export type GroupRunningAttempt = Schemas["GroupRunningAttempt"];
export type GroupWaitingAttempt = Schemas["GroupWaitingAttempt"];
/** The scheduling simulator (POST /api/v1/scheduler/simulate, GET /api/v1/scheduler/traces). */
export type Simulation = Schemas["Simulation"];
export type SimulationResult = Schemas["SimulationResult"];
export type SimulatorTraces = Schemas["SimulatorTraces"];
export type SimulateBody = Schemas["Simulate"];

// ---- project members (owners manage them) and users (admins manage them) --------------------------------
export type Member = Schemas["MemberOut"];
export type MemberList = Schemas["MemberList"];
export type MemberBody = Schemas["Member"];
export type MemberRoleBody = Schemas["MemberRole"];
export type User = Schemas["UserOut"];
/** POST /user/ answers the user, and the password once when the server generated it. */
export type NewUser = Schemas["NewUser"];
export type UserCreateBody = Schemas["UserCreate"];
export type UserUpdateBody = Schemas["UserUpdate"];
export type PasswordResetBody = Schemas["PasswordReset"];
export type PasswordChanged = Schemas["PasswordChanged"];
/** GET/DELETE /user/{id}/login_limits: addresses waiting after failed passwords, the budget for new
 * addresses, the addresses the user signed in from. */
export type LoginLimits = Schemas["LoginLimits"];

// ---- notebooks ---------------------------------------------------------------------------------------------
export type Notebook = Schemas["NotebookOut"];
/** pending, pulling (environment or image being prepared), waiting (for resources), running, idle, stopping,
 * stopped, failed: the reason says why. */
export type NotebookState = Notebook["state"];
export type NotebookBody = Schemas["Notebook"];
/** What New notebook offers a project, in order: the platform's defaults, the project's own, the catalog. */
export type NotebookImageChoices = Schemas["NotebookImageChoices"];
export type NotebookImageChoice = NotebookImageChoices["items"][number];

// ---- image builds ------------------------------------------------------------------------------------------
export type ImageBuild = Schemas["ImageBuildOut"];
export type ImageBuildBody = Schemas["ImageBuild"];
/** pending (stored, a worker takes it), running, succeeded, failed: the reason says why. */
export type BuildState = ImageBuild["state"];
export type BuildSource = ImageBuild["source"];
export type BuildLog = Schemas["BuildLog"];
export type BuildLogLine = Schemas["BuildLogLine"];
export type ImageUsage = Schemas["ImageUsage"];
/** A project's push credentials for Kaniko builds: whether set and for which registry, never the secret. */
export type RegistryCredentialsState = Schemas["RegistryCredentialsState"];
export type RegistryCredentialsBody = Schemas["RegistryCredentials"];
/** What an attempt wrote to MYAPP_OUTPUT_DIR and the metrics it reported (metrics.jsonl). */
export type TaskOutputs = Schemas["TaskOutputs"];
export type OutputFile = Schemas["OutputFile"];
export type ReportedMetric = Schemas["ReportedMetric"];

// ---- model registry and inference services (docs/serving.md) ---------------------------------------------
export type ModelVersion = Schemas["ModelVersionOut"];
export type ModelStage = ModelVersion["stage"];
/** Each metric's values per step on a version registered from a run. */
export type MetricHistory = Schemas["MetricHistory"]["metrics"];
export type InferenceService = Schemas["InferenceServiceOut"];
export type ServiceMetrics = Schemas["ServiceMetrics"];
export type ServiceLogs = Schemas["ServiceLogs"];

// ---- hyperparameter search (docs/experiments.md) ----------------------------------------------------------
export type Experiment = Schemas["ExperimentOut"];
/** created (stored, not started), running, succeeded, failed (the reason says why), cancelled. */
export type ExperimentState = Experiment["state"];
export type ExperimentBody = Schemas["Experiment"];
/** One parameter of a search space: float (log or not), int, or categorical with choices. */
export type SearchParameter = Schemas["Parameter"];
export type Objective = Schemas["Objective"];
export type EarlyStopping = Schemas["EarlyStopping"];
export type Trial = Schemas["TrialOut"];
/** running, complete, pruned (stopped early at pruned_step), failed, cancelled. */
export type TrialState = Trial["state"];
/** GET /experiment/{id}/importances: each parameter's share, or the reason there is none yet. */
export type ParamImportances = Schemas["ParamImportances"];
