// How a task looks to an A2A client, from its row and a snapshot of its piece: pure, so that
// push notifications (services/webhooks/deliveries.ts) can build one without the task store.
import type { Artifact, Message, Task, TaskState } from '@a2a-js/sdk';
import type { A2aSkillId } from '../../domain/a2a/tasks';
import { mailStatusText, taskStateOfMail } from '../../domain/a2a/tasks';
import type { MailStatusName } from '../../domain/workflow-safe/mail-rules';

export interface A2aTaskRow {
  id: string;
  context_id: string;
  member_id: string;
  agent_id: string | null;
  owner_key: string;
  test_mode: boolean;
  skill: A2aSkillId;
  message_id: string;
  /** The REST error body of a refused letter (status and body), or null. */
  rejection: { status: number; body: Record<string, unknown> } | null;
  created_at: Date;
  updated_at: Date;
}

/** What a letter's task shows of its piece at one moment: now (tasks/get) or an event (push). */
export interface PieceSnapshot {
  status: MailStatusName;
  tracking_number?: string | null;
  carrier?: string | null;
  error_message?: string | null;
  at: Date;
  /** The outbound mail record (or the event's payload), the task's artifact. */
  record: Record<string, unknown>;
}

export function agentMessage(task: A2aTaskRow, key: string, parts: Message['parts']): Message {
  return {
    kind: 'message',
    role: 'agent',
    messageId: `${task.id}:${key}`,
    taskId: task.id,
    contextId: task.context_id,
    parts,
  };
}

export function taskOf(
  task: A2aTaskRow,
  state: TaskState,
  at: Date,
  message: Message,
  artifacts: Artifact[],
  extra: Record<string, unknown> = {},
): Task {
  return {
    kind: 'task',
    id: task.id,
    contextId: task.context_id,
    status: { state, timestamp: at.toISOString(), message },
    artifacts,
    metadata: { skill: task.skill, test_mode: task.test_mode, ...extra },
  };
}

/** A letter's task as of the snapshot of its piece. */
export function letterTask(task: A2aTaskRow, piece: PieceSnapshot): Task {
  const outboundMailId = (piece.record.id ?? piece.record.outbound_mail_id) as string;
  return taskOf(
    task,
    taskStateOfMail(piece.status),
    piece.at,
    agentMessage(task, piece.status, [{ kind: 'text', text: mailStatusText(piece) }]),
    [
      {
        artifactId: 'outbound_mail',
        name: 'Outbound mail record',
        description: 'The piece as GET /v1/mail/{id} returns it (signed URLs valid for 1 hour)',
        parts: [{ kind: 'data', data: piece.record }],
      },
    ],
    { outbound_mail_id: outboundMailId, mail_status: piece.status },
  );
}

/** A refused letter: the REST error body (error, code, fields[], ...) as the status message's data. */
export function rejectedTask(task: A2aTaskRow): Task {
  const { status, body } = task.rejection!;
  const label = (body.code ??
    body.reason ??
    (Array.isArray(body.fields) ? 'validation_error' : `http_${status}`)) as string;
  return taskOf(
    task,
    'rejected',
    task.updated_at,
    agentMessage(task, 'rejected', [
      { kind: 'text', text: `${label}: ${String(body.error ?? 'The letter was refused.')}` },
      { kind: 'data', data: { status, ...body } },
    ]),
    [],
    { rest_status: status },
  );
}
