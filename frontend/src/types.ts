// Shapes of the REST API's JSON (myapp/api/*.py present()).

export interface Page<T> {
  count: number;
  page: number;
  page_size: number;
  items: T[];
}

export type ProjectRole = "viewer" | "developer" | "owner";

export interface Me {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
  is_admin: boolean;
  projects: { id: number; name: string; role: ProjectRole }[];
  csrf_token: string;
}

export interface Resources {
  cpu?: string;
  memory?: string;
  gpu?: number;
}

export interface ArgProperty {
  type: "string" | "integer" | "number" | "boolean" | "array";
  description?: string;
  title?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  items?: Omit<ArgProperty, "items">;
  minItems?: number;
  maxItems?: number;
  "x-flag"?: string;
}

export interface ArgsSchema {
  properties?: Record<string, ArgProperty>;
  required?: string[];
}

export interface JobTemplate {
  id: number;
  name: string;
  version: string;
  description: string;
  category: string;
  kind: string;
  image: string;
  command: string[];
  args_schema: ArgsSchema;
  default_resources: Resources;
  max_resources: Resources;
  env: Record<string, string>;
  builtin: boolean;
}

export type ConcurrencyPolicy = "wait" | "skip" | "cancel";
export type TriggerRule = "all_success" | "all_done" | "one_failed";

export interface Pipeline {
  id: number;
  project_id: number;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  schedule: string | null;
  paused: boolean;
  max_active_runs: number;
  concurrency_policy: ConcurrencyPolicy;
  depends_on_past: boolean;
  webhook_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface Task {
  id: number;
  project_id: number;
  pipeline_id: number;
  name: string;
  template_id: number;
  args: Record<string, unknown>;
  resources: Resources;
  resource_group_id: number | null;
  retries: number;
  retry_delay: number;
  timeout: number | null;
  trigger_rule: TriggerRule;
  position: { x?: number; y?: number };
}

export interface Edge {
  id: number;
  project_id: number;
  pipeline_id: number;
  upstream_task_id: number;
  downstream_task_id: number;
}

export type RunState = "queued" | "running" | "succeeded" | "failed" | "cancelled";
// queued: waiting for upstream; pending: submitted, not running yet; waiting: for resources.
export type TaskState = "queued" | "pending" | "waiting" | "running" | "succeeded" | "failed" | "cancelled"
  | "skipped" | "upstream_failed";
export const TERMINAL_TASK_STATES: TaskState[] = ["succeeded", "failed", "cancelled", "skipped", "upstream_failed"];
export const TERMINAL_RUN_STATES: RunState[] = ["succeeded", "failed", "cancelled"];

export interface PipelineRun {
  id: number;
  project_id: number;
  pipeline_id: number;
  run_key: string;
  state: RunState;
  reason: string | null;
  trigger: string;
  logical_date: string | null;
  params: Record<string, unknown>;
  rerun_of_id: number | null;
  only_task_id: number | null;
  created_by_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface TaskRun {
  id: number;
  project_id: number;
  pipeline_run_id: number;
  task_id: number;
  attempt: number;
  state: TaskState;
  reason: string | null;
  backend: string | null;
  manifests: Record<string, unknown>[];
  exit_code: number | null;
  created_at: string;
  submitted_at: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface LogLine {
  replica: string;
  seq: number;
  line: string;
  timestamp: number;
}

export interface MetricSample {
  timestamp: number;
  replica: string;
  cpu_cores: number | null;
  memory_bytes: number | null;
  gpu_utilization: number | null;
  gpu_memory_bytes: number | null;
}

// Admin and catalog resources (myapp/api/admin.py, projects.py, catalog.py).

export interface Project {
  id: number;
  name: string;
  description: string;
  namespace: string;
  service_account: string;
  created_at: string;
  updated_at: string;
}

export interface Image {
  id: number;
  repository: string;
  tag: string;
  pull_secret: string | null;
  description: string;
}

export type ClusterKind = "local" | "kubernetes";

export interface Cluster {
  id: number;
  name: string;
  kind: ClusterKind;
  kube_context: string | null;
  in_cluster: boolean;
  prometheus_url: string | null;
  enabled: boolean;
}

export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  tolerationSeconds?: number;
}

/** cpu and memory as Kubernetes quantity strings, also given in canonical units. */
export interface Capacity {
  cpu: string;
  memory: string;
  gpus: number;
  cpu_millicores: number;
  memory_bytes: number;
}

export interface ResourceGroup extends Capacity {
  id: number;
  name: string;
  cluster_id: number;
  node_selector: Record<string, string>;
  tolerations: Toleration[];
  gpu_type: string | null;
  queue: string | null;
  gang_scheduling: boolean;
}

export interface Quota extends Capacity {
  id: number;
  project_id: number;
  resource_group_id: number;
}

/** Canonical amounts in the usage report (GET /api/v1/quota/usage). */
export interface Amount {
  cpu_millicores: number;
  memory_bytes: number;
  gpus: number;
}

export interface GroupUsage {
  resource_group_id: number | null;
  name: string;
  cluster_id: number | null;
  gpu_type: string | null;
  capacity: Amount | null;
  used: Amount;
  projects: { project_id: number; project: string; quota: Amount | null; used: Amount }[];
}
