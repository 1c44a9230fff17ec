// A2A push notification configs (tasks/pushNotificationConfig/*, and the config a
// message/send carries) and their deliveries. A config is a receiver of its letter's
// mail.* events in the existing webhook machinery: fanOut (services/webhooks/deliveries.ts)
// adds one delivery per live config of the piece's task (target `a2a:<row id>`, type
// a2a_push), and the receiver's dispatcher sends it with the same URL rules (public HTTPS;
// private addresses refused, at set time and at every attempt), deadline, retries and
// backoff as an agent webhook. The body is the task as of the event; the
// headers carry the client's token (X-A2A-Notification-Token, as the SDK's own sender
// does), its Bearer credentials when it named that scheme, and Standard Webhooks
// signatures under a secret minted per config and shown once.
import type { PushNotificationConfig, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { assertWebhookTarget } from '../webhooks/targets';
import { errors } from '../../domain/shared/errors';
import { decryptSecret, encryptSecret } from '../../domain/shared/secrets';
import { generateEndpointSecret, standardWebhookHeaders } from '../../domain/webhooks/signatures';
import { fitPayload } from '../../domain/webhooks/events';
import type { MailStatusName } from '../../domain/workflow-safe/mail-rules';
import { A2aTaskRow, letterTask } from './task-views';
import { sqlAffected, sqlRows, sqlRun } from '../shared/sql';

/** The header the SDK's DefaultPushNotificationSender puts the client's token in. */
export const NOTIFICATION_TOKEN_HEADER = 'x-a2a-notification-token';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Configs one task may have at once. */
export const MAX_PUSH_CONFIGS_PER_TASK = 5;

interface PushConfigRow {
  id: string;
  config_id: string;
  task_id: string;
  member_id: string;
  url: string;
  token_enc: string | null;
  auth_schemes: string[];
  credentials_enc: string | null;
  secret_enc: string;
  created_at: Date;
  deleted_at: Date | null;
}

function view(row: PushConfigRow): TaskPushNotificationConfig {
  const config: PushNotificationConfig = { id: row.config_id, url: row.url };
  // The token and credentials are write-only, like every secret the API keeps.
  if (row.auth_schemes.length) config.authentication = { schemes: row.auth_schemes };
  return { taskId: row.task_id, pushNotificationConfig: config };
}

/** The answer to a set: the config, plus its signing secret (shown this once). */
export type SetPushConfigAnswer = TaskPushNotificationConfig & { signingSecret: string };

/**
 * Stores a task's config (replacing one of the same id). The URL must pass the webhook URL
 * rules now; every attempt checks them again against what the host resolves to.
 */
export async function setPushConfig(
  deps: Deps,
  auth: AuthContext,
  task: A2aTaskRow,
  config: PushNotificationConfig,
  path = 'pushNotificationConfig',
): Promise<SetPushConfigAnswer> {
  if (typeof config?.url !== 'string' || !config.url)
    throw errors.validation([{ path: `${path}.url`, message: 'required' }]);
  if (config.token !== undefined && (typeof config.token !== 'string' || config.token.length > 1024))
    throw errors.validation([{ path: `${path}.token`, message: 'must be a string of at most 1024 characters' }]);
  const schemes = config.authentication?.schemes ?? [];
  if (!Array.isArray(schemes) || schemes.some((s) => typeof s !== 'string'))
    throw errors.validation([{ path: `${path}.authentication.schemes`, message: 'must be an array of strings' }]);
  await assertWebhookTarget(deps, config.url, 'agent_webhook', `${path}.url`);
  const key = deps.config.appEncryptionKey;
  const secret = generateEndpointSecret();
  const configId = config.id && typeof config.id === 'string' ? config.id.slice(0, 200) : task.id;
  const row = await deps.db.transaction(async (tx) => {
    await sqlRun(tx, `SELECT id FROM a2a_tasks WHERE id = $1 FOR UPDATE`, [task.id]);
    await sqlRun(
      tx,
      `UPDATE a2a_push_configs SET deleted_at = now() WHERE task_id = $1 AND config_id = $2 AND deleted_at IS NULL`,
      [task.id, configId],
    );
    const [{ n }] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM a2a_push_configs WHERE task_id = $1 AND deleted_at IS NULL`,
      [task.id],
    );
    if (n >= MAX_PUSH_CONFIGS_PER_TASK)
      throw errors.validation([
        {
          path,
          message: `a task has at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs; delete one first`,
        },
      ]);
    const [inserted] = await sqlRows<PushConfigRow>(
      tx,
      `INSERT INTO a2a_push_configs (config_id, task_id, member_id, url, token_enc, auth_schemes, credentials_enc, secret_enc)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        configId,
        task.id,
        auth.memberId,
        config.url,
        config.token ? encryptSecret(key, config.token) : null,
        schemes,
        config.authentication?.credentials ? encryptSecret(key, config.authentication.credentials) : null,
        encryptSecret(key, secret),
      ],
    );
    return inserted;
  });
  return { ...view(row), signingSecret: secret };
}

async function liveConfigs(deps: Deps, taskId: string): Promise<PushConfigRow[]> {
  return sqlRows<PushConfigRow>(
    deps.db,
    `SELECT * FROM a2a_push_configs WHERE task_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
    [taskId],
  );
}

export async function listPushConfigs(deps: Deps, task: A2aTaskRow): Promise<TaskPushNotificationConfig[]> {
  return (await liveConfigs(deps, task.id)).map(view);
}

/** One config by id (the task's own id names the config set without one); null when there is none. */
export async function getPushConfig(
  deps: Deps,
  task: A2aTaskRow,
  configId?: string,
): Promise<TaskPushNotificationConfig | null> {
  const rows = await liveConfigs(deps, task.id);
  const row = configId ? rows.find((r) => r.config_id === configId) : rows[0];
  return row ? view(row) : null;
}

/** Deletes a config; deliveries not yet sent stop (the config is gone when they are attempted). */
export async function deletePushConfig(deps: Deps, task: A2aTaskRow, configId: string): Promise<boolean> {
  const deleted = await sqlAffected(
    deps.db,
    `UPDATE a2a_push_configs SET deleted_at = now() WHERE task_id = $1 AND config_id = $2 AND deleted_at IS NULL`,
    [task.id, configId],
  );
  return deleted > 0;
}

/** The piece a mail.* event names, whose task's push configs receive it; null for other events and for synthetic and sample mail events, which name no stored piece. */
export function pushedPieceOf(event: { event_type: string; payload: Record<string, unknown> }): string | null {
  const pieceId = event.payload.outbound_mail_id;
  return event.event_type.startsWith('mail.') && typeof pieceId === 'string' && UUID.test(pieceId) ? pieceId : null;
}

/**
 * A scalar subquery: the ids (a JSON array) of every live push config of the task of the
 * piece `pieceParam` names. The webhook fan-out reads it with its other receivers in one statement.
 */
export function pushConfigIdsOfPieceSql(pieceParam: string): string {
  return `(SELECT coalesce(json_agg(c.id), '[]'::json) FROM a2a_push_configs c JOIN outbound_mail m ON m.a2a_task_id = c.task_id
      WHERE m.id = ${pieceParam} AND c.deleted_at IS NULL)`;
}

/** The target of a push delivery to a config row. */
export const pushTarget = (configRowId: string) => `a2a:${configRowId}`;

/** What one attempt of a push delivery sends, or why it stops. */
export type PushTarget =
  { stop: string } | { target: { url: string; body: string; headers: (timestamp: number) => Record<string, string> } };

/**
 * The request of a push delivery: the task as of the event (the event's status and payload),
 * the client's token and credentials, and the signatures.
 */
export async function pushDeliveryTarget(
  deps: Deps,
  target: string,
  event: { id: string; payload: Record<string, unknown>; created_at: Date },
): Promise<PushTarget> {
  const [config] = await sqlRows<PushConfigRow>(deps.db, `SELECT * FROM a2a_push_configs WHERE id = $1`, [
    target.slice('a2a:'.length),
  ]);
  if (!config || config.deleted_at) return { stop: 'push_config_deleted: the push notification config was deleted' };
  const [task] = await sqlRows<A2aTaskRow>(deps.db, `SELECT * FROM a2a_tasks WHERE id = $1`, [config.task_id]);
  const render = (p: Record<string, unknown>) =>
    JSON.stringify(
      letterTask(task, {
        status: event.payload.status as MailStatusName,
        tracking_number: event.payload.tracking_number as string | null,
        carrier: event.payload.carrier as string | null,
        error_message: event.payload.error_message as string | null,
        at: event.created_at,
        record: p,
      }),
    );
  const fitted = fitPayload(event.payload, render);
  if (!fitted) return { stop: 'payload_too_large: the request body would exceed 64 KiB' };
  const key = deps.config.appEncryptionKey;
  const token = config.token_enc ? decryptSecret(key, config.token_enc) : null;
  const credentials = config.credentials_enc ? decryptSecret(key, config.credentials_enc) : null;
  const bearer = config.auth_schemes.some((s) => s.toLowerCase() === 'bearer') && credentials;
  const secret = decryptSecret(key, config.secret_enc);
  return {
    target: {
      url: config.url,
      body: fitted.body,
      headers: (ts) => ({
        ...standardWebhookHeaders([secret], event.id, ts, fitted.body),
        ...(token ? { [NOTIFICATION_TOKEN_HEADER]: token } : {}),
        ...(bearer ? { authorization: `Bearer ${credentials}` } : {}),
      }),
    },
  };
}
