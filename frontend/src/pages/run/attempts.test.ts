import { describe, expect, it } from "vitest";
import { attemptsOf, isActive, latestAttempts, restartedBefore, waitingReason } from "./attempts";
import type { AttemptSummary } from "../../types";

function attempt(id: number, taskId: number, n: number, state: AttemptSummary["state"] = "succeeded"): AttemptSummary {
  return { id, task_id: taskId, attempt: n, state, reason: null, exit_code: null, backend: "local",
    created_at: "2026-01-01T00:00:00", submitted_at: null, started_at: null, finished_at: null,
    queue_position: null, preemptions: 0, cause: null };
}

describe("latestAttempts", () => {
  it("keeps the highest attempt per task whatever the order", () => {
    const runs = [attempt(5, 1, 3, "running"), attempt(1, 1, 1, "failed"), attempt(3, 1, 2, "failed"),
      attempt(2, 2, 1)];
    const latest = latestAttempts(runs);
    expect(latest.size).toBe(2);
    expect(latest.get(1)?.id).toBe(5);
    expect(latest.get(1)?.state).toBe("running");
    expect(latest.get(2)?.id).toBe(2);
    expect(latest.get(3)).toBeUndefined();
  });
  it("is empty for no attempts", () => {
    expect(latestAttempts([]).size).toBe(0);
  });
});

describe("attemptsOf", () => {
  it("returns one task's attempts sorted oldest first", () => {
    const runs = [attempt(7, 1, 2), attempt(8, 2, 1), attempt(6, 1, 1)];
    expect(attemptsOf(runs, 1).map((r) => r.id)).toEqual([6, 7]);
    expect(attemptsOf(runs, 9)).toEqual([]);
  });
});

describe("isActive", () => {
  it("tells waiting and running states from terminal ones", () => {
    expect(isActive("pending")).toBe(true);
    expect(isActive("running")).toBe(true);
    expect(isActive("upstream_failed")).toBe(false);
    expect(isActive("succeeded")).toBe(false);
  });
});

describe("waitingReason", () => {
  it("adds the queue position while the attempt waits for its resource group", () => {
    const waiting = { ...attempt(1, 1, 1, "queued"), reason: "waiting: project quota gpu 8/8", queue_position: 3 };
    expect(waitingReason(waiting)).toBe("waiting: project quota gpu 8/8 (position 3)");
    expect(waitingReason({ ...waiting, state: "cancelled" })).toBe("waiting: project quota gpu 8/8");
    expect(waitingReason({ ...attempt(2, 1, 1, "failed"), reason: "exit 1" })).toBe("exit 1");
  });
});

describe("restartedBefore", () => {
  it("says why the previous attempt stopped when it was preempted, and nothing otherwise", () => {
    const stopped = { ...attempt(1, 1, 1, "cancelled"), reason: "preempted for project a's quota; the task resumes from epoch 6",
      cause: "preempted" };
    const resumed = { ...attempt(2, 1, 2, "running"), preemptions: 1 };
    expect(restartedBefore([stopped, resumed], resumed)).toBe(stopped.reason);
    const failed = { ...attempt(3, 1, 3, "running"), preemptions: 1 };
    expect(restartedBefore([stopped, resumed, failed], failed)).toBeNull();
    expect(restartedBefore([stopped], stopped)).toBeNull();
  });
  it("says why the previous attempt lost its gang: a killed replica, an eviction, a lost node", () => {
    const lost = { ...attempt(1, 1, 1, "failed"), cause: "node-lost",
      reason: "master-0 lost with its node from node n1 (DeletionByTaintManager): the whole gang restarts from its checkpoint" };
    const again = attempt(2, 1, 2, "running");
    expect(restartedBefore([lost, again], again)).toBe(lost.reason);
    const crashed = { ...lost, cause: null, reason: "worker-0 exited with code 1: bad data" };
    expect(restartedBefore([crashed, again], again)).toBeNull();
  });
});
