// Signal, update and query definitions shared by workflows and the API, one module per area.
export * from './outbound-mail/contracts';
export * from './batches/contracts';
export * from './webhooks/contracts';
export * from './inbound-email/contracts';
export * from './physical-inbound/contracts';
export * from './mail-runs/contracts';
export * from './operations/contracts';
export * from './billing/contracts';
