import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A member key (`sk_live_`), stored only as a SHA-256 hash. */
@Entity('member_api_keys')
export class MemberApiKey {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'member_id' }) memberId: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text', name: 'key_hash' }) keyHash: string;
  @Column({ type: 'text', name: 'key_prefix' }) keyPrefix: string;
  @Column({ type: 'text', default: 'prod' }) environment: 'prod' | 'test';
  @Column({ type: 'text', default: 'active' }) status: 'active' | 'revoked' | 'rotated';
  @Column({ type: 'timestamptz', name: 'expires_at', nullable: true }) expiresAt: Date | null;
  @Column({ type: 'uuid', name: 'rotated_to_id', nullable: true }) rotatedToId: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
