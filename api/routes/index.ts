// Every REST route of the API, one module per area.
import type { RouteDef } from '../route';
import { publicRoutes } from './accounts/public';
import { routes as agents } from './accounts/agents';
import { routes as keys } from './accounts/keys';
import { routes as mail } from './outbound-mail/mail';
import { routes as batches } from './batches/batches';
import { routes as webhooks } from './webhooks/agent-webhooks';
import { routes as webhookEndpoints } from './webhooks/endpoints';
import { routes as inboundContext } from './inbound-email/inbound-context';
import { routes as packages } from './physical-inbound/packages';
import { routes as expectedShipments } from './physical-inbound/expected-shipments';
import { routes as mailboxRules } from './physical-inbound/mailbox-rules';
import { routes as inboundItems } from './physical-inbound/inbound-items';
import { routes as agentInbox } from './physical-inbound/agent-inbox';
import { routes as facilityMail } from './outbound-mail/facility-mail';
import { routes as facilityBatches } from './batches/facility-batches';
import { routes as facilityInbound } from './physical-inbound/facility-inbound';
import { routes as mailRuns } from './mail-runs/mail-runs';
import { routes as support } from './support/support';
import { routes as billing } from './billing/billing';
import { routes as facilityMessages } from './support/facility-messages';
import { routes as notifications } from './notifications/notifications';
import { routes as templates } from './templates/templates';

export const allRoutes: RouteDef[] = [
  ...publicRoutes(() => allRoutes),
  ...agents,
  ...keys,
  ...mail,
  ...batches,
  ...webhooks,
  ...webhookEndpoints,
  ...inboundContext,
  ...packages,
  ...expectedShipments,
  ...mailboxRules,
  ...inboundItems,
  ...agentInbox,
  ...facilityMail,
  ...facilityBatches,
  ...facilityInbound,
  ...mailRuns,
  ...support,
  ...billing,
  ...facilityMessages,
  ...notifications,
  ...templates,
];
