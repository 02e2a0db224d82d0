// One task on the canvas. Memoized: editing one task re-renders only its node.
import { memo } from "react";
import { Handle, Position, type Node, type NodeProps } from "@xyflow/react";

export interface TaskNodeData extends Record<string, unknown> {
  name: string;
  templateName: string;
  invalid: boolean;
}

export type TaskNodeType = Node<TaskNodeData, "task">;

export const TaskNode = memo(function TaskNode({ data, selected }: NodeProps<TaskNodeType>) {
  const className = `task-node${selected ? " selected" : ""}${data.invalid ? " invalid" : ""}`;
  return (
    <div className={className} data-task={data.name}>
      {/* Handles are plain divs: a title names them (an aria-label on a div without a role is not allowed);
          the keyboard's way to connect is the task form's Dependencies. */}
      <Handle type="target" position={Position.Left} title={`Input of ${data.name}`} />
      <div className="task-node-name">{data.name}</div>
      <div className="task-node-template">{data.templateName}</div>
      {data.invalid && (
        <span className="task-node-invalid" role="img" aria-label="has errors" title="This task has errors">!</span>
      )}
      <Handle type="source" position={Position.Right} title={`Output of ${data.name}`} />
    </div>
  );
});

export const NODE_TYPES = { task: TaskNode };
