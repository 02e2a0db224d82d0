// The Kubernetes objects an attempt submitted, one section per object, each copyable.
import { useState } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { TaskRun } from "../../types";

export function ManifestsTab({ attemptId }: { attemptId: number }) {
  const attempt = useAsync(() => api<TaskRun>(`/api/v1/task_run/${attemptId}`), [attemptId]);
  if (attempt.error) return <ErrorBanner error={attempt.error} />;
  if (!attempt.data) return <Loading what="Loading manifests" />;
  const manifests = attempt.data.manifests ?? [];
  if (manifests.length === 0) return <p className="muted">No manifests: this attempt has not been submitted yet.</p>;
  return (
    <div className="manifests">
      {manifests.map((object, i) => <Manifest key={i} object={object} />)}
    </div>
  );
}

function Manifest({ object }: { object: Record<string, unknown> }) {
  const metadata = (object.metadata ?? {}) as { name?: string };
  const heading = `${String(object.kind ?? "Object")}/${metadata.name ?? "?"}`;
  const text = JSON.stringify(object, null, 2);
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
    window.setTimeout(() => setCopied(null), 2000);
  };

  return (
    <section className="manifest">
      <header>
        <h3>{heading}</h3>
        <button type="button" onClick={() => void copy()} aria-label={`Copy ${heading}`}>
          {copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed" : "Copy"}
        </button>
      </header>
      <pre>{text}</pre>
    </section>
  );
}
