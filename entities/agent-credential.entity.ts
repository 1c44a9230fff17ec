import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An agent API key (`sk_agent_` or `sk_agent_test_`), stored only as a SHA-256 hash. */
@Entity('agent_credentials')
export class AgentCredential {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'agent_id' }) agentId: string;
  @Column({ type: 'uuid', name: 'member_id' }) memberId: string;
  @Column({ type: 'text', name: 'key_hash' }) keyHash: string;
  @Column({ type: 'text', name: 'key_prefix' }) keyPrefix: string;
  @Column({ type: 'text', array: true }) scopes: string[];
  @Column({ type: 'text', default: 'active' }) status: 'active' | 'revoked';
  @Column({ type: 'text' }) environment: 'live' | 'test';
  @Column({ type: 'timestamptz', name: 'expires_at', nullable: true }) expiresAt: Date | null;
  @Column({ type: 'boolean', name: 'force_approval', default: false }) forceApproval: boolean;
  @Column({ type: 'integer', name: 'max_daily_pieces', nullable: true }) maxDailyPieces: number | null;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
