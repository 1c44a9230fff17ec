// The owner's notification settings: the low-balance threshold, the recipients and the
// kinds each receives. Member keys only (the console's Notifications page runs these).
import { defineRoute, RouteDef } from '../../route';
import { IdParams } from '../../schemas/common';
import {
  NotificationRecipientResponse,
  NotificationSettingsResponse,
  RecipientPatch,
  RecipientRequest,
  SettingsPatch,
} from './notifications.schemas';
import {
  addRecipient,
  getSettings,
  removeRecipient,
  updateRecipient,
  updateSettings,
} from '../../../services/notifications/settings';

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/notifications/settings',
    summary: "The owner's email notification settings",
    description:
      'Who is emailed (the owner and confirmed extra recipients), which kinds each receives, and the low-balance threshold.',
    tags: ['Notifications'],
    responses: { 200: { description: 'Settings', schema: NotificationSettingsResponse } },
    handler: async ({ deps, auth }) => ({ body: { ...(await getSettings(deps, auth.memberId!)), test_mode: false } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/notifications/settings',
    summary: 'Change the low-balance threshold',
    tags: ['Notifications'],
    body: SettingsPatch,
    responses: {
      200: { description: 'Settings', schema: NotificationSettingsResponse },
      400: { description: 'Validation failed (fields[])' },
    },
    handler: async ({ deps, auth, body }) => ({
      body: { ...(await updateSettings(deps, auth.memberId!, body)), test_mode: false },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/notifications/recipients',
    summary: 'Add an extra recipient (it confirms by an emailed link)',
    description:
      'The address receives a confirmation email and nothing else until it opens the link (valid EMAIL_LINK_HOURS, once).',
    tags: ['Notifications'],
    body: RecipientRequest,
    responses: {
      201: {
        description: 'The recipient, pending confirmation',
        schema: NotificationRecipientResponse,
      },
      400: { description: 'Validation failed (fields[])' },
      409: { description: 'RECIPIENT_EXISTS or RECIPIENT_LIMIT' },
    },
    handler: async ({ deps, auth, body }) => ({
      status: 201,
      body: { recipient: await addRecipient(deps, auth.memberId!, body.email), test_mode: false },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/notifications/recipients/:id',
    summary: 'Switch kinds on or off for a recipient',
    tags: ['Notifications'],
    params: IdParams,
    body: RecipientPatch,
    responses: {
      200: { description: 'The recipient', schema: NotificationRecipientResponse },
      400: { description: 'Validation failed (fields[])' },
      404: { description: 'Recipient not found' },
    },
    handler: async ({ deps, auth, params, body }) => ({
      body: { recipient: await updateRecipient(deps, auth.memberId!, params.id, body), test_mode: false },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/notifications/recipients/:id',
    summary: 'Remove an extra recipient',
    tags: ['Notifications'],
    params: IdParams,
    responses: {
      200: { description: 'The removed recipient', schema: NotificationRecipientResponse },
      404: { description: 'Recipient not found' },
      409: { description: "RECIPIENT_IS_OWNER: the owner's own address stays" },
    },
    handler: async ({ deps, auth, params }) => ({
      body: { recipient: await removeRecipient(deps, auth.memberId!, params.id), test_mode: false },
    }),
  }),
];
