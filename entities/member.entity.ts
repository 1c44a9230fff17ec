import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An account holder: owns agents, keys, credits and every record its agents create. */
@Entity('members')
export class Member {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'text' }) email: string;
  @Column({ type: 'text', name: 'full_name' }) fullName: string;
  @Column({ type: 'text', name: 'password_hash', nullable: true }) passwordHash: string | null;
  @Column({ type: 'text', default: 'active' }) status: 'active' | 'suspended';
  @Column({ type: 'boolean', name: 'email_verified', default: false }) emailVerified: boolean;
  @Column({ type: 'boolean', default: false }) business: boolean;
  @Column({ type: 'boolean', name: 'agent_auto_fill', default: false }) agentAutoFill: boolean;
  @Column({ type: 'boolean', name: 'packages_enabled', default: false }) packagesEnabled: boolean;
  @Column({ type: 'text', name: 'return_name', nullable: true }) returnName: string | null;
  @Column({ type: 'text', name: 'return_company', nullable: true }) returnCompany: string | null;
  @Column({ type: 'text', name: 'return_line1', nullable: true }) returnLine1: string | null;
  @Column({ type: 'text', name: 'return_line2', nullable: true }) returnLine2: string | null;
  @Column({ type: 'text', name: 'return_city', nullable: true }) returnCity: string | null;
  @Column({ type: 'text', name: 'return_state', nullable: true }) returnState: string | null;
  @Column({ type: 'text', name: 'return_zip', nullable: true }) returnZip: string | null;
  @Column({ type: 'integer', name: 'per_transaction_limit_cents', nullable: true }) perTransactionLimitCents: number | null;
  @Column({ type: 'integer', name: 'daily_spend_limit_cents', nullable: true }) dailySpendLimitCents: number | null;
  /** Account overrides of the default price constants (see domain/outbound-mail/pricing). */
  @Column({ type: 'jsonb', name: 'pricing_overrides', nullable: true }) pricingOverrides: Record<string, number> | null;
  /** Custom API rate (requests/minute per key) for enterprise accounts; null = standard 100. */
  @Column({ type: 'integer', name: 'rate_limit_per_minute', nullable: true }) rateLimitPerMinute: number | null;
  /** What the human said they need at signup. */
  @Column({ type: 'text', nullable: true }) needs: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
