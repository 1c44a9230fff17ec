import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A software agent acting for a member, with its own keys and legacy webhook settings. */
@Entity('agents')
export class Agent {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'member_id' }) memberId: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text', name: 'display_name', nullable: true }) displayName: string | null;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'text', name: 'webhook_url', nullable: true }) webhookUrl: string | null;
  @Column({ type: 'boolean', name: 'webhook_enabled', default: true }) webhookEnabled: boolean;
  @Column({ type: 'text', array: true, name: 'webhook_event_types', default: () => "'{*}'" }) webhookEventTypes: string[];
  @Column({ type: 'text', name: 'webhook_auth_type', default: 'hmac' }) webhookAuthType: 'hmac' | 'bearer' | 'header';
  /** Encrypted at rest (domain/shared/secrets); never returned after creation. */
  @Column({ type: 'text', name: 'webhook_auth_token_enc', nullable: true }) webhookAuthTokenEnc: string | null;
  @Column({ type: 'text', name: 'webhook_auth_header_name', nullable: true }) webhookAuthHeaderName: string | null;
  @Column({ type: 'text', name: 'webhook_payload_format', default: 'standard' }) webhookPayloadFormat: 'standard' | 'wrapped';
  @Column({ type: 'text', name: 'webhook_signing_key_id', nullable: true }) webhookSigningKeyId: string | null;
  /** Encrypted at rest: HMAC signing needs the raw secret, so it cannot be a hash. */
  @Column({ type: 'text', name: 'webhook_signing_secret_enc', nullable: true }) webhookSigningSecretEnc: string | null;
  /** Set when the agent is archived (DELETE /v1/agents/{id}); archived agents are invisible. */
  @Column({ type: 'timestamptz', name: 'deleted_at', nullable: true }) deletedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
