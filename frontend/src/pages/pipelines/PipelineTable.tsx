import { formatTime, StateBadge } from "../../components/ui";
import { Link } from "../../router";
import type { Pipeline, PipelineRun } from "../../types";

interface Props {
  pipelines: Pipeline[];
  lastRuns: Map<number, PipelineRun>;
  canEdit: boolean;
  onClone: (pipeline: Pipeline) => void;
  onDelete: (pipeline: Pipeline) => void;
}

export function PipelineTable({ pipelines, lastRuns, canEdit, onClone, onDelete }: Props) {
  return (
    <table className="data pipeline-table">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Description</th>
          <th scope="col">Schedule</th>
          <th scope="col">Last run</th>
          <th scope="col">Updated</th>
          <th scope="col"><span className="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        {pipelines.map((pipeline) => {
          const run = lastRuns.get(pipeline.id);
          return (
            <tr key={pipeline.id} data-pipeline={pipeline.name}>
              <td><Link to={`/pipelines/${pipeline.id}`} className="pipeline-name">{pipeline.name}</Link></td>
              <td className="description" title={pipeline.description}>{pipeline.description || <span className="muted">—</span>}</td>
              <td>
                {pipeline.schedule ? <code>{pipeline.schedule}</code> : <span className="muted">manual</span>}
                {pipeline.paused && <span className="state state-paused">paused</span>}
              </td>
              <td>
                {run ? (
                  <Link to={`/runs/${run.id}`} className="last-run">
                    <StateBadge state={run.state} /> <span className="muted">#{run.id} · {formatTime(run.created_at)}</span>
                  </Link>
                ) : <span className="muted">never run</span>}
              </td>
              <td>{formatTime(pipeline.updated_at)}</td>
              <td className="row-actions">
                <Link to={`/pipelines/${pipeline.id}/runs`} aria-label={`Runs of ${pipeline.name}`}>Runs</Link>
                {canEdit && (
                  <>
                    <button type="button" aria-label={`Clone ${pipeline.name}`} onClick={() => onClone(pipeline)}>
                      Clone
                    </button>
                    <button type="button" className="danger" aria-label={`Delete ${pipeline.name}`}
                      onClick={() => onDelete(pipeline)}>
                      Delete
                    </button>
                  </>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
