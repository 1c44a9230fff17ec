import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One saved version of an agent's standing-instructions document; the highest is current. */
@Entity('instructions_versions')
export class InstructionsVersion {
  @PrimaryColumn({ type: 'uuid', name: 'agent_id' }) agentId: string;
  @PrimaryColumn({ type: 'integer' }) version: number;
  @Column({ type: 'text' }) text: string;
  @Column({ type: 'text' }) hash: string;
  @Column({ type: 'text', default: 'renter' }) source: 'renter' | 'platform_fallback';
  @Column({ type: 'text', nullable: true }) reason: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
