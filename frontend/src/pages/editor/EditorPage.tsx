// The pipeline editor page: loads the graph, the template catalog and the resource groups, then
// hands them to the editor. A reload (after a YAML import) starts a fresh editor.
import { useRef } from "react";
import { ReactFlowProvider } from "@xyflow/react";
import { api, ApiError, listAll } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import { useProject, useSession } from "../../session";
import type { JobTemplate, NotebookImageChoices, PipelineGraph, ResourceGroup } from "../../types";
import { imageChoices } from "../notebooks/logic";
import { Editor } from "./Editor";
import "./editor.css";

export default function EditorPage({ pipelineId }: { pipelineId: number }) {
  const project = useProject();
  const { me } = useSession();
  const loads = useRef(0);
  const { data, error, reload } = useAsync(async () => {
    const [[graph, images], templates, resourceGroups] = await Promise.all([
      // What the pipeline's project may run, for a task's image: the same choices as its notebooks'.
      api<PipelineGraph>(`/api/v1/pipeline/${pipelineId}/graph`).then(async (g) => [g, imageChoices(
        (await api<NotebookImageChoices>(`/api/v1/notebook/project/${g.pipeline.project_id}/images`)).items)] as const),
      listAll<JobTemplate>("job_template"),
      // Optional: without access to the groups the task simply keeps the project default.
      listAll<ResourceGroup>("resource_group").catch(() => [] as ResourceGroup[]),
    ]);
    return { graph, templates, resourceGroups, images, version: ++loads.current };
  }, [pipelineId]);

  if (error && !data) {
    const missing = error instanceof ApiError && error.status === 404;
    return (
      <div>
        <ErrorBanner error={missing ? `Pipeline ${pipelineId} does not exist or is not in your projects.` : error} />
        <Link to="/pipelines">Back to pipelines</Link>
      </div>
    );
  }
  if (!data) return <Loading what="Loading pipeline" />;
  // The role in the pipeline's own project (the switcher may point at another one).
  const role = me?.projects.find((p) => p.id === data.graph.pipeline.project_id)?.role ?? project.role;
  return (
    <ReactFlowProvider key={data.version}>
      <Editor graph={data.graph} templates={data.templates} resourceGroups={data.resourceGroups} images={data.images}
        readOnly={role === "viewer"} onReload={reload} />
    </ReactFlowProvider>
  );
}
