// Signal, update and query definitions shared by workflows and the API, one module per area.
export * from './outbound-mail/contracts';
export * from './batches/contracts';
export * from './contracts/webhook-delivery';
export * from './contracts/webhook-dispatch';
export * from './contracts/inbound-extraction';
export * from './contracts/handling';
export * from './mail-runs/contracts';
export * from './contracts/maintenance';
