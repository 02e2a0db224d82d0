// A notebook's JupyterLab log (GET /api/v1/notebook/{id}/log: the running attempt's lines, or the archived
// ones of the last attempt), refreshed while the dialog is open.
import { useEffect, useState } from "react";
import { api } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { Notebook, TaskLogs } from "../../types";
import { LogView } from "../run/LogView";
import "../run/run.css";

const REFRESH = 3000;

export function LogsDialog({ notebook, onClose }: { notebook: Notebook; onClose: () => void }) {
  const { data, error, reload } = useAsync(() => api<TaskLogs>(`/api/v1/notebook/${notebook.id}/log`), [notebook.id]);
  const [follow, setFollow] = useState(true);
  useEffect(() => {
    const timer = window.setInterval(reload, REFRESH);
    return () => window.clearInterval(timer);
  }, [reload]);
  return (
    <Dialog title={`Logs of ${notebook.name}`} onClose={onClose} wide>
      <ErrorBanner error={error} />
      {!data ? (!error && <Loading what="Loading logs" />) : (
        <LogView lines={data.items} follow={follow} onFollowChange={setFollow}
          empty="No log lines yet: JupyterLab has not started." colorOf={() => "var(--muted)"} />
      )}
    </Dialog>
  );
}
