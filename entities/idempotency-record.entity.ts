import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The first answer to a request sent with an Idempotency-Key, replayed to retries. */
@Entity('idempotency_records')
export class IdempotencyRecord {
  @PrimaryGeneratedColumn('uuid') id: string;
  /** Who sent it: `cred:<id>`, `mkey:<id>` or `facility:<id>`; keys never collide across callers. */
  @Column({ type: 'text', name: 'owner_key' }) ownerKey: string;
  @Column({ type: 'text', name: 'idempotency_key' }) idempotencyKey: string;
  @Column({ type: 'text', name: 'operation' }) operation: string;
  @Column({ type: 'text', name: 'request_hash' }) requestHash: string;
  @Column({ type: 'text', default: 'in_progress' }) state: 'in_progress' | 'completed';
  @Column({ type: 'integer', name: 'response_status', nullable: true }) responseStatus: number | null;
  @Column({ type: 'jsonb', name: 'response_body', nullable: true }) responseBody: unknown;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt: Date;
}
