// All activities, built from per-area factories that close over the process's Deps.
import type { Deps } from '../services/shared/deps';
import { createMailActivities } from './outbound-mail/mail';
import { createPrintProofActivities } from './outbound-mail/print-proof';
import { createBatchActivities } from './batches/batch';
import { createBatchRenderActivities } from './batches/render';
import { createScheduledMailActivities } from './outbound-mail/scheduled-send';
import { createScheduledBatchActivities } from './batches/scheduled-send';
import { createWebhookDeliveryActivities } from './webhooks/delivery';
import { createInboundExtractionActivities } from './inbound-email/inbound-extraction';
import { createHandlingActivities } from './physical-inbound/handling';
import { createMailRunActivities } from './mail-runs/mail-run';
import { createMaintenanceActivities } from './operations/maintenance';
import { createOperationsActivities } from './operations/operations';
import { createPaymentActivities } from './billing/payments';
import { createNotificationActivities } from './notifications/notifier';

export function createActivities(deps: Deps) {
  return {
    ...createMailActivities(deps),
    ...createPrintProofActivities(deps),
    ...createBatchActivities(deps),
    ...createBatchRenderActivities(deps),
    ...createScheduledMailActivities(deps),
    ...createScheduledBatchActivities(deps),
    ...createWebhookDeliveryActivities(deps),
    ...createInboundExtractionActivities(deps),
    ...createHandlingActivities(deps),
    ...createMailRunActivities(deps),
    ...createMaintenanceActivities(deps),
    ...createOperationsActivities(deps),
    ...createPaymentActivities(deps),
    ...createNotificationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
