// Every workflow the worker registers, one module per business object.
export * from './outbound-mail/mail';
export * from './outbound-mail/proof-cleanup';
export * from './batches/batch';
export * from './batches/render';
export * from './webhooks/delivery';
export * from './webhooks/dispatch';
export * from './inbound-email/inbound-extraction';
export * from './physical-inbound/handling';
export * from './mail-runs/mail-run';
export * from './operations/maintenance';
export * from './billing/stripe-event';
export * from './billing/auto-reload';
export * from './billing/reconciler';
export * from './notifications/notifier';
