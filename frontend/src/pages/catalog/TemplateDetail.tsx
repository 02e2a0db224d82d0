// Everything a task author needs from a template: arguments and their limits, resources, command, env.
import type { JobTemplate, Resources } from "../../types";
import { argRows } from "./logic";

export function TemplateDetail({ template }: { template: JobTemplate }) {
  const args = argRows(template.args_schema);
  const env = Object.entries(template.env ?? {});
  return (
    <article className="template-detail" aria-labelledby="template-title">
      <h2 id="template-title">{template.name} <span className="muted">v{template.version}</span></h2>
      <dl className="facts">
        <dt>Kind</dt><dd>{template.kind}</dd>
        <dt>Category</dt><dd>{template.category}</dd>
        <dt>Image</dt><dd><code>{template.image}</code></dd>
        <dt>Source</dt><dd>{template.builtin ? "built in" : "added by an administrator"}</dd>
      </dl>
      {template.description && <p>{template.description}</p>}

      <h3>Arguments</h3>
      {args.length === 0 ? <p className="muted">This template takes no arguments.</p> : (
        <table className="data compact">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Default</th>
              <th scope="col">Constraints</th><th scope="col">Description</th></tr>
          </thead>
          <tbody>
            {args.map((arg) => (
              <tr key={arg.name} data-arg={arg.name}>
                <th scope="row">
                  <code>{arg.name}</code>
                  {arg.required && <span className="tag required">required</span>}
                  {arg.flag && <div className="hint">{arg.flag}</div>}
                </th>
                <td>{arg.type}</td>
                <td><code>{arg.default}</code></td>
                <td>{arg.constraints.length ? arg.constraints.map((c) => <div key={c}>{c}</div>) : "—"}</td>
                <td>{arg.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h3>Resources</h3>
      <table className="data compact resources">
        <thead>
          <tr><th scope="col"><span className="visually-hidden">Limit</span></th><th scope="col">CPU</th>
            <th scope="col">Memory</th><th scope="col">GPUs</th></tr>
        </thead>
        <tbody>
          <ResourceRow label="Default" resources={template.default_resources} />
          <ResourceRow label="Maximum" resources={template.max_resources} />
        </tbody>
      </table>

      <h3>Command</h3>
      {template.command?.length ? <pre className="command">{template.command.join(" ")}</pre>
        : <p className="muted">The image's entrypoint.</p>}

      <h3>Environment</h3>
      {env.length === 0 ? <p className="muted">No extra variables.</p> : (
        <table className="data compact">
          <tbody>
            {env.map(([name, value]) => (
              <tr key={name}><th scope="row"><code>{name}</code></th><td><code>{value}</code></td></tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

function ResourceRow({ label, resources }: { label: string; resources: Resources | undefined }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{resources?.cpu ?? "—"}</td>
      <td>{resources?.memory ?? "—"}</td>
      <td>{resources?.gpu ?? 0}</td>
    </tr>
  );
}
