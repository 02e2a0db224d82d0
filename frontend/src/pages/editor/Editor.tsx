// The editor for one loaded pipeline: toolbar, palette, canvas, the selected task's form, dialogs.
// State lives in one reducer (draft + undo history + server errors); callbacks passed down are
// stable so the palette, canvas and nodes skip re-rendering while the form is typed into.
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { useReactFlow } from "@xyflow/react";
import { api, ApiError, describeError } from "../../api/client";
import { NODE_HEIGHT, NODE_WIDTH } from "../../lib/layout";
import { useLatest } from "../../lib/useLatest";
import { Link, navigate } from "../../router";
import type { JobTemplate, PipelineGraph, PipelineRun, PipelineRunBody, ResourceGroup } from "../../types";
import type { ImageChoice } from "../notebooks/logic";
import { Canvas, type Selection } from "./Canvas";
import { Dependencies } from "./Dependencies";
import { editorReducer, initialState, isDirty } from "./editorState";
import {
  addTask, autoLayout, connect, draftFromServer, edgeId, findFreeSpot, moveTasks, removeElements, updateTask,
  type Draft, type DraftTask, type Point,
} from "./model";
import { Palette } from "./Palette";
import { buildGraphPayload, mapServerErrors } from "./payload";
import { RunDialog } from "../run/RunDialog";
import { SettingsDialog } from "./SettingsDialog";
import { TaskForm, type TaskEdit } from "./TaskForm";
import { duplicateNames, validateTask, type FieldErrors } from "./validation";
import { useLeaveGuard } from "./useLeaveGuard";
import { YamlDialog } from "./YamlDialog";

interface EditorProps {
  graph: PipelineGraph;
  templates: JobTemplate[];
  resourceGroups: ResourceGroup[];
  images: readonly ImageChoice[];
  readOnly: boolean;
  onReload: () => void;
}

interface SaveProblem {
  message: string;
  details: string[];
}

const NO_SELECTION: Selection = { nodes: new Set(), edges: new Set() };
const NO_ERRORS: FieldErrors = {};
const READ_ONLY = "Read-only: viewers cannot change or run this pipeline";
const FIT_VIEW = { padding: 0.15, maxZoom: 1.2, duration: 200 };

function only(key: string): Selection {
  return { nodes: new Set([key]), edges: new Set() };
}

/** The selection, unless a task is selected: the form being typed into stays where it is (the problem
 * banner names the other tasks), so the next keystroke never lands in another task. */
function unlessATask(fallback: Selection): (selection: Selection) => Selection {
  return (selection) => (selection.nodes.size ? selection : fallback);
}

// validateTask's answers by task object (draft tasks are immutable: an edit makes a new object), so a
// change re-validates only the tasks it touched; entries go with their tasks.
const checked = new WeakMap<DraftTask, { template?: JobTemplate; duplicate: boolean; errors: FieldErrors }>();

function taskErrors(task: DraftTask, template: JobTemplate | undefined, duplicate: boolean): FieldErrors {
  let entry = checked.get(task);
  if (!entry || entry.template !== template || entry.duplicate !== duplicate) {
    entry = { template, duplicate, errors: validateTask(task, template, duplicate) };
    checked.set(task, entry);
  }
  return entry.errors;
}

/** Client-side errors per task, recomputed only for tasks that changed. */
function useTaskErrors(draft: Draft, templates: Map<number, JobTemplate>): Map<string, FieldErrors> {
  return useMemo(() => {
    const duplicates = duplicateNames(draft.tasks);
    const result = new Map<string, FieldErrors>();
    for (const task of draft.tasks) {
      const errors = taskErrors(task, templates.get(task.templateId), duplicates.has(task.name));
      if (Object.keys(errors).length) result.set(task.key, errors);
    }
    return result;
  }, [draft.tasks, templates]);
}

export function Editor({ graph, templates, resourceGroups, images, readOnly, onReload }: EditorProps) {
  const [state, dispatch] = useReducer(editorReducer, graph, (g) => initialState(draftFromServer(g.tasks, g.edges)));
  const [pipeline, setPipeline] = useState(graph.pipeline);
  const [selection, setSelection] = useState<Selection>(NO_SELECTION);
  const [notice, setNotice] = useState<string | null>(null);
  const [problem, setProblem] = useState<SaveProblem | null>(null);
  const [busy, setBusy] = useState<"saving" | "starting" | null>(null);
  const [dialog, setDialog] = useState<"settings" | "yaml" | "run" | null>(null);
  const canvasBox = useRef<HTMLDivElement>(null);
  const { screenToFlowPosition, fitView } = useReactFlow();

  const draft = state.history.present;
  const dirty = isDirty(state);
  const draftRef = useLatest(draft);
  useLeaveGuard(dirty && !readOnly);

  const templatesById = useMemo(() => new Map(templates.map((t) => [t.id, t])), [templates]);
  const clientErrors = useTaskErrors(draft, templatesById);
  const invalidKeys = useMemo(() => {
    const keys = new Set(clientErrors.keys());
    for (const [key, fields] of Object.entries(state.serverErrors)) if (Object.keys(fields).length) keys.add(key);
    return keys;
  }, [clientErrors, state.serverErrors]);

  const selectedTask = selection.nodes.size === 1
    ? draft.tasks.find((t) => selection.nodes.has(t.key)) : undefined;
  const selectedEdge = selection.nodes.size === 0 && selection.edges.size === 1
    ? draft.edges.find((e) => selection.edges.has(edgeId(e))) : undefined;
  const selectedClient = selectedTask ? clientErrors.get(selectedTask.key) : undefined;
  const selectedServer = selectedTask ? state.serverErrors[selectedTask.key] : undefined;
  const formErrors = useMemo(() => (selectedClient || selectedServer
    ? { ...selectedServer, ...selectedClient } : NO_ERRORS), [selectedClient, selectedServer]);

  // --- graph operations (stable callbacks) ---

  const placeNew = useCallback((template: JobTemplate, position: Point) => {
    if (readOnly) return;
    const key = `n${draftRef.current.seq}`;
    dispatch({ type: "change", change: (d) => addTask(d, template, position).draft });
    setSelection(only(key));
    setNotice(null);
  }, [readOnly, draftRef]);

  const onAdd = useCallback((template: JobTemplate) => {
    const box = canvasBox.current?.getBoundingClientRect();
    const centre = box
      ? screenToFlowPosition({ x: box.left + box.width / 2, y: box.top + box.height / 2 })
      : { x: 0, y: 0 };
    const near = { x: centre.x - NODE_WIDTH / 2, y: centre.y - NODE_HEIGHT / 2 };
    placeNew(template, findFreeSpot(draftRef.current.tasks, near));
  }, [placeNew, screenToFlowPosition, draftRef]);

  const onDropTemplate = useCallback((templateId: number, position: Point) => {
    const template = templatesById.get(templateId);
    if (template) placeNew(template, position);
  }, [placeNew, templatesById]);

  const onMove = useCallback((positions: Map<string, Point>) => {
    dispatch({ type: "change", change: (d) => moveTasks(d, positions) });
  }, []);

  const onConnect = useCallback((upstream: string, downstream: string) => {
    const result = connect(draftRef.current, upstream, downstream);
    if (result.error) {
      setNotice(result.error);
      return;
    }
    setNotice(null);
    dispatch({ type: "change", change: (d) => connect(d, upstream, downstream).draft ?? d });
  }, [draftRef]);

  const onDelete = useCallback((taskKeys: string[], edgeIds: string[]) => {
    dispatch({ type: "change", change: (d) => removeElements(d, taskKeys, edgeIds) });
    const goneTasks = new Set(taskKeys);
    const goneEdges = new Set(edgeIds);
    setSelection((s) => ({
      nodes: new Set([...s.nodes].filter((k) => !goneTasks.has(k))),
      edges: new Set([...s.edges].filter((id) => !goneEdges.has(id) && ![...goneTasks].some((k) => id.startsWith(`${k}->`) || id.endsWith(`->${k}`)))),
    }));
  }, []);

  const onEdit = useCallback<TaskEdit>((key, field, change) => {
    const task = field === "name" ? draftRef.current.tasks.find((t) => t.key === key) : undefined;
    if (task) {
      dispatch({ type: "rename", key, name: change(task).name });
      return;
    }
    dispatch({ type: "change", change: (d) => updateTask(d, key, change), coalesce: `${key}:${field}`, field: { key, name: field } });
  }, [draftRef]);
  const onFieldBlur = useCallback(() => dispatch({ type: "seal" }), []);

  const fitSoon = useCallback(() => {
    // After React Flow has taken the new positions (next frames).
    requestAnimationFrame(() => requestAnimationFrame(() => void fitView(FIT_VIEW)));
  }, [fitView]);

  const onLayout = () => {
    dispatch({ type: "change", change: autoLayout });
    fitSoon();
  };

  // --- save and run ---

  const save = async (): Promise<boolean> => {
    const request = draftRef.current;
    const broken = request.tasks.filter((t) => clientErrors.has(t.key));
    if (broken.length) {
      setProblem({
        message: `Fix the marked fields first: ${broken.length === 1 ? "task" : "tasks"} ${broken.map((t) => t.name || "(unnamed)").join(", ")}.`,
        details: [],
      });
      setSelection(unlessATask(only(broken[0].key)));
      return false;
    }
    setBusy("saving");
    setProblem(null);
    try {
      const saved = await api<PipelineGraph>(`/api/v1/pipeline/${pipeline.id}/graph`, {
        method: "PUT", body: buildGraphPayload(request, templatesById),
      });
      const ids = new Map(saved.tasks.flatMap((t) => (t.key ? [[t.key, t.id] as const] : [])));
      dispatch({ type: "saved", request, ids });
      setPipeline(saved.pipeline);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.errors.length) {
        const mapped = mapServerErrors(err.errors, request);
        dispatch({ type: "serverErrors", errors: mapped.byTask });
        const firstBad = request.tasks.find((t) => mapped.byTask[t.key]);
        if (firstBad) setSelection(unlessATask(only(firstBad.key)));
        const refused = request.tasks.flatMap((t) => Object.entries(mapped.byTask[t.key] ?? {})
          .map(([field, reason]) => `${t.name} › ${field.replace(/^args\./, "")}: ${reason}`));
        const message = refused.length ? "Not saved: the server refused these fields (marked on the tasks)." : `Not saved: ${err.message}`;
        setProblem({ message, details: [...refused, ...mapped.general] });
      } else {
        setProblem({ message: `Not saved: ${describeError(err)}`, details: [] });
      }
      return false;
    } finally {
      setBusy(null);
    }
  };

  const run = async (params?: Record<string, string>) => {
    if (dirty && !(await save())) return;
    // A pipeline with parameters asks for this run's values first (RunDialog), then comes back here.
    if (params === undefined && Object.keys(pipeline.parameters ?? {}).length > 0) {
      setDialog("run");
      return;
    }
    setBusy("starting");
    setProblem(null);
    try {
      const started = await api<PipelineRun>("/api/v1/pipeline_run/", {
        method: "POST", body: { pipeline_id: pipeline.id, parameters: params ?? {} } satisfies PipelineRunBody,
      });
      navigate(`/runs/${started.id}`);
    } catch (err) {
      setProblem({ message: `Run not started: ${describeError(err)}`, details: [] });
      setBusy(null);
    }
  };

  // Keyboard: undo/redo/save anywhere in the editor, form fields included (their edits are in the history).
  const saveRef = useLatest(save);
  useEffect(() => {
    if (readOnly) return;
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey) return;
      // Dialogs and the template search have their own text, not part of the draft.
      if ((event.target as Element | null)?.closest?.("dialog, .editor-palette")) return;
      const key = event.key.toLowerCase();
      if (key === "z" && !event.shiftKey) dispatch({ type: "undo" });
      else if ((key === "z" && event.shiftKey) || key === "y") dispatch({ type: "redo" });
      else if (key === "s") void saveRef.current();
      else return;
      event.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [readOnly, saveRef]);

  const status = busy === "saving" ? "Saving…" : busy === "starting" ? "Starting run…"
    : dirty ? "Unsaved changes" : "Saved";
  const canUndo = state.history.past.length > 0;
  const canRedo = state.history.future.length > 0;
  const taskName = (key: string) => draft.tasks.find((t) => t.key === key)?.name ?? key;

  return (
    <div className="editor">
      <header className="page-header editor-header">
        <div className="editor-title">
          <h1>{pipeline.name}</h1>
          <span className={`save-status${dirty ? " dirty" : ""}`} role="status" aria-live="polite">{status}</span>
          {readOnly && <span className="muted">{READ_ONLY}</span>}
        </div>
        <div className="actions" title={readOnly ? READ_ONLY : undefined}>
          <button type="button" className="icon-button" aria-label="Undo" title="Undo (Ctrl+Z)"
            disabled={readOnly || !canUndo} onClick={() => dispatch({ type: "undo" })}>↶</button>
          <button type="button" className="icon-button" aria-label="Redo" title="Redo (Ctrl+Shift+Z)"
            disabled={readOnly || !canRedo} onClick={() => dispatch({ type: "redo" })}>↷</button>
          <button type="button" onClick={onLayout} disabled={readOnly || draft.tasks.length === 0}>Auto-layout</button>
          <button type="button" onClick={() => setDialog("settings")}>Settings</button>
          <button type="button" onClick={() => setDialog("yaml")}>YAML</button>
          <Link to={`/pipelines/${pipeline.id}/runs`} className="button">Run history</Link>
          <button type="button" onClick={() => void save()} disabled={readOnly || !dirty || busy !== null}
            title="Save (Ctrl+S)">Save</button>
          <button type="button" className="primary" onClick={() => void run()} disabled={readOnly || busy !== null}>
            Run
          </button>
        </div>
      </header>
      {problem && (
        <div className="error-banner problem" role="alert">
          <div>
            {problem.message}
            {problem.details.length > 0 && <ul>{problem.details.map((d) => <li key={d}>{d}</li>)}</ul>}
          </div>
          <button type="button" className="link-button" onClick={() => setProblem(null)}>Dismiss</button>
        </div>
      )}
      <div className={`editor-body${readOnly ? " read-only" : ""}`}>
        {!readOnly && <Palette templates={templates} onAdd={onAdd} />}
        <div className="editor-canvas-box" ref={canvasBox}>
          {notice && (
            <div className="error-banner canvas-notice" role="alert">
              {notice}
              <button type="button" className="link-button" onClick={() => setNotice(null)}>Dismiss</button>
            </div>
          )}
          {draft.tasks.length === 0 && (
            <p className="canvas-empty muted">
              {readOnly ? "This pipeline has no tasks." : "No tasks yet: drag a template here, or press one in the list."}
            </p>
          )}
          <Canvas tasks={draft.tasks} edges={draft.edges} templates={templatesById} invalidKeys={invalidKeys}
            selection={selection} readOnly={readOnly} onSelectionChange={setSelection} onMove={onMove}
            onConnect={onConnect} onDelete={onDelete} onDropTemplate={onDropTemplate} />
        </div>
        <aside className="editor-side" aria-label="Properties">
          {selectedTask ? (
            <>
              <div className="side-header">
                <h2>Task {selectedTask.name}</h2>
                {!readOnly && (
                  <button type="button" className="danger" onClick={() => onDelete([selectedTask.key], [])}>Delete task</button>
                )}
              </div>
              <Dependencies task={selectedTask} tasks={draft.tasks} edges={draft.edges} readOnly={readOnly}
                onConnect={onConnect} onRemove={(up, down) => onDelete([], [edgeId({ upstream: up, downstream: down })])} />
              <TaskForm key={selectedTask.key} task={selectedTask} template={templatesById.get(selectedTask.templateId)}
                errors={formErrors} resourceGroups={resourceGroups} readOnly={readOnly} onEdit={onEdit} onBlur={onFieldBlur}
                images={images} />
            </>
          ) : selectedEdge ? (
            <>
              <h2>Dependency</h2>
              <p>{taskName(selectedEdge.downstream)} runs after {taskName(selectedEdge.upstream)}.</p>
              {!readOnly && (
                <button type="button" className="danger" onClick={() => onDelete([], [edgeId(selectedEdge)])}>
                  Delete dependency
                </button>
              )}
            </>
          ) : (
            <>
              <h2>{pipeline.name}</h2>
              {pipeline.description && <p>{pipeline.description}</p>}
              <p className="muted">
                {draft.tasks.length} {draft.tasks.length === 1 ? "task" : "tasks"}, {draft.edges.length}{" "}
                {draft.edges.length === 1 ? "dependency" : "dependencies"}
                {pipeline.schedule ? `, scheduled ${pipeline.schedule}${pipeline.paused ? " (paused)" : ""}` : ", no schedule"}.
              </p>
              {invalidKeys.size > 0 && (
                <p className="field-error">
                  {invalidKeys.size} {invalidKeys.size === 1 ? "task has" : "tasks have"} errors:{" "}
                  {[...invalidKeys].map((key, i) => (
                    <span key={key}>{i > 0 && ", "}
                      <button type="button" className="link-button" onClick={() => setSelection(only(key))}>{taskName(key)}</button>
                    </span>
                  ))}
                </p>
              )}
              <p className="hint">Select a task to edit it. Connect a task's right handle to another's left handle to make
                it run after. Delete or Backspace removes the selection; Ctrl+Z / Ctrl+Shift+Z undo and redo.</p>
            </>
          )}
        </aside>
      </div>
      {dialog === "run" && (
        <RunDialog parameters={pipeline.parameters ?? {}} busy={busy === "starting"}
          onRun={(params) => void run(params)} onClose={() => setDialog(null)} />
      )}
      {dialog === "settings" && (
        <SettingsDialog pipeline={pipeline} readOnly={readOnly} onSaved={setPipeline} onClose={() => setDialog(null)} />
      )}
      {dialog === "yaml" && (
        <YamlDialog pipelineId={pipeline.id} pipelineName={pipeline.name} readOnly={readOnly} dirty={dirty} onClose={() => setDialog(null)}
          onImported={(imported) => {
            setDialog(null);
            if (imported.id === pipeline.id) onReload();
            else navigate(`/pipelines/${imported.id}`);
          }} />
      )}
    </div>
  );
}
