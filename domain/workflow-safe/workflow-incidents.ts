// The kinds of workflow_incidents rows, shared by the workflows that record them (a
// refused cancellation request) and the services that record and list them.

export type IncidentObjectType = 'outbound_mail' | 'batch' | 'mail_run' | 'handling';
export type IncidentKind = 'cancel_refused' | 'workflow_closed' | 'lost_start';
/** refused: the workflow kept running; restarted/started: the reconciler re-drove it; reported: it needs an operator. */
export type IncidentAction = 'refused' | 'restarted' | 'started' | 'reported';
