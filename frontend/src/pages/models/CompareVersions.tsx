// Model versions side by side: their metrics and parameters in one table (a row whose values differ is
// marked) and a chart per metric with a line per version over its steps (the curves the registering run
// reported, GET /api/v1/model_version/{id}/metric_history).
import { api } from "../../api/client";
import { Chart } from "../../components/charts/Chart";
import { lineOption } from "../../components/charts/options";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { MetricHistory, ModelVersion } from "../../types";
import { compareRows, curveNames, curveSeries, versionLabel } from "./compare";

const GROUP_TITLES = { metric: "Metrics", parameter: "Parameters", model: "Model" } as const;

export function CompareVersions({ versions }: { versions: ModelVersion[] }) {
  const ids = versions.map((v) => v.id);
  const histories = useAsync(() => Promise.all(ids.map((id) =>
    api<{ metrics: MetricHistory }>(`/api/v1/model_version/${id}/metric_history`).then((h) => h.metrics))),
  [ids.join(",")]);
  const rows = compareRows(versions);
  const labels = versions.map((v) => versionLabel(v, versions));
  const curves = histories.data ? curveNames(histories.data) : [];

  return (
    <div className="panel comparison" aria-label="Comparison">
      <h2>{versions[0].name} {labels.join(" against ")}</h2>
      <table className="data compare" aria-label="Versions side by side">
        <thead>
          <tr><th scope="col" />{labels.map((l) => <th key={l} scope="col">{l}</th>)}</tr>
        </thead>
        {(["metric", "parameter", "model"] as const).map((group) => {
          const inGroup = rows.filter((r) => r.group === group);
          if (inGroup.length === 0) return null;
          return (
            <tbody key={group}>
              <tr className="group"><th scope="rowgroup" colSpan={labels.length + 1}>{GROUP_TITLES[group]}</th></tr>
              {inGroup.map((r) => (
                <tr key={`${group}-${r.name}`} className={r.differs ? "differs" : undefined}
                  data-differs={r.differs ? "true" : "false"}>
                  <th scope="row">{r.name}{r.differs && <span className="visually-hidden"> (differs)</span>}</th>
                  {r.cells.map((cell, i) => <td key={labels[i]}>{cell}</td>)}
                </tr>
              ))}
            </tbody>
          );
        })}
      </table>
      <ErrorBanner error={histories.error} />
      {!histories.data ? (histories.loading && <Loading what="Loading the curves" />) : curves.length === 0 ? (
        <p className="muted">No curves: these versions were not registered from a run that reported metrics.</p>
      ) : (
        <div className="charts" aria-label="Metrics over steps">
          {curves.map((name) => (
            <figure key={name} className="chart">
              <figcaption>{name}</figcaption>
              <Chart label={`${name} per version`} option={lineOption({
                series: curveSeries(versions, histories.data ?? [], name),
                x: { name: "step", integer: true }, y: { name } })} />
            </figure>
          ))}
        </div>
      )}
    </div>
  );
}
