// Schemas of the owner's notification settings (member keys only).
import { z } from 'zod';
import { NOTIFICATION_KINDS } from '../../../domain/notifications/kinds';
import { PG_INT_MAX, TestMode } from '../../schemas/common';

export const NotificationKinds = z
  .object(
    Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, z.boolean()])) as Record<
      (typeof NOTIFICATION_KINDS)[number],
      z.ZodBoolean
    >,
  )
  .describe('each kind: true when the recipient is told of it');

export const NotificationRecipient = z.object({
  id: z.string(),
  email: z.string(),
  owner: z.boolean().describe("the member's own address (cannot be removed)"),
  status: z
    .enum(['active', 'pending_confirmation'])
    .describe('pending_confirmation: receives nothing until it opens the link emailed to it'),
  kinds: NotificationKinds,
  created_at: z.string(),
  confirmed_at: z.string().nullable(),
});

export const NotificationSettings = z.object({
  low_balance_threshold_cents: z
    .number()
    .int()
    .describe('low_balance is sent when a debit takes the balance below this'),
  kinds: z.array(z.object({ kind: z.enum(NOTIFICATION_KINDS), description: z.string() })),
  recipients: z.array(NotificationRecipient).describe('the owner first, then extra recipients'),
  max_extra_recipients: z.number().int(),
});

export const NotificationSettingsResponse = NotificationSettings.extend(TestMode);

export const NotificationRecipientResponse = z.object({ recipient: NotificationRecipient, ...TestMode });

export const SettingsPatch = z.strictObject({
  low_balance_threshold_cents: z
    .number()
    .int()
    .min(0, { message: 'must be an integer >= 0 (0 turns the low-balance email off)' })
    .max(PG_INT_MAX, { message: `must be at most ${PG_INT_MAX}` }),
});

export const RecipientRequest = z.strictObject({
  email: z.email({ message: 'must be an email address' }).max(254),
});

export const RecipientPatch = z.strictObject({
  kinds: z
    .strictObject(
      Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, z.boolean().optional()])) as Record<
        (typeof NOTIFICATION_KINDS)[number],
        z.ZodOptional<z.ZodBoolean>
      >,
    )
    .describe('kinds to switch on (true) or off (false); kinds not named stay as they are'),
});
