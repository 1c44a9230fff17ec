// The A2A request handler for one authenticated request: the SDK's JsonRpcTransportHandler
// parses the JSON-RPC envelope, dispatches the methods here and maps A2AErrors to their
// protocol codes (unknown methods: -32601). message/send runs a skill (skills.ts);
// tasks/get reads the letter's piece; tasks/cancel is DELETE /v1/mail/{id} (refunded once;
// -32002 once printing started); push notification configs are stored for the webhook
// machinery to deliver. Streaming is not offered (the card says so), so message/stream and
// tasks/resubscribe are refused by the transport as unsupported operations.
import type {
  AgentCard,
  DeleteTaskPushNotificationConfigParams,
  GetTaskPushNotificationConfigParams,
  ListTaskPushNotificationConfigParams,
  Message,
  MessageSendParams,
  Task,
  TaskArtifactUpdateEvent,
  TaskIdParams,
  TaskPushNotificationConfig,
  TaskQueryParams,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { A2AError, A2ARequestHandler } from '@a2a-js/sdk/server';
import type { AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import { ApiError } from '../../domain/shared/errors';
import { ENDPOINT_ACCESS } from '../../domain/shared/access';
import { FINAL_TASK_STATES } from '../../domain/a2a/tasks';
import { assertInstructionsVersion } from '../../services/accounts/instructions';
import { cancelMail } from '../../services/outbound-mail/cancel';
import { currentTask, pieceOfTask, visibleTask } from '../../services/a2a/tasks';
import type { A2aTaskRow } from '../../services/a2a/tasks';
import {
  deletePushConfig,
  getPushConfig,
  listPushConfigs,
  setPushConfig,
  SetPushConfigAnswer,
} from '../../services/a2a/push-notifications';
import { authorize } from '../router';
import { a2aErrorOf, refusalError, runSkill, skillOf } from './skills';

type Json = Record<string, unknown>;

function taskIdOf(params: { id?: unknown; taskId?: unknown } | undefined): string {
  const id = params?.id ?? params?.taskId;
  if (typeof id !== 'string' || !id) throw A2AError.invalidParams('params.id must name a task');
  return id;
}

export class PostalA2AHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: Deps,
    private readonly auth: AuthContext,
    private readonly card: AgentCard,
    /** X-Service-MD-Version as a header, for clients that send it there rather than in the DataPart. */
    private readonly versionHeader?: string,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw A2AError.authenticatedExtendedCardNotConfigured();
  }

  async sendMessage(params: MessageSendParams): Promise<Message | Task> {
    return this.guard(async () => {
      const message = params?.message;
      if (
        !message ||
        message.kind !== 'message' ||
        !Array.isArray(message.parts) ||
        typeof message.messageId !== 'string'
      )
        throw A2AError.invalidParams('params.message must be a message with a messageId and parts');
      if (message.taskId)
        throw A2AError.invalidParams(
          'Tasks take no further messages: an approval comes from the account owner; send a new message for a new letter.',
        );
      return runSkill(skillOf(message, params.metadata), {
        deps: this.deps,
        auth: this.auth,
        message,
        versionHeader: this.versionHeader,
        pushNotificationConfig: params.configuration?.pushNotificationConfig,
      });
    });
  }

  // Never reached: the transport refuses streaming methods for a card without streaming.
  async *sendMessageStream(): AsyncGenerator<Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent> {
    throw A2AError.unsupportedOperation('message/stream');
  }

  async *resubscribe(): AsyncGenerator<Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent> {
    throw A2AError.unsupportedOperation('tasks/resubscribe');
  }

  async getTask(params: TaskQueryParams): Promise<Task> {
    return this.guard(async () => currentTask(this.deps, await this.task(taskIdOf(params))));
  }

  /** DELETE /v1/mail/{id}: refunded once; a repeat answers the canceled task; -32002 once printing started. */
  async cancelTask(params: TaskIdParams): Promise<Task> {
    return this.guard(async () => {
      const task = await this.task(taskIdOf(params));
      const now = await currentTask(this.deps, task);
      // Already canceled (by a concurrent cancel, or DELETE /v1/mail/{id}): nothing more is refunded.
      if (now.status.state === 'canceled')
        return { ...now, metadata: { ...now.metadata, refunded_credits_cents: 0, already_cancelled: true } };
      const piece = await pieceOfTask(this.deps, task.id);
      if (!piece || FINAL_TASK_STATES.includes(now.status.state as never))
        throw new A2AError(-32002, `Task cannot be canceled: it is ${now.status.state}`, {
          state: now.status.state,
        });
      authorize(ENDPOINT_ACCESS['DELETE /v1/mail/:id'], this.auth, '/v1/mail/:id');
      await assertInstructionsVersion(
        this.deps,
        this.auth,
        (params.metadata?.service_md_version as string | number | undefined) ?? this.versionHeader,
      );
      let result: Json;
      try {
        // One Update id per task, so a retried cancel is applied (and refunded) once.
        result = await cancelMail(this.deps, this.auth, piece.id, { idempotencyKey: `a2a:cancel:${task.id}` });
      } catch (err) {
        if (err instanceof ApiError && err.status === 409)
          throw new A2AError(-32002, err.message, { status: 409, ...err.toBody() });
        throw err;
      }
      const after = await currentTask(this.deps, task);
      return {
        ...after,
        metadata: {
          ...after.metadata,
          refunded_credits_cents: result.refunded_credits_cents,
          credit_balance_cents: result.credit_balance_cents,
          already_cancelled: result.already_cancelled,
        },
      };
    });
  }

  async setTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<SetPushConfigAnswer> {
    return this.guard(async () => {
      const task = await this.task(taskIdOf(params));
      if (task.skill !== 'send_letter' || task.rejection)
        throw A2AError.invalidParams('Only the task of a letter sent (send_letter, not rejected) has updates to push');
      return setPushConfig(this.deps, this.auth, task, params.pushNotificationConfig);
    });
  }

  async getTaskPushNotificationConfig(
    params: TaskIdParams | GetTaskPushNotificationConfigParams,
  ): Promise<TaskPushNotificationConfig> {
    return this.guard(async () => {
      const task = await this.task(taskIdOf(params));
      const configId = (params as GetTaskPushNotificationConfigParams).pushNotificationConfigId;
      const config = await getPushConfig(this.deps, task, configId);
      if (!config)
        throw A2AError.invalidParams(`No push notification config${configId ? ` ${configId}` : ''} on this task`);
      return config;
    });
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigParams,
  ): Promise<TaskPushNotificationConfig[]> {
    return this.guard(async () => listPushConfigs(this.deps, await this.task(taskIdOf(params))));
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigParams): Promise<void> {
    return this.guard(async () => {
      const task = await this.task(taskIdOf(params));
      if (!(await deletePushConfig(this.deps, task, params.pushNotificationConfigId)))
        throw A2AError.invalidParams(`No push notification config ${params.pushNotificationConfigId} on this task`);
    });
  }

  /** The caller's task (its member, agent and environment), or the protocol's task-not-found. */
  private async task(id: string): Promise<A2aTaskRow> {
    const task = await visibleTask(this.deps, this.auth, id);
    if (!task) throw A2AError.taskNotFound(id);
    return task;
  }

  /** REST refusals become JSON-RPC errors with the REST body; anything else is logged and hidden. */
  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof A2AError) throw err;
      if (err instanceof ApiError) throw a2aErrorOf(err);
      this.deps.log.error({ err }, 'a2a request failed');
      throw refusalError(500, {
        error: 'Internal error',
        code: 'INTERNAL',
        retryable: true,
        suggested_action: 'Retry later with the same messageId.',
      });
    }
  }
}
