// The A2A task store (table a2a_tasks) and how a task looks to an A2A client. A task is
// claimed by the client's messageId before its letter is submitted, so a retried
// message/send finds it; the letter's piece names the task (outbound_mail.a2a_task_id),
// and the task's state is always read from that piece, never stored. A refused letter
// keeps its refusal (the REST error body) as a `rejected` task.
import type { Task } from '@a2a-js/sdk';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { canSee } from '../shared/scoping';
import { loadPhotos, MailRow, toMailRecord } from '../outbound-mail/record';
import type { A2aSkillId } from '../../domain/a2a/tasks';
import { agentMessage, letterTask, rejectedTask, taskOf, type A2aTaskRow, type PieceSnapshot } from './task-views';
import { sqlRows } from '../shared/sql';

export { letterTask, rejectedTask };
export type { A2aTaskRow, PieceSnapshot };

/**
 * The task of this caller's message, created on its first delivery: `created` false
 * means a retry of a message this key already sent (answered from the first task).
 */
export async function claimTask(
  deps: Deps,
  auth: AuthContext,
  m: { taskId: string; contextId: string; messageId: string; skill: A2aSkillId; agentId: string | null },
): Promise<{ row: A2aTaskRow; created: boolean }> {
  const [inserted] = await sqlRows<A2aTaskRow>(
    deps.db,
    `INSERT INTO a2a_tasks (id, context_id, member_id, agent_id, owner_key, test_mode, skill, message_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (owner_key, message_id) DO NOTHING RETURNING *`,
    [m.taskId, m.contextId, auth.memberId, m.agentId, auth.ownerKey, auth.testMode, m.skill, m.messageId],
  );
  if (inserted) return { row: inserted, created: true };
  const [existing] = await sqlRows<A2aTaskRow>(
    deps.db,
    `SELECT * FROM a2a_tasks WHERE owner_key = $1 AND message_id = $2`,
    [auth.ownerKey, m.messageId],
  );
  return { row: existing, created: false };
}

/** Keeps the refusal of a letter as its task's final answer. */
export async function rejectTask(
  deps: Deps,
  taskId: string,
  rejection: { status: number; body: Record<string, unknown> },
): Promise<A2aTaskRow> {
  const [row] = await sqlRows<A2aTaskRow>(
    deps.db,
    `UPDATE a2a_tasks SET rejection = $2, updated_at = now() WHERE id = $1 RETURNING *`,
    [taskId, JSON.stringify(rejection)],
  );
  return row;
}

/** The task if the caller may see it (its member, its agent, its environment), else null. */
export async function visibleTask(deps: Deps, auth: AuthContext, taskId: string): Promise<A2aTaskRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(taskId)) return null;
  const [row] = await sqlRows<A2aTaskRow>(deps.db, `SELECT * FROM a2a_tasks WHERE id = $1`, [taskId]);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) return null;
  return row;
}

/** The piece that carries out the task, if it was created. */
export async function pieceOfTask(deps: Deps, taskId: string): Promise<MailRow | null> {
  const [row] = await sqlRows<MailRow>(deps.db, `SELECT * FROM outbound_mail WHERE a2a_task_id = $1`, [taskId]);
  return row ?? null;
}

/** The task as tasks/get answers it: read from the piece now (fresh signed URLs). */
export async function currentTask(deps: Deps, task: A2aTaskRow): Promise<Task> {
  if (task.rejection) return rejectedTask(task);
  const piece = await pieceOfTask(deps, task.id);
  if (!piece) {
    // Claimed, and its submission has not finished (or died before storing the piece): a retry of the message completes it.
    return taskOf(
      task,
      'submitted',
      task.updated_at,
      agentMessage(task, 'submitting', [
        { kind: 'text', text: 'The letter is being submitted; send the same message again to finish it.' },
      ]),
      [],
    );
  }
  const photos = await loadPhotos(deps.db, [piece.id]);
  const record = await toMailRecord(deps, piece, photos.get(piece.id) ?? []);
  return letterTask(task, { ...piece, at: piece.updated_at, record: record as unknown as Record<string, unknown> });
}
