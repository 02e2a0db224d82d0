// What the run header says about how a run came to be and with which parameters.
import type { Member, PipelineRun } from "../../types";

export interface RunParameter {
  name: string;
  value: string;
  /** Set for this run to something other than the pipeline's default (or not a pipeline parameter). */
  differs: boolean;
}

/** Every parameter the run uses: the pipeline's, with the run's own values over them (as the run
 * controller merges them), sorted by name; those the run set to another value are marked. */
export function runParameters(defaults: Record<string, unknown> | null | undefined,
  given: Record<string, unknown> | null | undefined): RunParameter[] {
  const base = defaults ?? {};
  const own = given ?? {};
  const names = [...new Set([...Object.keys(base), ...Object.keys(own)])].sort((a, b) => a.localeCompare(b));
  return names.map((name) => {
    const value = name in own ? own[name] : base[name];
    const differs = name in own && (!(name in base) || JSON.stringify(own[name]) !== JSON.stringify(base[name]));
    return { name, value: typeof value === "string" ? value : JSON.stringify(value), differs };
  });
}

/** A logical date is a scheduled run's (the interval it stands for); a manual, debug or rerun one has none
 * worth showing: it is when it was started, and by whom. */
export function showsLogicalDate(run: Pick<PipelineRun, "trigger">): boolean {
  return run.trigger === "schedule" || run.trigger === "backfill";
}

/** Who started the run: a member's name, "you", or the user's id once they have left the project. */
export function startedBy(createdById: number | null, members: Member[] | undefined, myId: number | undefined): string {
  if (createdById === null) return "—";
  if (createdById === myId) return "you";
  return members?.find((m) => m.user_id === createdById)?.username ?? `user #${createdById}`;
}
