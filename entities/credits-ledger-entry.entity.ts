import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Append-only credits ledger. The balance is the sum of amount_cents. entry_key is unique
 * (for example `debit:mail:<id>`, `refund:mail:<id>`), so each movement exists once.
 */
@Entity('credits_ledger')
export class CreditsLedgerEntry {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'member_id' }) memberId: string;
  @Column({ type: 'integer', name: 'amount_cents' }) amountCents: number;
  @Column({ type: 'text' }) kind: 'top_up' | 'debit' | 'refund' | 'adjustment';
  @Column({ type: 'text', name: 'entry_key' }) entryKey: string;
  @Column({ type: 'text', name: 'reference_type', nullable: true }) referenceType: string | null;
  @Column({ type: 'text', name: 'reference_id', nullable: true }) referenceId: string | null;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
