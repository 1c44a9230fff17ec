// Schemas of expected shipments (agent-specific, physical inbound custody). Query objects
// are strict like the packages' (unknown or repeated parameters are a 400).
import { z } from 'zod';
import { PG_INT_MAX, TestMode } from '../../schemas/common';
import { EXPECTED_SHIPMENT_STATUSES, PIECE_KINDS } from '../../../domain/physical-inbound/package-arrival';
import { ActionRequest, PageInfo, qEnum, qInt, qString, qUuid } from './physical-inbound.schemas';

const Instant = z.string().describe('ISO 8601 date-time');

export const AgentIdQuery = {
  agent_id: qUuid()
    .optional()
    .describe(
      "member keys: the agent (required on list and create; on one record, only that agent's is found); agent keys: ignored",
    ),
};
export const AgentScopedQuery = z.strictObject(AgentIdQuery);

export const ArrivalActionRequest = ActionRequest.describe(
  'an ActionRequest the facility gets when the piece arrives (forward: parameters carry the forwarding address)',
);

const Text = (max: number) => z.string().trim().min(1).max(max);
const TrackingNumber = Text(100).describe('as printed; matched ignoring case, spaces and punctuation');

const ShipmentFields = {
  carrier: Text(60).nullable().optional(),
  sender_name: Text(200).nullable().optional(),
  description: Text(500).nullable().optional(),
  kind: z.enum(PIECE_KINDS).nullable().optional(),
  expected_date: z.iso.date({ message: 'must be a date YYYY-MM-DD' }).nullable().optional(),
  notes: Text(2000).nullable().optional().describe("for the agent's own records"),
  on_arrival: ArrivalActionRequest.nullable().optional(),
};

export const ExpectedShipmentCreate = z.strictObject({ tracking_number: TrackingNumber, ...ShipmentFields });
export const ExpectedShipmentUpdate = z
  .strictObject({ tracking_number: TrackingNumber.optional(), ...ShipmentFields })
  .describe('fields sent replace the stored ones; null clears an optional field');

export const ExpectedShipmentListQuery = z.strictObject({
  ...AgentIdQuery,
  status: qEnum(EXPECTED_SHIPMENT_STATUSES).optional(),
  carrier: qString().max(60).optional().describe('any case'),
  tracking_number: qString().max(100).optional().describe('normalised like the stored ones'),
  limit: qInt(1, 100, 20),
  offset: qInt(0, PG_INT_MAX, 0),
});

/** A package action requested when a piece arrives, as stored (an expected shipment's or a rule's). */
export const ArrivalAction = z.object({
  action: z.string(),
  priority: z.string(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});

export const ExpectedShipment = z.object({
  object: z.literal('expected_shipment'),
  id: z.string(),
  agent_id: z.string(),
  mailbox_id: z.string().describe("the account's private mailbox when the shipment was announced"),
  status: z.enum(EXPECTED_SHIPMENT_STATUSES).describe('expected (open), received (linked to package_id) or cancelled'),
  carrier: z.string().nullable(),
  tracking_number: z.string(),
  sender_name: z.string().nullable(),
  description: z.string().nullable(),
  kind: z.enum(PIECE_KINDS).nullable(),
  expected_date: z.string().nullable().describe('YYYY-MM-DD'),
  notes: z.string().nullable(),
  on_arrival: ArrivalAction.nullable(),
  package_id: z.string().nullable().describe('the package that satisfied it'),
  arrival_action_id: z.string().nullable().describe('the package action requested on arrival'),
  version: z.number().int(),
  created_by: z.enum(['agent', 'member']),
  received_at: Instant.nullable(),
  cancelled_at: Instant.nullable(),
  created_at: Instant,
  updated_at: Instant,
});

export const ExpectedShipmentBody = z.object({ ...TestMode, expected_shipment: ExpectedShipment });
export const ExpectedShipmentList = z.object({
  ...TestMode,
  expected_shipments: z.array(ExpectedShipment),
  pagination: PageInfo,
});
export const ExpectedShipmentCancelled = ExpectedShipmentBody.extend({ already_cancelled: z.boolean() });
